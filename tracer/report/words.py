"""Plain-English names for the codes in report.json, shared by the HTML and Markdown views."""

from __future__ import annotations

from typing import Any

from tracer.engine.answertime import ANSWER_TIME_REASONS, lag_words

__all__ = [
    "answer_time_text",
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


def answer_time_text(at: dict[str, Any]) -> str:
    """A passage's answer-time fact in words, from report.json (no source text in it)."""
    state, why = str(at.get("state", "unknown")), str(at.get("reason", ""))
    head = f"At answer time: {state} ({why})"
    cited = (at.get("cited_revision") or {}).get("revision", "?")
    changed, in_force = at.get("changed_in"), at.get("in_force")
    if why == "changed_before_answer" and changed:
        lag = changed.get("seconds_before_answer")
        when = f"{lag_words(int(lag))} before this answer" if isinstance(lag, int) else "before this answer"
        out = (
            f"{head}: the answer cites revision {cited}, but revision {changed['revision']}, "
            f"committed {changed['committed_at']} ({when}), already said otherwise"
        )
        if in_force and in_force.get("revision") != changed.get("revision"):
            out += f"; revision {in_force['revision']} was in force"
        return out + "."
    if state == "superseded" and in_force:
        then = f"revision {in_force['revision']} ({in_force['committed_at']})"
        return f"{head}: {then} was in force instead of {cited}."
    return f"{head}: {ANSWER_TIME_REASONS.get(why, why)}."
