"""Attestation: who vouches for each fact of an imported trace.

An export from an observability tool carries no producer signature, so nothing in it is
`attested`; the importer reads or computes every value it keeps (`importer-computed`,
re-derivable from the export file, which the vault keeps) and says so for everything it
could not keep whole: `absent`, `redacted` or `truncated`.  Documented in docs/import.md.

These words are part of the signed imported statement (`store/imported.py`): the
importers write them and the engine reads them, so they live below both.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from store.statements import FieldFactJSON

__all__ = [
    "IMPORTED_MARK",
    "REDACTION_MARKERS",
    "Attestation",
    "FieldFact",
    "is_redacted",
]

#: the words shown beside every imported fact that its producer did not attest
IMPORTED_MARK = "imported — not attested by the producer"

#: values (whole, or inside a text) that instrumentations write instead of hidden content:
#: OpenInference's TraceConfig (`__REDACTED__`), and common scrubbers' placeholders
REDACTION_MARKERS: tuple[str, ...] = (
    "__REDACTED__",
    "[REDACTED]",
    "<REDACTED>",
    "[redacted]",
    "<redacted>",
    "[FILTERED]",
    "[MASKED]",
)


class Attestation(StrEnum):
    """The state of one field of an imported trace."""

    #: signed by the producer inside the trace itself (no OTLP reader can produce this)
    ATTESTED = "attested"
    #: read or computed by the importer from the export file (a digest, a locator, a copied value)
    IMPORTER_COMPUTED = "importer-computed"
    #: not in the export (content capture off, never recorded, stored elsewhere)
    ABSENT = "absent"
    #: replaced or partly replaced by a redaction marker
    REDACTED = "redacted"
    #: cut at a length limit, or dropped with the span's attribute count limit
    TRUNCATED = "truncated"

    @property
    def whole(self) -> bool:
        """Whether a value in this state is whole (may be hashed and kept as a text)."""
        return self in (Attestation.ATTESTED, Attestation.IMPORTER_COMPUTED)


@dataclass(frozen=True, slots=True)
class FieldFact:
    """One field's attestation: its state, where in the export it came from, and why."""

    state: Attestation
    source: str = ""
    detail: str = ""

    def to_json(self) -> FieldFactJSON:
        return {"state": str(self.state), "source": self.source or None, "detail": self.detail or None}

    @classmethod
    def from_json(cls, value: Any) -> FieldFact:
        if not isinstance(value, dict):
            raise ValueError(f"attestation is not an object: {value!r}")
        return cls(
            Attestation(value["state"]), str(value.get("source") or ""), str(value.get("detail") or "")
        )


def is_redacted(text: str, markers: tuple[str, ...] = REDACTION_MARKERS) -> bool:
    """Whether a text is, or contains, a redaction marker (then it is not what was sent)."""
    return any(m in text for m in markers)
