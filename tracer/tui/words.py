"""Plain words before reason codes: "same section, shifted (relocated_same_section)".

The code stays visible beside the words, for people who look it up in docs/states.md;
`tests/tui/test_words.py` checks that every code documented there has words here.
"""

from __future__ import annotations

from rich.text import Text

from tracer.tui.text import plain

__all__ = ["REASON_WORDS", "TRANSFORM_WORDS", "reason", "transform"]

REASON_WORDS: dict[str, str] = {
    # decided from the log (currency.py)
    "out_of_scope": "outside your scope",
    "source_deleted": "source document deleted",
    "latest_revision_purged": "latest revision purged by retention",
    "no_revisions_imported": "no revision of the document imported",
    "cited_revision_not_imported": "cited revision never imported",
    "latest_revision_unreadable": "latest revision's text unreadable",
    "historical_text_unavailable": "no readable historical quote",
    "derived_text": "derived text: state comes from its lineage",
    "unknown_normalizer": "normalizer unknown to this build",
    "imported_not_located": "imported: not located in a source revision",
    # decided by the relocation rules (relocate.py)
    "at_locator": "current revision, quote at its place",
    "normalized_identical": "later revision identical apart from whitespace",
    "unchanged_at_locator": "later revision, quote at the same place",
    "relocated_same_section": "same section, shifted",
    "relocated_compatible_section": "moved to a compatible section",
    "relocated_heading_agrees": "several places, one with a matching heading",
    "relocated_renumbered_section": "same section, renumbered heading",
    "multiple_matches": "several places, none preferred",
    "unique_match_incompatible_section": "one place, under an incompatible heading",
    "not_at_locator": "not at the recorded place in the same revision",
    "quote_changed": "quote changed",
    "quote_removed": "quote removed",
    "empty_quote": "empty quote",
    # answer-level reasons
    "lineage_cycle": "circular lineage",
    "lineage_target_missing": "a lineage source is not in the vault",
    "entry_damaged": "log entry unreadable",
}

TRANSFORM_WORDS: dict[str, str] = {
    "found_at_locator": "found at its locator",
    "found_elsewhere": "found elsewhere in the cited revision",
    "not_found": "not in the cited revision",
    "unknown_normalizer": "unknown normalizer",
    "revision_not_imported": "cannot check: cited revision never imported",
    "revision_unreadable": "cannot check: cited revision's text unreadable",
    "passage_unreadable": "cannot check: passage text unreadable",
    "matches_source": "is its source's stored text",
    "found_in_source": "quotes its source's stored text",
    "not_in_source": "not in its source's stored text",
    "source_missing": "source not in the vault",
    "source_unreadable": "source's text unreadable",
    "unavailable": "outside your scope",
    "imported_not_located": "imported: not located, nothing to check",
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
