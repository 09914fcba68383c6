"""Full integrity verification, every finding pinned to its record.

One streaming pass over the raw log recomputes each leaf hash, checks each entry's
position and signature, and accumulates the Merkle root, comparing it with every signed
checkpoint on the way.  The views are then rebuilt from the log and compared, every
referenced digest is accounted for (intact, mismatch, purged or missing), and every
retrieved passage is looked up at its locator in the revision it claims to come from.

Structural checks (Merkle, signatures, views, presence) run for everyone; text
checksums run for what the viewer can decrypt, and the report says how much was not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from store import audit, merkle
from store.crypto import PublicIdentity, b64d
from store.dsse import Envelope, verify_envelope
from store.entries import CUSTODIAN_KINDS, INVESTIGATOR_KINDS, MANIFEST_TYPE, STATEMENT_TYPE, LogEntry
from store.errors import InputError, SignatureError, UnwrapError
from store.note import Checkpoint, open_note
from store.timeutil import within
from store.vault import Vault
from tracer.clock import now_iso
from tracer.engine.currency import LRU, CurrencyEngine, Transform, derived_transform
from tracer.engine.session import Session

__all__ = ["Finding", "Progress", "VerifyReport", "verify"]

Progress = Callable[[str, int, int], None]

#: finding kinds that are informational and do not make the vault fail
INFO_KINDS = frozenset({"blob_unreferenced"})

#: transformation-trace verdicts that are findings (the others are counted only)
_TRANSFORM_FINDINGS = frozenset(
    {"found_elsewhere", "not_found", "unknown_normalizer", "not_in_source", "source_missing"}
)

_AUTH_FAILED = "stored ciphertext fails authentication (altered after it was written)"
#: manifests whose texts are read together in the transform pass
_TRANSFORM_PAGE = 2000
_GAP_HINTS = ("answer_id", "run_id", "document_id", "revision", "digest")
#: views with one row per log entry: what they say about a missing entry names it
_ENTRY_TABLES = frozenset({"v_answers", "v_revisions", "v_deletions", "v_tombstones", "v_findings"})
_VIEW_RECORD_FIELDS = ("answer_id", "run_id", "passage_id", "digest", "document_id", "revision")


@dataclass(frozen=True)
class Finding:
    kind: str
    seq: int | None
    record: dict[str, Any]
    detail: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class VerifyReport:
    computed_at: str
    checkpoint: dict[str, Any]
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    viewer: str | None = None

    @property
    def ok(self) -> bool:
        return not any(f.kind not in INFO_KINDS for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "computed_at": self.computed_at,
            "viewer": self.viewer,
            "checkpoint": self.checkpoint,
            "counts": self.counts,
            "findings": [f.to_json() for f in self.findings],
        }


class _Keyring:
    """Who could sign what, folded from the log as the scan goes (so order matters)."""

    def __init__(self) -> None:
        self.custodian: PublicIdentity | None = None
        self.producers: dict[str, tuple[bytes, str | None, str | None, str | None]] = {}
        self.investigators: dict[str, tuple[str, bytes, str | None]] = {}

    def fold(self, entry: LogEntry, payload: dict[str, Any]) -> None:
        k = entry.kind
        if k == "vault_init":
            c = payload["custodian"]
            self.custodian = PublicIdentity(str(c["name"]), b64d(c["ed25519"]), b64d(c["x25519"]))
        elif k == "key_add":
            self.producers[payload["key_id"]] = (
                b64d(payload["ed25519"]),
                payload.get("valid_from"),
                payload.get("valid_until"),
                None,
            )
        elif k == "key_revoke" and payload["key_id"] in self.producers:
            ed, vf, vu, _r = self.producers[payload["key_id"]]
            self.producers[payload["key_id"]] = (ed, vf, vu, payload["at"])
        elif k == "investigator_grant":
            self.investigators[payload["key_id"]] = (
                payload["name"],
                b64d(payload["ed25519"]),
                None,
            )
        elif k == "investigator_revoke" and payload["key_id"] in self.investigators:
            name, ed, _r = self.investigators[payload["key_id"]]
            self.investigators[payload["key_id"]] = (name, ed, payload["at"])

    def producer_keys_at(self, when: str) -> dict[str, bytes]:
        return {kid: ed for kid, (ed, vf, vu, rv) in self.producers.items() if within(when, vf, vu, rv)}

    def note_verifiers(self) -> dict[str, bytes]:
        """Who may sign a checkpoint at this point of the log: the custodian and current investigators."""
        out = {self.custodian.name: self.custodian.ed25519} if self.custodian else {}
        for name, ed, revoked in self.investigators.values():
            if revoked is None:
                out.setdefault(name, ed)
        return out


class _Verifier:
    def __init__(self, vault: Vault, session: Session | None, progress: Progress | None):
        self.vault = vault
        self.session = session
        self.progress = progress or (lambda _phase, _done, _total: None)
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = {}
        self.keyring = _Keyring()
        self.gaps: list[int] = []
        self.last_good = 0
        self.root_broken = False
        self.final_root = merkle.RootAccumulator().root()
        self.final_size = 0
        # the view comparison, made range by range while the views are rebuilt
        self.view_diffs: list[audit.ViewDiff] = []
        # the envelope of the entry being scanned, decoded once by `_parse`
        self._env: Envelope | None = None
        self._raw: Any = None
        self._env_error: Exception | None = None
        # transform checks run page by page during the log pass, on the payloads it decoded
        self._checks_transforms = session is not None
        self._sources: LRU[str, tuple[str, str]] = LRU(4096)
        self._tpage: list[tuple[int, str, dict[str, Any]]] = []
        self._tdeferred: list[tuple[int, int, str, dict[str, Any], dict[str, Any]]] = []
        self._tfindings: list[tuple[int, int, Finding]] = []
        # verdicts by everything a non-derived passage's transform depends on: popular
        # chunks are retrieved by many answers and are checked once
        self._tmemo: LRU[tuple[Any, ...], Transform] = LRU(32768)

    def find(self, kind: str, seq: int | None, detail: str, /, **record: Any) -> None:
        self.findings.append(Finding(kind, seq, {k: v for k, v in record.items() if v is not None}, detail))

    def bump(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    # -- pass 1: the log ---------------------------------------------------------------

    def scan_log(self) -> Iterator[tuple[int, LogEntry]]:
        count, gaps, top = audit.log_shape(self.vault)
        self.counts["entries"] = count
        self.gaps = gaps
        checkpoints = self.vault.checkpoints()
        by_size: dict[int, list[Any]] = {}
        for cp in checkpoints:
            by_size.setdefault(cp.size, []).append(cp)
        self.counts["checkpoints"] = len(checkpoints)
        acc = merkle.RootAccumulator()
        if 0 in by_size:
            self._check_checkpoints(by_size.pop(0), acc)
        for seq, kind, data, stored_leaf in self.vault.raw_entries():
            self.progress("log", seq + 1, top)
            leaf = merkle.leaf_hash(data)
            acc.append(leaf)
            entry, rec = self._parse(seq, kind, data)
            if kind == "manifest" and self._checks_transforms and self._env_error is None:
                if isinstance(self._raw, dict):
                    self._tpage.append((seq, kind, self._raw))
                    if len(self._tpage) >= _TRANSFORM_PAGE:
                        self._transform_page(self._tpage)
                        self._tpage = []
            if leaf != stored_leaf:
                self.find(
                    "leaf_hash_mismatch",
                    seq,
                    f"stored leaf hash {stored_leaf.hex()[:16]}… != SHA-256(0x00||entry) {leaf.hex()[:16]}…: "
                    "the entry's bytes were changed after it was logged",
                    **rec,
                )
            if entry is not None:
                self._entry(seq, kind, entry, rec)
                yield seq, entry
            if acc.size in by_size:
                self._check_checkpoints(by_size.pop(acc.size), acc)
        for size, cps in sorted(by_size.items()):
            for cp in cps:
                self.find(
                    "checkpoint_beyond_log",
                    None,
                    f"checkpoint {cp.id} claims size {size} but the log has {acc.size} entries: truncated?",
                    checkpoint=cp.id,
                    size=size,
                )
        self.final_root = acc.root()
        self.final_size = acc.size
        covered = max((cp.size for cp in checkpoints), default=0)
        for seq in range(covered, min(acc.size, covered + 1000)):
            self.find(
                "entry_not_checkpointed",
                seq,
                f"log entry {seq} is beyond the latest signed checkpoint (size {covered}): "
                "appended without a signature over it",
            )

    def _parse(self, seq: int, kind: str, data: bytes) -> tuple[LogEntry | None, dict[str, Any]]:
        """The entry and the record fields that pin a finding to it (best effort)."""
        self._env = None
        self._raw = None
        self._env_error = None
        try:
            entry = LogEntry.from_bytes(data)
        except ValueError as exc:
            self.find("entry_malformed", seq, f"entry bytes are not a JSON object: {exc}", kind=kind)
            return None, {"kind": kind}
        rec: dict[str, Any] = {"kind": entry.kind or kind}
        # Decode the envelope and its payload once: the signature check, the view
        # derivation and the transform check reuse them.
        try:
            self._env = entry.envelope
            if self._env is not None:
                self._raw = json.loads(self._env.payload)
                entry = entry.with_payload(self._raw)
        except (InputError, ValueError, AttributeError, TypeError) as exc:
            self._env_error = exc
        try:
            payload = entry.payload_json() if self._env_error is None else None
        except (InputError, ValueError, AttributeError, TypeError):
            payload = None
        if isinstance(payload, dict):
            if entry.kind == "manifest":
                rec.update(answer_id=payload.get("answer_id"), run_id=payload.get("run_id"))
            elif entry.kind == "revision":
                rec.update(
                    document_id=payload.get("document_id"),
                    revision=payload.get("revision"),
                    digest=payload.get("content_sha256"),
                )
            elif entry.kind == "document_deletion":
                rec.update(document_id=payload.get("document_id"))
            elif entry.kind == "tombstone":
                rec.update(digest=payload.get("digest"))
            elif entry.kind == "finding":
                rec.update(answer_id=payload.get("answer_id"))
        return entry, rec

    def _entry(self, seq: int, kind: str, entry: LogEntry, rec: dict[str, Any]) -> None:
        if entry.seq != seq:
            self.find(
                "entry_out_of_place",
                seq,
                f"entry stored at {seq} was written as entry {entry.seq} (moved or swapped)",
                written_as=entry.seq,
                **rec,
            )
        if entry.kind != kind:
            self.find("entry_kind_mismatch", seq, f"log row says {kind!r}, entry says {entry.kind!r}", **rec)
        self._signature(seq, entry, rec)

    def _signature(self, seq: int, entry: LogEntry, rec: dict[str, Any]) -> None:
        try:
            if self._env_error is not None:
                raise self._env_error
            env = self._env
            if env is None:
                raise InputError("log", "$.envelope", "missing")
            payload = self._raw
            body = payload if entry.kind == "manifest" else payload.get("statement", {})
        except (InputError, ValueError, AttributeError) as exc:
            self.find("entry_malformed", seq, f"envelope unreadable: {exc}", **rec)
            return
        kind = entry.kind
        expected = MANIFEST_TYPE if kind == "manifest" else STATEMENT_TYPE
        declared = kind if kind == "manifest" else payload.get("type")
        if env.payload_type != expected or declared != kind:
            self.find(
                "entry_kind_mismatch",
                seq,
                f"entry kind {kind!r} carries a signed {env.payload_type!r} payload of type {declared!r}: "
                "a signed statement reused under another kind",
                **rec,
            )
            return
        if kind == "vault_init" and seq == 0:
            self.keyring.fold(entry, body)
            cust = self.keyring.custodian
            if cust is not None and cust.ed25519 != self.vault.custodian.ed25519:
                self.find(
                    "custodian_mismatch",
                    seq,
                    f"entry 0 names custodian {cust.key_id[:16]}, the vault's metadata "
                    f"{self.vault.custodian.key_id[:16]}",
                    **rec,
                )
        try:
            if kind == "manifest":
                self.bump("manifests")
                keys = self.keyring.producer_keys_at(str(body.get("generated_at", "")))
                verify_envelope(env, keys)
                self._faults(seq, entry, body)
            elif kind in CUSTODIAN_KINDS:
                cust = self.keyring.custodian
                verify_envelope(env, {cust.key_id: cust.ed25519} if cust else {})
            elif kind in INVESTIGATOR_KINDS:
                inv = {k: v[1] for k, v in self.keyring.investigators.items() if v[2] is None}
                cust = self.keyring.custodian
                if cust:
                    inv[cust.key_id] = cust.ed25519
                verify_envelope(env, inv)
            else:
                self.find("entry_unknown_kind", seq, f"unknown entry kind {kind!r}")
        except SignatureError as exc:
            self.find("signature_invalid", seq, str(exc), **rec)
        if kind != "vault_init":
            self.keyring.fold(entry, body)

    def _faults(self, seq: int, entry: LogEntry, body: dict[str, Any]) -> None:
        for fault in entry.body.get("faults", []):
            self.find(
                "producer_fault",
                seq,
                f"{fault.get('code')}: {fault.get('message')}",
                answer_id=body.get("answer_id"),
                run_id=body.get("run_id"),
                path=fault.get("path"),
            )

    def _check_checkpoints(self, cps: list[Any], acc: merkle.RootAccumulator) -> None:
        root = acc.root()
        good = False
        for cp in cps:
            try:
                text, _names = open_note(cp.note, self.keyring.note_verifiers())
                parsed = Checkpoint.parse(text)
            except (SignatureError, InputError) as exc:
                self.find("checkpoint_signature_invalid", None, str(exc), checkpoint=cp.id, size=cp.size)
                continue
            if parsed.origin != self.vault.origin:
                self.find(
                    "checkpoint_origin_mismatch",
                    None,
                    f"origin {parsed.origin!r}",
                    checkpoint=cp.id,
                )
            if parsed.size != cp.size:
                self.find("checkpoint_size_mismatch", None, f"note says {parsed.size}", checkpoint=cp.id)
            if parsed.root != root:
                self.root_broken = True
                lo = self.last_good
                self.find(
                    "checkpoint_root_mismatch",
                    None,
                    f"signed root {parsed.root.hex()[:16]}… != recomputed {root.hex()[:16]}… at size "
                    f"{cp.size}: an entry in seq {lo}..{cp.size - 1} was changed, removed or reordered "
                    f"(entries before {lo} match an earlier signed checkpoint)",
                    checkpoint=cp.id,
                    size=cp.size,
                    first_seq=lo,
                    last_seq=cp.size - 1,
                )
            elif parsed.size == cp.size:
                good = True
            else:
                self.root_broken = True
        if good and not self.root_broken:
            self.last_good = acc.size

    # -- pass 2: views, digests, texts --------------------------------------------------

    def check_views(self) -> None:
        self.progress("views", 0, 1)
        hints: dict[int, dict[str, Any]] = {}
        for d in self.view_diffs:
            rec = {k: d.values.get(k) for k in _VIEW_RECORD_FIELDS if d.values.get(k) is not None}
            if d.table == "v_revisions":
                rec["digest"] = d.values.get("content_sha256")
            if d.problem == "view_row_altered_or_extra" and d.table in _ENTRY_TABLES:
                hints.setdefault(d.seq, {}).update(rec)
            detail = f"{d.table} row does not match the log: {d.row}"
            self.find(d.problem, d.seq, detail, table=d.table, **rec)
        for seq in self.gaps:
            # What the (untrusted) stored views still say the entry was, to pin the loss.
            hint = {k: v for k, v in hints.get(seq, {}).items() if k in _GAP_HINTS}
            self.find("entry_missing", seq, f"log entry {seq} is absent (the log must be dense)", **hint)
        self.progress("views", 1, 1)

    def check_digests(self) -> None:
        """Every referenced digest accounted for; each stored text decrypted and hashed once.

        One streaming pass over the blobs the viewer holds keys for records only the
        digests that do not verify; SQL then classifies every reference (counts per
        verdict, and the references that are findings), so no per-reference object is
        ever built in Python.
        """
        bad: dict[str, tuple[str, str]] = {}
        dk_ids: list[str] = []
        if self.session is not None:
            keys = self.session.keys
            dk_ids = sorted(keys.keys)
            first = self.vault.blob_first_copies(dk_ids)
            done = 0
            for batch in self.vault.blob_batches(dk_ids):
                self.progress("texts", done, 0)
                done += len(batch)
                for digest, collection, dk_id, nonce, ct in batch:
                    if first and first.get(digest, collection) != collection:
                        continue  # `decrypt` reads the first copy by collection name
                    try:
                        data = keys.open_row(digest, collection, dk_id, nonce, ct)
                    except UnwrapError:
                        bad[digest] = ("checksum_mismatch", _AUTH_FAILED)
                        continue
                    actual = hashlib.sha256(data).hexdigest()
                    if actual != digest:
                        bad[digest] = (
                            "checksum_mismatch",
                            f"recorded {digest[:16]}…, recomputed {actual[:16]}…",
                        )
        scopes = list(self.session.scopes) if self.session is not None else None
        counts, found = audit.digest_verdicts(self.vault, bad, dk_ids, scopes)
        for verdict in ("purged", "missing", "out_of_scope", "intact"):
            if counts.get(verdict):
                self.bump(verdict, counts.pop(verdict))
        for verdict, n in sorted(counts.items()):
            self.bump(verdict, n)
        for f in found:
            rec = {
                "digest": f.digest,
                "role": f.role,
                "answer_id": f.answer_id,
                "passage_id": f.passage_id,
                "document_id": f.document_id,
                "revision": f.revision,
            }
            if f.verdict == "purged":
                self.find(
                    "purged_blob_still_present",
                    f.seq,
                    "a tombstone exists but the text is still stored",
                    **rec,
                )
            elif f.verdict == "missing":
                self.find("missing", f.seq, "text absent and no tombstone explains it: evidence lost", **rec)
            else:
                self.find(f.verdict, f.seq, f.detail or "", **rec)
        self.progress("texts", 1, 1)
        for digest in audit.blob_digests_unreferenced(self.vault):
            self.find("blob_unreferenced", None, "stored text no log entry refers to", digest=digest)

    def check_transforms(self) -> None:
        """Each retained passage at its locator in the revision it names.

        Passages are checked during the log pass, a page of manifests at a time, on the
        payloads that pass already decoded: the texts a page needs (retrieved texts and
        cited revisions) come from one batched read, and the page's passages are checked
        grouped by cited revision so each is normalized once per page.  Passages derived
        from an answer or note wait until the views are rebuilt (their source may come
        later in the log).  Findings are reported in log order, as a one-by-one pass would.
        """
        if not self._checks_transforms:
            return
        self._transform_page(self._tpage)
        self._tpage = []
        self._transform_tasks(self._tdeferred)
        self._tdeferred = []
        self._tfindings.sort(key=lambda t: (t[0], t[1]))
        self.findings.extend(f for _seq, _pos, f in self._tfindings)
        self._tfindings = []
        self.progress("trace", 1, 1)

    def _transform_page(self, page: list[tuple[int, str, dict[str, Any]]]) -> None:
        assert self.session is not None  # noqa: S101 - only called with a session
        tasks: list[tuple[int, int, str, dict[str, Any], dict[str, Any]]] = []
        for seq, kind, body in page:
            for pos, ps in enumerate(body.get("passages", [])):
                if isinstance(ps, dict) and self.session.can_read(str(ps.get("collection"))):
                    if ps.get("derived_from"):
                        # keep the passage, not the whole manifest, until the end
                        self._tdeferred.append((seq, pos, kind, {"answer_id": body.get("answer_id")}, ps))
                    else:
                        tasks.append((seq, pos, kind, body, ps))
        self._transform_tasks(tasks)

    def _transform_tasks(self, tasks: list[tuple[int, int, str, dict[str, Any], dict[str, Any]]]) -> None:
        if self.session is None or not tasks:
            return
        # A fresh engine per page: its text caches then hold one page's texts at most
        # (revision lists and tombstones are re-read in one query each per page).
        engine = CurrencyEngine(self.session)
        docs: set[str] = set()
        for _seq, _pos, _kind, _body, ps in tasks:
            doc = ps.get("document")
            if isinstance(doc, dict) and isinstance(doc.get("document_id"), str):
                docs.add(doc["document_id"])
        engine.prefetch_revisions(docs)
        engine.prefetch(self._page_texts(engine, self._sources, tasks))
        memo = self._tmemo
        for seq, pos, kind, body, ps in sorted(tasks, key=lambda t: _revision_key(t[4])):
            key = _transform_key(ps)
            t = memo.get(key) if key is not None else None
            if t is None:
                try:
                    t = self._transform(engine, self._sources, ps)
                except (KeyError, TypeError, ValueError) as exc:
                    self._tfind(seq, pos, "entry_malformed", f"passage unreadable: {exc!r}", kind=kind)
                    continue
                if key is not None and t is not None:
                    memo.put(key, t)
            if t is None:
                continue
            self.bump(f"transform_{t.state}")
            if t.state in _TRANSFORM_FINDINGS:
                self._tfind(
                    seq,
                    pos,
                    f"transform_{t.state}",
                    t.detail,
                    answer_id=body.get("answer_id"),
                    passage_id=ps.get("passage_id"),
                    document_id=ps["document"]["document_id"],
                    revision=ps["document"]["revision"],
                )

    def _tfind(self, seq: int, pos: int, kind: str, detail: str, /, **record: Any) -> None:
        rec = {k: v for k, v in record.items() if v is not None}
        self._tfindings.append((seq, pos, Finding(kind, seq, rec, detail)))

    def _page_texts(
        self,
        engine: CurrencyEngine,
        sources: LRU[str, tuple[str, str]],
        tasks: list[tuple[int, int, str, dict[str, Any], dict[str, Any]]],
    ) -> list[tuple[str, str]]:
        """(digest, collection) of every readable text a page's passages will ask for."""
        assert self.session is not None  # noqa: S101 - checked by the caller
        can_read = self.session.can_read
        items: list[tuple[str, str]] = []
        for _seq, _pos, _kind, _body, ps in tasks:
            try:
                coll = str(ps["collection"])
                if not can_read(coll):
                    continue
                items.append((str(ps["retrieved_sha256"]), coll))
                source = ps.get("derived_from")
                if source:
                    src = sources.get(str(source))
                    if src is None:
                        found = audit.answer_text_ref(self.vault, str(source))
                        if found is not None:
                            src = sources.put(str(source), found)
                    if src is not None:
                        items.append(src)
                    continue
                cited = engine.cited_revision(ps)
                if cited is not None:
                    items.append((cited.content_sha256, cited.collection))
            except (KeyError, TypeError, ValueError, AttributeError):
                continue  # reported when the passage itself is checked
        return [(d, c) for d, c in items if can_read(c)]

    def _transform(
        self, engine: CurrencyEngine, sources: LRU[str, tuple[str, str]], ps: dict[str, Any]
    ) -> Transform | None:
        assert self.session is not None  # noqa: S101 - checked by the caller
        retrieved = engine.text(ps["retrieved_sha256"], ps["collection"])
        source = ps.get("derived_from")
        if not source:
            return engine.transform(ps, retrieved)
        src = sources.get(str(source))
        if src is None:
            found = audit.answer_text_ref(self.vault, str(source))
            if found is not None:
                src = sources.put(str(source), found)
        if src is not None and not self.session.can_read(src[1]):
            return None
        return derived_transform(ps, retrieved, engine.text(*src) if src else None)


def _transform_key(ps: dict[str, Any]) -> tuple[Any, ...] | None:
    """What `CurrencyEngine.transform` reads of a passage (typed, so 1 and 1.0 differ),
    or None when it is derived or not a plain shape (then it is never memoized)."""
    if ps.get("derived_from"):
        return None
    doc, loc = ps.get("document"), ps.get("locator")
    if not isinstance(doc, dict) or not isinstance(loc, dict):
        return None
    values = (
        ps.get("retrieved_sha256"),
        ps.get("collection"),
        ps.get("normalizer_version"),
        doc.get("document_id"),
        doc.get("revision"),
        loc.get("char_start"),
        loc.get("char_end"),
    )
    if not all(type(v) in (str, int) for v in values):
        return None
    return tuple((type(v).__name__, v) for v in values)


def _revision_key(ps: dict[str, Any]) -> tuple[str, str]:
    doc = ps.get("document")
    if not isinstance(doc, dict):
        return ("", "")
    return (str(doc.get("document_id", "")), str(doc.get("revision", "")))


#: DuckDB's buffer pool during verification: the pass reads the whole log once and keeps
#: only compact tables, so cached pages of it are of no use and only add to the peak RSS
_VERIFY_MEMORY_LIMIT = "256MB"


def verify(vault: Vault, session: Session | None = None, progress: Progress | None = None) -> VerifyReport:
    with vault.memory_limit(_VERIFY_MEMORY_LIMIT):
        return _verify(vault, session, progress)


def _verify(vault: Vault, session: Session | None, progress: Progress | None) -> VerifyReport:
    v = _Verifier(vault, session, progress)
    v.view_diffs = audit.rebuild_views(
        vault,
        v.scan_log(),
        lambda seq, entry, exc: v.find(
            "entry_malformed", seq, f"cannot derive views: {exc!r}", kind=entry.kind
        ),
    )
    latest = vault.checkpoints()[-1] if vault.checkpoints() else None
    v.check_views()
    v.check_digests()
    v.check_transforms()
    report = VerifyReport(
        computed_at=now_iso(),
        checkpoint={
            "size": latest.size if latest else 0,
            "signer": latest.signer if latest else None,
            "recomputed_root": v.final_root.hex(),
            "log_size": v.final_size,
        },
        counts=v.counts,
        findings=v.findings,
        viewer=session.who if session else None,
    )
    return report
