"""Reading the signed manifest behind an answer from the log, for `tracer.engine.trace`.

One object owns the manifest cache, the ids known to be absent and the entries read
ahead for a page, so the tracer asks for a manifest and never sees how it was found.
Reads the log entry (never the views), checks its producer's signature against the keys
valid when it was generated, and refuses an entry the views placed under another
answer's id: the views are outside the Merkle tree and may have been altered.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from store import queries
from store.dsse import verify_envelope
from store.entries import EntryKind, FaultJSON, LogEntry
from store.errors import InputError, SignatureError, StoreError, VaultError
from store.queries import AnswerRow
from store.records import MalformedRecordError, Manifest
from store.roster import producer_keys
from tracer.engine.imported import ImportedFacts, read_imported
from tracer.engine.memo import Memo
from tracer.engine.session import Session
from tracer.engine.vocabulary import SignatureState

__all__ = ["DamagedEntryError", "ManifestReader", "SignedManifest", "UnknownAnswerError"]


class UnknownAnswerError(LookupError):
    pass


class DamagedEntryError(StoreError):
    """The log entry behind an answer cannot be read as a manifest at all."""

    hint = "run `tracer verify` to pin the damage"


@dataclass(frozen=True)
class SignedManifest:
    """A manifest as read from its log entry, with its signature's state and faults."""

    seq: int
    record: Manifest
    signature: SignatureState
    signer: str
    faults: list[FaultJSON]
    imported: ImportedFacts | None = None

    @property
    def sources(self) -> list[str]:
        return self.record.sources


class ManifestReader:
    """The manifests of one session's answers, each read and checked once (memoized)."""

    def __init__(self, session: Session):
        self.session = session
        self._keys = producer_keys(session.vault)
        self._manifests: Memo[str, SignedManifest] = Memo(4096)
        self._unknown: set[str] = set()
        #: entries read ahead (a page, a lineage), taken by `get` as it checks each
        self._primed: dict[str, tuple[int, LogEntry]] = {}

    def cached(self, answer_id: str) -> bool:
        return self._manifests.get(answer_id) is not None

    def get(self, answer_id: str) -> SignedManifest:
        """The signed manifest behind an answer, with its signature checked (memoized)."""
        found = self._manifests.get(answer_id)
        if found is not None:
            return found
        if answer_id in self._unknown:
            raise UnknownAnswerError(answer_id)
        try:
            row = self._primed.pop(answer_id, None) or queries.answer_entry(self.session.vault, answer_id)
        except (ValueError, VaultError) as exc:
            raise DamagedEntryError(f"the log entry of answer {answer_id!r} is not readable: {exc}") from exc
        if row is None:
            self._unknown.add(answer_id)
            raise UnknownAnswerError(answer_id)
        seq, entry = row
        if entry.kind == EntryKind.IMPORTED_TRACE:
            return self._manifests.put(answer_id, self._imported(answer_id, seq, entry))
        return self._manifests.put(answer_id, self._signed(answer_id, seq, entry))

    def _signed(self, answer_id: str, seq: int, entry: LogEntry) -> SignedManifest:
        """A producer's manifest: its signature checked, its record parsed."""
        try:
            env = entry.envelope
            if env is None:
                raise InputError("log", "$.envelope", "missing")
            payload = json.loads(env.payload)
            if not isinstance(payload, dict):
                raise ValueError("manifest payload is not a JSON object")
        except (InputError, ValueError) as exc:
            raise DamagedEntryError(f"log entry {seq} (answer {answer_id!r}) is damaged: {exc}") from exc
        if payload.get("answer_id") != answer_id:
            raise DamagedEntryError(
                f"the views place answer {answer_id!r} at log entry {seq}, which holds "
                f"{payload.get('answer_id')!r}: the views were altered"
            )
        signature, signer = SignatureState.VALID, entry.signer or ""
        when = str(payload.get("generated_at", ""))
        keys = {k: v.ed25519 for k, v in self._keys.items() if v.valid_at(when)}
        try:
            signer = verify_envelope(env, keys)
        except SignatureError:
            signature = SignatureState.SIGNATURE_INVALID
        faults = entry.body.get("faults", [])
        try:
            record = Manifest.from_json(payload)
        except MalformedRecordError as exc:
            raise DamagedEntryError(
                f"log entry {seq} (answer {answer_id!r}) is not a readable manifest"
                f"{'' if signature == SignatureState.VALID else ' and fails its signature'}: {exc}"
            ) from exc
        return SignedManifest(
            seq, record, signature, signer, list(faults) if isinstance(faults, list) else []
        )

    def _imported(self, answer_id: str, seq: int, entry: LogEntry) -> SignedManifest:
        """An imported trace, read as an answer signed by its importer (engine/imported.py)."""
        vault = self.session.vault
        cust = vault.custodian
        try:
            env = entry.envelope
            if env is None:
                raise InputError("log", "$.envelope", "missing")
            record, signature, facts = read_imported(env, seq, vault.origin, cust.key_id, cust.ed25519)
        except (InputError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DamagedEntryError(
                f"log entry {seq} (imported answer {answer_id!r}) is damaged: {exc}"
            ) from exc
        if record.answer_id != answer_id:
            raise DamagedEntryError(
                f"the views place answer {answer_id!r} at log entry {seq}, which holds "
                f"{record.answer_id!r}: the views were altered"
            )
        return SignedManifest(seq, record, signature, entry.signer or "", [], facts)

    def page(self, rows: Sequence[AnswerRow]) -> list[SignedManifest] | None:
        """The manifests of a page of answers, their entries read in one go; None when that
        read fails (a damaged entry: each answer then reports it on its own)."""
        try:
            entries = queries.entries_at(self.session.vault, [r.seq for r in rows])
        except ValueError:
            return None
        self._primed = {r.answer_id: (r.seq, entries[r.seq]) for r in rows if r.seq in entries}
        return self._each([r.answer_id for r in rows])

    def lineage(self, m: SignedManifest) -> list[SignedManifest]:
        """The manifests `m`'s lineage and derived passages name, their entries read in one
        query. Only a cache fill: each is checked by `get` as if read alone, an id not read
        cleanly is left to it, and scope is still decided where each is shown."""
        named = {*m.sources, *(str(ps.derived_from) for ps in m.record.passages if ps.derived_from)}
        ids = sorted(x for x in named if x not in self._unknown and self._manifests.get(x) is None)
        if not ids:
            return []
        self._primed.update(queries.answer_entries_many(self.session.vault, ids))
        return self._each([aid for aid in ids if aid in self._primed])

    def _each(self, answer_ids: list[str]) -> list[SignedManifest]:
        out: list[SignedManifest] = []
        for aid in answer_ids:
            try:
                out.append(self.get(aid))
            except (UnknownAnswerError, DamagedEntryError):
                continue  # reported by the answer itself, read again alone
        return out
