"""The part of ingest that needs no vault: reading an input file and checking a manifest.

`store.ingest` prepares files with these functions in its own process, and
`store.ingestpool`'s worker processes run exactly the same functions on other files of
the same call: there is one parser and one set of checks of signed bytes, wherever they
run. A worker gets only what `ManifestContext` holds (public producer keys, the purged
digests, the ingest time) and no vault, data key or custodian key; what it prepares
crosses back as `marshal` data (`to_wire`), which keeps the JSON values exactly as the
strict parser made them and is several times cheaper to load than a pickle of the
records. Revisions and deletions are checked against the vault's revisions, so they are
always prepared by `store.ingest` itself.
"""

from __future__ import annotations

import marshal
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.canonical import member_path, parse_strict
from store.crypto import sha256_hex
from store.dsse import Envelope, verify_envelope
from store.entries import MANIFEST_TYPE, EntryKind, FaultJSON, LogEntry, Statement, make_entry
from store.errors import InputError, SignatureError, StoreError
from store.gcpause import no_cycle_collection
from store.records import MANIFEST_V2, Manifest
from store.schemacheck import validate
from store.textrules import id_problem
from store.timeutil import instant
from store.words import ModelInput

if TYPE_CHECKING:
    from store.payloads import ManifestPayloadJSON
    from store.roster import ProducerKey

__all__ = [
    "MAX_INPUT_BYTES",
    "Fault",
    "ManifestContext",
    "Prepared",
    "check_ids",
    "from_wire",
    "instant_at",
    "load_chunk",
    "load_input",
    "manifest_faults",
    "prepare_chunk",
    "prepare_file",
    "prepare_manifest",
    "read_input_file",
    "to_wire",
]

#: the largest input file ingest reads (a manifest with its texts, or a revision):
#: DuckDB and the encryption hold a text whole, and a larger one is almost surely not
#: one document; refusing it names the file instead of running out of memory
MAX_INPUT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Fault:
    file: str
    answer_id: str
    path: str
    code: str
    message: str

    def to_json(self) -> FaultJSON:
        return {"path": self.path, "code": self.code, "message": self.message}


@dataclass(frozen=True)
class ManifestContext:
    """What checking a manifest needs besides the file: picklable, with no secret in it."""

    #: key id -> the producer key as the roster folded it (validity window, name)
    keys: Mapping[str, ProducerKey]
    #: digest -> seq of its tombstone: a purge is final, so these texts are never stored again
    tombstoned: Mapping[str, int]
    #: the ingest time every entry of the call is annotated with
    now: str
    #: key id -> Ed25519 public key, the form `verify_envelope` takes
    ed25519: Mapping[str, bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ed25519", {k: v.ed25519 for k, v in self.keys.items()})


def instant_at(value: str, file: str, path: str) -> datetime:
    """An RFC 3339 time as an aware UTC datetime; the schema's pattern alone admits 25:61."""
    try:
        return instant(value)
    except ValueError as exc:
        raise InputError(file, path, f"not a valid RFC 3339 date-time with offset: {value!r}") from exc


def read_input_file(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input file, refused at once unless it is a regular file of at most
    `limit` bytes: a FIFO or device would block (holding the vault lock) or never end."""
    file = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(file, "$", f"cannot read file ({exc.strerror})") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                file, "$", "not a regular file (a FIFO, device or directory); refusing to read it"
            )
        if st.st_size > limit:
            raise InputError(
                file, "$", f"file is {st.st_size} bytes; the limit for one input file is {limit} bytes"
            )
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > limit:
                raise InputError(file, "$", f"file grew past the {limit}-byte limit while being read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(file, "$", f"cannot read file ({exc.strerror})") from exc
    finally:
        os.close(fd)


#: JSON paths of the manifest's identifiers: shown verbatim everywhere, so no hidden characters
_ID_FIELDS: tuple[tuple[str, ...], ...] = (
    ("run_id",),
    ("answer_id",),
    ("collection",),
    ("producer", "system"),
    ("producer", "version"),
)
_PASSAGE_ID_FIELDS: tuple[tuple[str, ...], ...] = (
    ("passage_id",),
    ("collection",),
    ("source", "system"),
    ("source", "revision"),
    ("document", "document_id"),
    ("document", "revision"),
    ("document", "backend"),
    ("chunk", "chunk_id"),
    ("chunk", "pipeline_version"),
    ("normalizer_version",),
    ("derived_from",),
)


def check_ids(file: str, prefix: str, doc: Mapping[str, object], fields: tuple[tuple[str, ...], ...]) -> None:
    for path in fields:
        value: Any = doc
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str):
            problem = id_problem(value)
            if problem:
                raise InputError(file, prefix + "." + ".".join(path), f"identifier {problem}")


def _check_model_inputs(file: str, payload: ManifestPayloadJSON) -> None:
    """A v2 manifest's rules beyond its schema: a `not_sent` passage has no model-input
    digest (the model was given nothing of it) and every other one has one; no citation
    rests on a `not_sent` passage. Each refuses the whole file, naming the path."""
    at = "$.envelope.payload"
    unsent = set()
    for i, ps in enumerate(payload["passages"]):
        state, digest = ps["model_input"], ps.get("model_input_sha256")
        if state == ModelInput.NOT_SENT and digest is not None:
            raise InputError(
                file,
                f"{at}.passages[{i}].model_input_sha256",
                "a passage marked not_sent has no model input: the model was given nothing of it",
            )
        if state != ModelInput.NOT_SENT and digest is None:
            raise InputError(file, f"{at}.passages[{i}]", f"model_input {state!r} needs model_input_sha256")
        if state == ModelInput.NOT_SENT:
            unsent.add(ps["passage_id"])
    for i, c in enumerate(payload["citations"]):
        for j, pid in enumerate(c["passage_ids"]):
            if pid in unsent:
                raise InputError(
                    file,
                    f"{at}.citations[{i}].passage_ids[{j}]",
                    f"passage {pid!r} is marked not_sent: the model never saw it, so no part of the "
                    "answer can rest on it",
                )


def _check_manifest_ids(file: str, p: ManifestPayloadJSON) -> None:
    # One C-speed test over every id of a (schema-valid) manifest; only a manifest that
    # fails it is walked field by field to name the field.
    ids = [p["run_id"], p["answer_id"], p["collection"], p["producer"]["system"], p["producer"]["version"]]
    for ps in p["passages"]:
        doc, src, chunk = ps["document"], ps["source"], ps["chunk"]
        ids += (ps["passage_id"], ps["collection"], src["system"], src["revision"], doc["document_id"])
        ids += (doc["revision"], doc["backend"], chunk["chunk_id"], chunk["pipeline_version"])
        ids += (ps["normalizer_version"], ps.get("derived_from") or "")
    for c in p["citations"]:
        ids += c["passage_ids"]
    ids += p.get("lineage", [])
    if all(type(v) is str for v in ids) and "".join(ids).isprintable():
        return
    base = "$.envelope.payload"
    check_ids(file, base, p, _ID_FIELDS)
    for i, ps in enumerate(p["passages"]):
        check_ids(file, f"{base}.passages[{i}]", ps, _PASSAGE_ID_FIELDS)
    for i, c in enumerate(p["citations"]):
        for j, pid in enumerate(c["passage_ids"]):
            if id_problem(pid):
                raise InputError(
                    file, f"{base}.citations[{i}].passage_ids[{j}]", f"identifier {id_problem(pid)}"
                )
    for i, lid in enumerate(p.get("lineage", [])):
        if id_problem(lid):
            raise InputError(file, f"{base}.lineage[{i}]", f"identifier {id_problem(lid)}")


@dataclass
class Prepared:
    """One input file checked and made into the entry (and texts) it appends."""

    file: str
    kind: EntryKind
    ident: str
    entry: LogEntry | Statement
    texts: list[tuple[str, bytes]]
    faults: list[Fault]


def load_input(path: Path) -> tuple[str, dict[str, Any]]:
    file = str(path)
    doc = parse_strict(read_input_file(path), file)
    if not isinstance(doc, dict):
        raise InputError(file, "$", "expected a JSON object")
    return file, doc


def prepare_manifest(ctx: ManifestContext, file: str, doc: dict[str, Any]) -> Prepared:
    """Every check of a manifest input that needs no vault: its schemas, the envelope's
    signature against `ctx`'s producer keyring, the ids, and the faults. The duplicate
    answer check, which reads the vault, is left to `store.ingest`."""
    validate(doc, "manifest-input-v1", file)
    env = Envelope.from_json(doc["envelope"], file, "$.envelope")
    if env.payload_type != MANIFEST_TYPE:
        raise InputError(file, "$.envelope.payloadType", f"expected {MANIFEST_TYPE!r}")
    try:
        key_id = verify_envelope(env, ctx.ed25519)
    except SignatureError as exc:
        raise InputError(file, "$.envelope.signatures", f"{exc} (producer keyring)") from exc
    try:
        payload = parse_strict(env.payload, file)
    except InputError as exc:
        raise InputError(file, "$.envelope.payload" + exc.path[1:], exc.message) from exc
    v2 = isinstance(payload, dict) and payload.get("schema") == MANIFEST_V2
    validate(payload, "manifest-v2" if v2 else "manifest-v1", file, "$.envelope.payload")
    if v2:
        _check_model_inputs(file, payload)
    key = ctx.keys[key_id]
    when = payload["generated_at"]
    instant_at(when, file, "$.envelope.payload.generated_at")
    _check_manifest_ids(file, payload)
    problem = key.problem_at(when)
    if problem is not None:
        raise InputError(
            file,
            "$.envelope.signatures",
            f"producer key {key_id[:16]} ({key.name}) is {problem}; manifest generated_at {when}",
        )
    manifest = Manifest.from_json(payload)
    faults, texts = manifest_faults(ctx, file, manifest, doc["contents"])
    entry = make_entry(EntryKind.MANIFEST, env, ingested_at=ctx.now, faults=[f.to_json() for f in faults])
    # the duplicate-answer check is the last one, made by `check_answers` for the
    # whole call with one query
    return Prepared(
        file, EntryKind.MANIFEST, manifest.answer_id, entry.with_payload(payload, manifest), texts, faults
    )


def manifest_faults(
    ctx: ManifestContext, file: str, p: Manifest, contents: dict[str, str]
) -> tuple[list[Fault], list[tuple[str, bytes]]]:
    aid = p.answer_id
    faults: list[Fault] = []

    def fault(path: str, code: str, message: str) -> None:
        faults.append(Fault(file, aid, path, code, message))

    # digest -> (JSON path of its first mention, collections it is stored under);
    # the same text cited from two collections is stored once per collection so a
    # reader scoped to either one can read it.
    wanted: dict[str, tuple[str, list[str]]] = {}

    def want(digest: str, collection: str, path: str) -> None:
        _first, collections = wanted.setdefault(digest, (path, []))
        if collection not in collections:
            collections.append(collection)

    want(str(p.question_sha256), p.collection, "$.question_sha256")
    want(str(p.answer_sha256), p.collection, "$.answer_sha256")
    ids: set[str] = set()
    for i, ps in enumerate(p.passages):
        if ps.passage_id in ids:
            fault(f"$.passages[{i}].passage_id", "duplicate_passage_id", ps.passage_id)
        ids.add(ps.passage_id)
        want(str(ps.retrieved_sha256), ps.collection, f"$.passages[{i}].retrieved_sha256")
        if ps.model_input_sha256 is not None:  # a v2 `not_sent` passage has none
            want(str(ps.model_input_sha256), ps.collection, f"$.passages[{i}].model_input_sha256")
        loc = ps.located().locator
        if loc.char_end < loc.char_start:
            fault(f"$.passages[{i}].locator", "bad_locator", "char_end before char_start")
    texts: list[tuple[str, bytes]] = []
    answer_text: str | None = None
    for digest, (path, collections) in wanted.items():
        text = contents.get(digest)
        if text is None:
            fault(path, "text_not_supplied", f"no text for {digest} in $.contents")
            continue
        data = text.encode("utf-8")
        actual = sha256_hex(data)
        if actual != digest:
            fault(path, "text_digest_mismatch", f"text under {digest} hashes to {actual}")
            continue
        if digest == p.answer_sha256:
            answer_text = text
        tomb = ctx.tombstoned.get(digest)
        if tomb is not None:
            fault(
                path,
                "text_purged",
                f"{digest} was purged under a retention policy (tombstone at log entry {tomb}); "
                "a purge is final, so the text is not stored again and this reference reads as purged",
            )
            continue
        texts.extend((collection, data) for collection in collections)
    for digest in contents:
        if digest not in wanted:
            path = member_path("$.contents", digest)
            fault(path, "unreferenced_text", "text not named by the manifest")
    for i, c in enumerate(p.citations):
        for j, pid in enumerate(c.passage_ids):
            if pid not in ids:
                fault(
                    f"$.citations[{i}].passage_ids[{j}]",
                    "unknown_passage",
                    f"no passage {pid!r}",
                )
        if c.answer_end < c.answer_start:
            fault(f"$.citations[{i}]", "bad_answer_range", "answer_end before answer_start")
        elif answer_text is not None and c.answer_end > len(answer_text):
            fault(
                f"$.citations[{i}].answer_end",
                "answer_range_outside",
                f"{c.answer_end} > answer length {len(answer_text)}",
            )
    return faults, texts


def prepare_file(ctx: ManifestContext, path: Path) -> Prepared | InputError | None:
    """A manifest input prepared, or why it is refused; None for any other input (a
    revision or deletion, or an unknown schema), which `store.ingest` prepares itself
    against the vault, in file order."""
    try:
        file, doc = load_input(path)
        if "envelope" not in doc:
            return None
        return prepare_manifest(ctx, file, doc)
    except InputError as exc:
        return exc
    except StoreError as exc:
        return InputError(str(path), "$", str(exc))


#: one prepared file as marshal data: ("m", file, answer id, entry bytes, entry body,
#: payload, texts, faults as (path, code, message)); ("e", file, path, message) for a
#: refusal; ("v",) for a file the vault's process prepares
_Wire = tuple[Any, ...]


def to_wire(item: Prepared | InputError | None) -> _Wire:
    """`item` as plain data for `marshal`: the exception and records do not cross."""
    if item is None:
        return ("v",)
    if isinstance(item, InputError):
        return ("e", item.file, item.path, item.message)
    entry = item.entry
    if not isinstance(entry, LogEntry):  # only manifests are prepared away from the vault
        raise TypeError(f"{item.file}: a {item.kind} is prepared by the vault's process")
    faults = [(f.path, f.code, f.message) for f in item.faults]
    return ("m", item.file, item.ident, entry.data, entry.body, entry.parsed_payload, item.texts, faults)


def from_wire(wire: _Wire) -> Prepared | InputError | None:
    """The item `to_wire` was given, rebuilt: the record from the payload by the same
    `Manifest.from_json`, so it equals the one the worker built."""
    tag = wire[0]
    if tag == "v":
        return None
    if tag == "e":
        return InputError(wire[1], wire[2], wire[3])
    _tag, file, ident, data, body, payload, texts, faults = wire
    entry = LogEntry(data, body, None, True, payload, Manifest.from_json(payload))
    return Prepared(
        file,
        EntryKind.MANIFEST,
        ident,
        entry,
        [(c, t) for c, t in texts],
        [Fault(file, ident, p, code, message) for p, code, message in faults],
    )


def prepare_chunk(ctx: ManifestContext, paths: list[str]) -> bytes:
    """A worker's task: `prepare_file` of each path, in order, as marshal bytes."""
    with no_cycle_collection():
        return marshal.dumps([to_wire(prepare_file(ctx, Path(p))) for p in paths])


def load_chunk(data: bytes) -> list[Prepared | InputError | None]:
    """The items of one `prepare_chunk` result, in its paths' order."""
    return [from_wire(w) for w in marshal.loads(data)]  # noqa: S302 - our own workers' bytes
