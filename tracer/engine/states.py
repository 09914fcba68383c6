"""The two axes of DESIGN.md, as words, with their order of strictness.

Integrity asks whether a record is exactly what was captured; currency asks whether the
source still says it today.  They are never folded into one another.  "Strictest" means
least trustworthy: derived text takes the strictest state found anywhere in its lineage.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "CURRENCY",
    "CURRENCY_MEANING",
    "INTEGRITY",
    "INTEGRITY_MEANING",
    "MODEL_INPUT",
    "MODEL_INPUT_MEANING",
    "strictest_currency",
    "strictest_integrity",
]

# Least strict first.  "unavailable" on the integrity axis means "outside your scope":
# nothing about that record, not even whether it was purged, is revealed to the viewer.
INTEGRITY: tuple[str, ...] = (
    "intact",
    "purged",
    "not_captured",
    "unavailable",
    "checksum_mismatch",
    "signature_invalid",
    "missing",
)
CURRENCY: tuple[str, ...] = (
    "verified",
    "moved",
    "unchecked",
    "ambiguous",
    "stale",
    "unavailable",
)

INTEGRITY_MEANING = {
    "intact": "the retained text hashes to the digest that was signed and logged",
    "purged": "deleted under a retention policy; a tombstone says who, when and why",
    "not_captured": "imported: the export held no whole text here (absent, redacted or truncated)",
    "unavailable": "outside your scope: nothing about this record is shown to you",
    "checksum_mismatch": "the retained text does not hash to its recorded digest: altered",
    "signature_invalid": "the producer's signature over the manifest does not verify",
    "missing": "absent and no tombstone explains it: evidence lost (alarm)",
}
CURRENCY_MEANING = {
    "verified": "the cited revision is current (or unchanged since) and the quote matches",
    "moved": "the same quote sits, once, in a structurally compatible place of a later revision",
    "unchecked": "could not be checked now, e.g. the source's revisions were never imported",
    "ambiguous": "the quote appears in several places and the structure does not pick one",
    "stale": "the quote changed in a later revision; old and current text shown side by side",
    "unavailable": "the source was deleted, its revision purged, or it is outside your scope",
}

#: what a producer's passage says the model was given (`store.records.MODEL_INPUT_STATES`):
#: not an axis of its own and never folded into integrity, a fact the producer signed
MODEL_INPUT: tuple[str, ...] = ("sent", "rewritten", "not_sent")
MODEL_INPUT_MEANING = {
    "sent": "the model was given this passage; the model input is the prompt text that carried it",
    "rewritten": "the model was given this passage as the pipeline transformed it (escaped, compressed …)",
    "not_sent": "retrieved, but in no prompt sent to the model: no model input, and no citation rests on it",
}


def _strictest(order: tuple[str, ...], states: Iterable[str], empty: str) -> str:
    rank = {s: i for i, s in enumerate(order)}
    best = -1
    for s in states:
        best = max(best, rank[s])
    return order[best] if best >= 0 else empty


def strictest_integrity(states: Iterable[str]) -> str:
    return _strictest(INTEGRITY, states, "intact")


def strictest_currency(states: Iterable[str]) -> str:
    return _strictest(CURRENCY, states, "unchecked")
