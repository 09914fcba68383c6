"""Imported traces in the engine: what the trace screens and commands need of them.

An `imported_trace` statement (store/imported.py) is read as an answer beside the
producers' manifests, never as one: its signature is the importer's (the custodian's),
every fact keeps its attestation, and `NOT_CAPTURED` stands where the export held no
whole text.  A passage the importer could not locate in a source revision has no chain
and its currency is `unchecked` (`imported_not_located`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from store.attest import IMPORTED_MARK, Attestation, FieldFact
from store.dsse import Envelope, verify_envelope
from store.entries import EntryKind
from store.errors import SignatureError
from store.imported import IMPORTED_SCHEMA
from store.records import Manifest, imported_manifest
from tracer.engine.currency import CurrencyResult
from tracer.engine.evidence import TextResult
from tracer.engine.jsonshapes import ImportedJSON
from tracer.engine.transform import Transform
from tracer.engine.vocabulary import Currency, CurrencyReason, Integrity, SignatureState, TransformState

__all__ = [
    "MISRECORDED_FILE",
    "NOT_CAPTURED",
    "NOT_LOCATED",
    "ImportedFacts",
    "imported_json",
    "not_captured",
    "passage_attestation",
    "read_imported",
]

#: the integrity word for a text the export did not hold whole (absent, redacted, truncated)
NOT_CAPTURED = Integrity.NOT_CAPTURED
NOT_LOCATED = CurrencyReason.IMPORTED_NOT_LOCATED
#: what imports made before the fix recorded as `export.file`: a field name left in a
#: reused loop variable, never the file (docs/import.md, "Known defects in older imports")
MISRECORDED_FILE = "runtime.session_id"


@dataclass(frozen=True)
class ImportedFacts:
    """What an imported answer says about itself: where it came from, and who vouches for what."""

    export: dict[str, Any]
    trace_id: str
    root_span_id: str
    span_ids: tuple[str, ...]
    imported_at: str
    fields: dict[str, FieldFact]

    @property
    def mark(self) -> str:
        return IMPORTED_MARK

    def field(self, path: str) -> FieldFact | None:
        return self.fields.get(path)

    @property
    def file_misrecorded(self) -> bool:
        """The statement's `export.file` holds a field name, not the export's file name.
        It is signed and stays as signed; readers say so beside it instead of trusting it.
        The export's digest, lines and every other fact are unaffected."""
        return self.export.get("file") == MISRECORDED_FILE

    @property
    def file_label(self) -> str:
        """The file name as recorded, with the defect named when it is the old one."""
        name = str(self.export.get("file"))
        if self.file_misrecorded:
            return f"{name} (not the file name: an older import's defect, see docs/import.md)"
        return name

    def unattested(self) -> dict[str, FieldFact]:
        return {k: v for k, v in self.fields.items() if v.state != Attestation.ATTESTED}


def read_imported(
    env: Envelope, seq: int, origin: str, custodian_id: str, custodian_ed25519: bytes
) -> tuple[Manifest, SignatureState, ImportedFacts]:
    """(manifest record, signature state, facts) of an imported_trace entry.

    The signature is checked against the custodian's key and the statement must name
    this vault and this seq (`verify` also checks the root before it).
    """
    signature = SignatureState.VALID
    try:
        verify_envelope(env, {custodian_id: custodian_ed25519})
    except SignatureError:
        signature = SignatureState.SIGNATURE_INVALID
    body = json.loads(env.payload)
    if not _signed_for(body, seq, origin):
        signature = SignatureState.SIGNATURE_INVALID
    st = body.get("statement") if isinstance(body, dict) else None
    if not isinstance(st, dict) or st.get("schema") != IMPORTED_SCHEMA:
        raise ValueError(f"log entry {seq} is not a {IMPORTED_SCHEMA} statement")
    facts = ImportedFacts(
        export=dict(st["export"]),
        trace_id=str(st["trace_id"]),
        root_span_id=str(st["root_span_id"]),
        span_ids=tuple(str(s) for s in st["span_ids"]),
        imported_at=str(st["imported_at"]),
        fields={str(k): FieldFact.from_json(v) for k, v in st["fields"].items()},
    )
    return imported_manifest(st), signature, facts


def _signed_for(body: object, seq: int, origin: str) -> bool:
    """Whether the signed payload is an imported trace bound to entry `seq` of `origin`."""
    place = body.get("log") if isinstance(body, dict) else None
    return (
        isinstance(body, dict)
        and body.get("type") == EntryKind.IMPORTED_TRACE
        and isinstance(place, dict)
        and place.get("seq") == seq
        and place.get("origin") == origin
    )


def not_captured(fact: FieldFact | None) -> TextResult:
    """Where the export held no whole text: its attestation, never a text."""
    state = fact.state if fact is not None else Attestation.ABSENT
    detail = f"{state}: {fact.detail}" if fact is not None and fact.detail else str(state)
    return TextResult("", NOT_CAPTURED, detail=f"imported, {detail}")


def passage_attestation(facts: ImportedFacts, index: int) -> dict[str, FieldFact]:
    """The attestation of passage `index`'s fields, by field name."""
    prefix = f"$.passages[{index}]."
    return {k[len(prefix) :]: v for k, v in facts.fields.items() if k.startswith(prefix)}


def not_located(attestation: dict[str, FieldFact]) -> tuple[CurrencyResult, Transform]:
    fact = attestation.get("chain")
    detail = fact.detail if fact is not None else "the importer did not locate it"
    return CurrencyResult(Currency.UNCHECKED, NOT_LOCATED, detail), Transform(
        TransformState.IMPORTED_NOT_LOCATED, detail
    )


def imported_json(facts: ImportedFacts) -> ImportedJSON:
    """The `imported` member of an imported answer's JSON (docs/json.md)."""
    return {
        "mark": facts.mark,
        "attested_by_producer": False,
        "export": facts.export,
        "trace_id": facts.trace_id,
        "root_span_id": facts.root_span_id,
        "span_ids": list(facts.span_ids),
        "imported_at": facts.imported_at,
        "fields": {k: v.to_json() for k, v in facts.fields.items()},
    }
