"""Log entries: values whose bytes and leaf hash are computed, never supplied.

Every entry is RFC 8785 canonical JSON of the form
``{"kind": K, "envelope": <DSSE envelope>, ...unsigned annotations}``.  The envelope
is either a producer's manifest (kept exactly as signed) or a statement signed by the
custodian or an investigator.  Annotations (ingest time, producer faults) are covered
by the Merkle log and the custodian's checkpoint, not by the envelope's signer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict

from store.canonical import MAX_SAFE_INT, canonical
from store.crypto import Identity
from store.dsse import Envelope, sign_envelope
from store.errors import InputError
from store.merkle import leaf_hash
from store.records import MalformedRecordError, Manifest, imported_manifest
from store.statements import JournalPlaceJSON, LogPlaceJSON, StatementJSON

__all__ = [
    "ANSWER_KINDS",
    "CASE_KINDS",
    "CUSTODIAN_KINDS",
    "HOLD_KINDS",
    "INVESTIGATOR_KINDS",
    "MANIFEST_TYPE",
    "ROSTER_KINDS",
    "STATEMENT_TYPE",
    "EntryKind",
    "FaultJSON",
    "LogEntry",
    "Statement",
    "entry_kind",
    "make_entry",
    "make_statement",
    "place_of",
]


class FaultJSON(TypedDict):
    """A producer fault as ingest annotates a manifest entry with it (`faults`), and as
    `trace --json` repeats it: the JSON path in the signed payload, a code, a sentence."""

    path: str
    code: str
    message: str


MANIFEST_TYPE = "application/vnd.tracer.manifest.v1+json"
STATEMENT_TYPE = "application/vnd.tracer.statement.v1+json"


class EntryKind(StrEnum):
    """The kinds of log entry, the one list of them: the `kind` member of every entry and
    the `type` its signed statement declares.  StrEnum members are the words themselves,
    so the signed bytes, the `kind` column and the `--json` outputs see plain strings,
    and a parameter typed with this enum makes mypy refuse a kind nobody registered.

    What is read back from the log is not trusted to be one of these: `LogEntry.kind` is
    the word as written, `LogEntry.entry_kind` the member it names (None for an unknown
    kind, which `verify` reports as `entry_unknown_kind`)."""

    #: a producer's manifest, kept exactly as signed
    MANIFEST = "manifest"
    # custodian statements
    VAULT_INIT = "vault_init"
    KEY_ADD = "key_add"
    KEY_REVOKE = "key_revoke"
    INVESTIGATOR_GRANT = "investigator_grant"
    INVESTIGATOR_REVOKE = "investigator_revoke"
    REVISION = "revision"
    DOCUMENT_DELETION = "document_deletion"
    TOMBSTONE = "tombstone"
    #: an imported observability trace (store/imported.py): not a producer manifest
    IMPORTED_TRACE = "imported_trace"
    # investigator statements
    ACCESS = "access"
    FINDING = "finding"
    CASE_OPEN = "case_open"
    CASE_CONCLUSION = "case_conclusion"
    TAG = "tag"
    NOTE = "note"
    HOLD = "hold"
    HOLD_RELEASE = "hold_release"


_K = EntryKind
CUSTODIAN_KINDS = frozenset(
    {
        _K.VAULT_INIT,
        _K.KEY_ADD,
        _K.KEY_REVOKE,
        _K.INVESTIGATOR_GRANT,
        _K.INVESTIGATOR_REVOKE,
        _K.REVISION,
        _K.DOCUMENT_DELETION,
        _K.TOMBSTONE,
        _K.IMPORTED_TRACE,
    }
)
#: case-file statements (store.casefile): an investigator (or the custodian) signs them
CASE_KINDS = frozenset({_K.CASE_OPEN, _K.CASE_CONCLUSION, _K.TAG, _K.NOTE})
#: legal holds: signed by the custodian or an investigator granted the `hold` right
#: (`store.roster.Roster.statement_signers` narrows who may sign them)
HOLD_KINDS = frozenset({_K.HOLD, _K.HOLD_RELEASE})
INVESTIGATOR_KINDS = frozenset({_K.ACCESS, _K.FINDING}) | CASE_KINDS | HOLD_KINDS
#: statements that change who may sign or read: folded by `store.roster.Roster`
ROSTER_KINDS = frozenset(
    {_K.VAULT_INIT, _K.KEY_ADD, _K.KEY_REVOKE, _K.INVESTIGATOR_GRANT, _K.INVESTIGATOR_REVOKE}
)
#: the entries that log an answer: a producer's manifest or an imported trace
ANSWER_KINDS = frozenset({_K.MANIFEST, _K.IMPORTED_TRACE})
_BY_WORD: dict[str, EntryKind] = {k.value: k for k in EntryKind}


def entry_kind(word: object) -> EntryKind | None:
    """The registered kind `word` names, None for any other value: how a kind read from
    the log (untrusted) becomes one the typed code may dispatch on."""
    return _BY_WORD.get(word) if isinstance(word, str) else None


@dataclass(frozen=True)
class LogEntry:
    """One log entry; `data` are the exact bytes that were hashed into the tree."""

    data: bytes
    body: dict[str, Any] = field(compare=False, repr=False)
    #: the leaf hash of `data`, computed on first use: an entry made at ingest is stamped
    #: with its seq (new bytes) before anything hashes it
    _leaf: bytes | None = field(default=None, compare=False, repr=False)
    #: True when `data` is known to be `canonical(body)` (built here, not read back)
    canonical_data: bool = field(default=False, compare=False, repr=False)
    #: the envelope's payload as parsed by whoever checked it (ingest), if known
    parsed_payload: Any = field(default=None, compare=False, repr=False)
    #: the manifest record parsed from that payload, if whoever checked it built one
    manifest: Manifest | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_bytes(cls, data: bytes) -> LogEntry:
        body = json.loads(data)
        if not isinstance(body, dict):
            raise ValueError("log entry is not a JSON object")
        return cls(data, body)

    @property
    def leaf(self) -> bytes:
        leaf = self._leaf
        if leaf is None:
            leaf = leaf_hash(self.data)
            object.__setattr__(self, "_leaf", leaf)
        return leaf

    def at(self, seq: int) -> LogEntry:
        """This entry stamped with `"seq": seq`: the bytes of `canonical({**body, "seq": seq})`.

        When `data` is canonical and every member name sorts before "seq" (RFC 8785
        orders names by UTF-16 code units; against an ASCII name that is the same as
        comparing code points), the stamped bytes are `data` with `,"seq":N` spliced
        in before the closing brace, so the entry is not re-serialized.
        """
        body = {**self.body, "seq": seq}
        if (
            self.canonical_data
            and self.body
            and "seq" not in self.body
            and type(seq) is int
            and 0 <= seq <= MAX_SAFE_INT
            and all(key < "seq" for key in self.body)
        ):
            data = b'%b,"seq":%d}' % (self.data[:-1], seq)
        else:
            data = canonical(body)
            body = json.loads(data)
        return LogEntry(data, body, None, True, self.parsed_payload, self.manifest)

    def with_payload(self, parsed: Any, manifest: Manifest | None = None) -> LogEntry:
        """The same entry, remembering its envelope's payload as already parsed (ingest),
        and for a manifest the record built from it, so it is parsed once."""
        return LogEntry(self.data, self.body, self._leaf, self.canonical_data, parsed, manifest)

    @property
    def seq(self) -> int | None:
        value = self.body.get("seq")
        return value if isinstance(value, int) else None

    @property
    def kind(self) -> str:
        """The kind as written: any word, since whoever can write the file can write it."""
        return str(self.body.get("kind", ""))

    @property
    def entry_kind(self) -> EntryKind | None:
        """The registered kind this entry names; None for a kind nobody registered."""
        return entry_kind(self.body.get("kind", ""))

    @property
    def envelope(self) -> Envelope | None:
        env = self.body.get("envelope")
        return Envelope.from_json(env, "log entry", "$.envelope") if env is not None else None

    @property
    def signer(self) -> str | None:
        env = self.body.get("envelope")
        if isinstance(env, dict):
            sigs = env.get("signatures") or []
            if sigs and isinstance(sigs[0], dict):
                return str(sigs[0].get("keyid", ""))
        return None

    def answer_record(self) -> Manifest:
        """The answer this entry logs: a producer's manifest, or an imported trace in the
        same record; `MalformedRecordError` for any other entry or a damaged payload."""
        if self.manifest is not None:
            return self.manifest
        try:
            payload = self.payload_json()
        except (InputError, ValueError) as exc:
            raise MalformedRecordError(f"payload unreadable: {exc}") from exc
        if self.kind == EntryKind.MANIFEST:
            return Manifest.from_json(payload)
        if self.kind == EntryKind.IMPORTED_TRACE:
            return imported_manifest(payload)
        raise MalformedRecordError(f"a {self.kind!r} entry logs no answer")

    def payload_json(self) -> Any:
        payload = self.parsed_payload
        if payload is None:
            env = self.envelope
            if env is None:
                return None
            payload = json.loads(env.payload)
        if self.kind != EntryKind.MANIFEST and isinstance(payload, dict):
            return payload.get("statement", payload)
        return payload


_PAYLOAD_FIRST = b'{"envelope":{"payload":""'
#: maps the base64 punctuation (both alphabets) to a letter, so `isalnum` on the result
#: is true only for text made of base64 characters: none of them needs a JSON escape
_B64_PUNCT = bytes.maketrans(b"+/=-_", b"AAAAA")


def make_entry(kind: EntryKind, envelope: Envelope, **annotations: Any) -> LogEntry:
    word = kind.value  # a plain str: the canonical encoder's fast path takes only those
    env = envelope.to_json()
    b64 = env["payload"]
    raw = b64.encode("ascii") if b64.isascii() else b""
    if "envelope" not in annotations and "kind" not in annotations and raw.translate(_B64_PUNCT).isalnum():
        # The payload string needs no escaping, so canonicalize the entry around an empty
        # one and put it in afterwards: when "envelope" is the first member its "payload"
        # comes first too, right after `_PAYLOAD_FIRST`'s opening quote.
        small = canonical({"kind": word, "envelope": {**env, "payload": ""}, **annotations})
        if small.startswith(_PAYLOAD_FIRST):
            cut = len(_PAYLOAD_FIRST) - 1
            data = b"%b%b%b" % (small[:cut], raw, small[cut:])
            body = json.loads(small)
            body["envelope"]["payload"] = b64
            return LogEntry(data, body, None, True)
    body = {"kind": word, "envelope": env, **annotations}
    data = canonical(body)
    return LogEntry(data, json.loads(data), None, True)


def place_of(origin: str, seq: int, root_before: bytes) -> LogPlaceJSON:
    """Where a statement belongs: the vault, its seq, and the Merkle root of the log
    before it (RFC 6962 over entries 0..seq-1).  Signed with the statement, so a copy of
    it anywhere else, in this vault or another, or after a rewritten history, is caught."""
    return {"origin": origin, "root": root_before.hex(), "seq": seq}


@dataclass(frozen=True)
class Statement:
    """A statement to be signed once its place is known: `Batch.append` binds it to the
    seq it lands at and the root before it, then signs."""

    kind: EntryKind
    body: StatementJSON
    signer: Identity


def make_statement(
    kind: EntryKind, statement: StatementJSON, signer: Identity, place: LogPlaceJSON | JournalPlaceJSON
) -> LogEntry:
    """A custodian or investigator statement bound to `place`, as a DSSE envelope over JCS.

    The payload is `{"type": kind, "statement": ..., "log": place}`; journal lines (not in
    the log) name the checkpoint they were made against instead of a seq.
    """
    payload = canonical({"type": kind.value, "statement": statement, "log": place})
    return make_entry(kind, sign_envelope(payload, STATEMENT_TYPE, signer))
