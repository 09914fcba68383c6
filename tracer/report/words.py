"""Plain-English names for the codes in report.json, shared by the HTML and Markdown views."""

from __future__ import annotations

from typing import Any

__all__ = [
    "candidates_intro",
    "heading_path",
    "is_revision_tombstone",
    "locator_text",
    "reason_text",
    "subject_label",
]

_SUBJECTS = {
    "question": "question text",
    "answer": "answer text",
    "retrieved": "retrieved text",
    "model_input": "model input text",
    "cited_revision": "text of cited revision",
    "current_revision": "text of current revision",
}


def subject_label(tb: dict[str, Any]) -> str:
    """What a tombstone stands in for, e.g. "text of cited revision A"."""
    subject = str(tb.get("subject", ""))
    base = _SUBJECTS.get(subject, subject)
    return f"{base} {tb['revision']}" if tb.get("revision") else base


def is_revision_tombstone(tb: dict[str, Any], passage_id: str) -> bool:
    """A purged source revision behind this passage (its own texts have their own slots)."""
    return tb.get("passage_id") == passage_id and bool(tb.get("revision"))


def heading_path(headings: list[str]) -> str:
    """A heading path as one line; the caller escapes the result."""
    return " › ".join(headings) if headings else "(no heading)"


def locator_text(loc: dict[str, Any]) -> str:
    """A locator as one line, e.g. "Warranty › Coverage, paragraph 0, characters 25–124"."""
    return (
        f"{heading_path(loc.get('heading_path', []))}, paragraph {loc.get('paragraph')}, "
        f"characters {loc.get('char_start')}–{loc.get('char_end')}"
    )


def candidates_intro(n: int, revision: str | None) -> str:
    """The sentence before an ambiguous quote's candidate places; the caller escapes it."""
    where = f"current revision {revision}" if revision else "the current revision"
    places = "1 place" if n == 1 else f"{n} places"
    return f"Candidate places in {where} ({places}); the document structure does not confirm any:"


def reason_text(currency: dict[str, Any]) -> str:
    """A currency reason code with its detail, e.g. "source_deleted: deleted at 2026-09-14"."""
    reason, detail = str(currency.get("reason", "")), str(currency.get("detail", ""))
    return f"{reason}: {detail}" if reason and detail else reason or detail
