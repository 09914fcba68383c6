"""Plain words before reason codes: "same section, shifted (relocated_same_section)".

The code stays visible beside the words, for people who look it up in docs/states.md;
`tests/tui/test_words.py` checks that every code documented there has words here.
"""

from __future__ import annotations

from rich.text import Text

from tracer.engine.vocabulary import AnswerReason, CurrencyReason, TransformState
from tracer.tui.text import plain

__all__ = ["REASON_WORDS", "TRANSFORM_WORDS", "reason", "transform"]

REASON_WORDS: dict[str, str] = {
    # decided from the log (currency.py)
    CurrencyReason.OUT_OF_SCOPE: "outside your scope",
    CurrencyReason.SOURCE_DELETED: "source document deleted",
    CurrencyReason.LATEST_REVISION_PURGED: "latest revision purged by retention",
    CurrencyReason.NO_REVISIONS_IMPORTED: "no revision of the document imported",
    CurrencyReason.CITED_REVISION_NOT_IMPORTED: "cited revision never imported",
    CurrencyReason.LATEST_REVISION_UNREADABLE: "latest revision's text unreadable",
    CurrencyReason.HISTORICAL_TEXT_UNAVAILABLE: "no readable historical quote",
    CurrencyReason.DERIVED_TEXT: "derived text: state comes from its lineage",
    CurrencyReason.UNKNOWN_NORMALIZER: "normalizer unknown to this build",
    CurrencyReason.IMPORTED_NOT_LOCATED: "imported: not located in a source revision",
    # decided by the relocation rules (relocate.py)
    CurrencyReason.AT_LOCATOR: "current revision, quote at its place",
    CurrencyReason.NORMALIZED_IDENTICAL: "later revision identical apart from whitespace",
    CurrencyReason.UNCHANGED_AT_LOCATOR: "later revision, quote at the same place",
    CurrencyReason.RELOCATED_SAME_SECTION: "same section, shifted",
    CurrencyReason.RELOCATED_COMPATIBLE_SECTION: "moved to a compatible section",
    CurrencyReason.RELOCATED_HEADING_AGREES: "several places, one with a matching heading",
    CurrencyReason.RELOCATED_RENUMBERED_SECTION: "same section, renumbered heading",
    CurrencyReason.MULTIPLE_MATCHES: "several places, none preferred",
    CurrencyReason.UNIQUE_MATCH_INCOMPATIBLE_SECTION: "one place, under an incompatible heading",
    CurrencyReason.NOT_AT_LOCATOR: "not at the recorded place in the same revision",
    CurrencyReason.QUOTE_CHANGED: "quote changed",
    CurrencyReason.QUOTE_REMOVED: "quote removed",
    CurrencyReason.EMPTY_QUOTE: "empty quote",
    # answer-level reasons
    AnswerReason.LINEAGE_CYCLE: "circular lineage",
    AnswerReason.LINEAGE_TARGET_MISSING: "a lineage source is not in the vault",
    AnswerReason.ENTRY_DAMAGED: "log entry unreadable",
}

TRANSFORM_WORDS: dict[str, str] = {
    TransformState.FOUND_AT_LOCATOR: "found at its locator",
    TransformState.FOUND_ELSEWHERE: "found elsewhere in the cited revision",
    TransformState.NOT_FOUND: "not in the cited revision",
    TransformState.UNKNOWN_NORMALIZER: "unknown normalizer",
    TransformState.REVISION_NOT_IMPORTED: "cannot check: cited revision never imported",
    TransformState.REVISION_UNREADABLE: "cannot check: cited revision's text unreadable",
    TransformState.PASSAGE_UNREADABLE: "cannot check: passage text unreadable",
    TransformState.MATCHES_SOURCE: "is its source's stored text",
    TransformState.FOUND_IN_SOURCE: "quotes its source's stored text",
    TransformState.NOT_IN_SOURCE: "not in its source's stored text",
    TransformState.SOURCE_MISSING: "source not in the vault",
    TransformState.SOURCE_UNREADABLE: "source's text unreadable",
    TransformState.UNAVAILABLE: "outside your scope",
    TransformState.IMPORTED_NOT_LOCATED: "imported: not located, nothing to check",
}


def _worded(words: dict[str, str], code: str) -> Text:
    said = words.get(code)
    if said is None:
        return plain(code)
    return Text.assemble(plain(said), plain(f" ({code})", "dim"))


def reason(code: str) -> Text:
    """A currency or answer-level reason code: its plain words, then the code."""
    return _worded(REASON_WORDS, code)


def transform(code: str) -> Text:
    """A transformation-trace verdict: its plain words, then the code."""
    return _worded(TRANSFORM_WORDS, code)
