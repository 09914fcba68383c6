"""Answer-time currency: had the cited revision already been superseded when the answer was given?

A fact about the moment of the answer, from the revisions' own commit instants, and a
separate question from today's currency: an assistant whose index lagged quoted a
revision that was already out of date ("r2, published 21 days before this answer,
already said fourteen days"). States and reasons are explained in ``docs/states.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Final

from store.queries import RevisionRow
from tracer.engine.relocate import Relocation
from tracer.engine.times import aware, utc

__all__ = [
    "ANSWER_TIME",
    "ANSWER_TIME_REASONS",
    "AnswerTime",
    "AnswerTimeReason",
    "AnswerTimeState",
    "answer_time_sentence",
    "answer_time_unknown",
    "lag_words",
    "strictest_answer_time",
]


class AnswerTimeState(StrEnum):
    """Least strict first."""

    CURRENT = "current"
    UNKNOWN = "unknown"
    SUPERSEDED = "superseded"


ANSWER_TIME: Final = tuple(s.value for s in AnswerTimeState)
_ORDER = tuple(AnswerTimeState)
_RANK = {s: i for i, s in enumerate(_ORDER)}


class AnswerTimeReason(StrEnum):
    """Why a passage's answer-time state is what it is (docs/states.md, "Answer time")."""

    LATEST_AT_ANSWER = "latest_at_answer"
    CHANGED_BEFORE_ANSWER = "changed_before_answer"
    UNCHANGED_BEFORE_ANSWER = "unchanged_before_answer"
    IN_FORCE_UNREADABLE = "in_force_unreadable"
    CITED_AFTER_ANSWER = "cited_after_answer"
    UNDATED = "undated"
    CITED_REVISION_NOT_IMPORTED = "cited_revision_not_imported"
    NO_REVISIONS_IMPORTED = "no_revisions_imported"
    DERIVED_TEXT = "derived_text"
    UNKNOWN_NORMALIZER = "unknown_normalizer"
    OUT_OF_SCOPE = "out_of_scope"
    NOT_COMPUTED = "not_computed"


_R = AnswerTimeReason
#: keyed by the words, so a reason read back from JSON (a pack) finds its meaning too
ANSWER_TIME_REASONS: Final[Mapping[str, str]] = {
    _R.LATEST_AT_ANSWER: "current: the cited revision was the latest revision when the answer was generated",
    _R.CHANGED_BEFORE_ANSWER: "superseded: a revision committed before the answer no longer said the quote",
    _R.UNCHANGED_BEFORE_ANSWER: "superseded: revisions committed before the answer still said it",
    _R.IN_FORCE_UNREADABLE: "superseded: a later revision was in force; its text or the quote is unreadable",
    _R.CITED_AFTER_ANSWER: "unknown: the cited revision is dated after the answer (a clock or record fault)",
    _R.UNDATED: "unknown: the answer's or a revision's time has no UTC offset or cannot be read",
    _R.CITED_REVISION_NOT_IMPORTED: "unknown: the cited revision was never imported",
    _R.NO_REVISIONS_IMPORTED: "unknown: no revision of the document was imported",
    _R.DERIVED_TEXT: "unknown: derived text; its sources carry their own answer-time facts",
    _R.UNKNOWN_NORMALIZER: "unknown: the passage names a normalizer this build does not know",
    _R.OUT_OF_SCOPE: "unknown: outside your scope",
    _R.NOT_COMPUTED: "unknown: not computed for this passage",
}


@dataclass(frozen=True)
class AnswerTime:
    """One passage's answer-time fact.

    `in_force` is the last revision committed at or before `generated_at`. When the quote
    no longer stood in it (`changed_before_answer`), `relocation` is the quote checked
    against it (its `current_excerpt` is what that revision said, for the labelled
    answer-time pane only), and `changed_in` is the earliest revision since which, up to
    the answer, the quote had not stood.
    """

    state: AnswerTimeState
    reason: AnswerTimeReason
    generated_at: str
    detail: str = ""
    cited: RevisionRow | None = None
    in_force: RevisionRow | None = None
    in_force_is_current: bool = False
    relocation: Relocation | None = None
    changed_in: RevisionRow | None = None
    changed_at: datetime | None = None

    def but(
        self,
        reason: AnswerTimeReason,
        detail: str = "",
        *,
        relocation: Relocation | None = None,
        changed_in: RevisionRow | None = None,
        changed_at: datetime | None = None,
    ) -> AnswerTime:
        return replace(
            self,
            reason=reason,
            detail=detail,
            relocation=relocation,
            changed_in=changed_in,
            changed_at=changed_at,
        )

    def at(self, generated_at: str) -> AnswerTime:
        """The same fact for an answer generated at `generated_at` (a memoized fact is
        shared by every answer given from the same revision in force)."""
        return AnswerTime(
            self.state,
            self.reason,
            generated_at,
            self.detail,
            self.cited,
            self.in_force,
            self.in_force_is_current,
            self.relocation,
            self.changed_in,
            self.changed_at,
        )

    @property
    def seconds_before_answer(self) -> int | None:
        """How long before the answer the quote had stopped standing (the index lag)."""
        when = aware(self.generated_at)
        if self.changed_at is None or when is None:
            return None
        return int((when - self.changed_at).total_seconds())

    @property
    def excerpt(self) -> str | None:
        """What the revision in force said instead; None when it is the current revision
        (then the current-revision pane shows it, and it is not repeated)."""
        if self.relocation is None or self.in_force_is_current:
            return None
        return self.relocation.current_excerpt


def answer_time_unknown(
    reason: AnswerTimeReason, generated_at: str, *, cited: RevisionRow | None = None
) -> AnswerTime:
    return AnswerTime(AnswerTimeState.UNKNOWN, reason, generated_at, cited=cited)


def strictest_answer_time(states: Iterable[AnswerTimeState]) -> AnswerTimeState:
    """superseded > unknown > current; "unknown" when there is nothing to combine."""
    best = -1
    for s in states:
        best = max(best, _RANK[s])
    return _ORDER[best] if best >= 0 else AnswerTimeState.UNKNOWN


def lag_words(seconds: int) -> str:
    """ "21 days", "5 hours", "40 minutes": the lag as a person says it."""
    if seconds >= 2 * 86400:
        return f"{seconds // 86400} days"
    if seconds >= 86400:
        return "1 day"
    if seconds >= 7200:
        return f"{seconds // 3600} hours"
    if seconds >= 3600:
        return "1 hour"
    return f"{max(seconds, 0) // 60} minutes"


def _seconds_between(earlier: str, later: str) -> int | None:
    a, b = aware(earlier), aware(later)
    return int((b - a).total_seconds()) if a is not None and b is not None else None


def _published(rev: RevisionRow, generated_at: str) -> str:
    lag = _seconds_between(rev.committed_at, generated_at)
    return (
        f"published {lag_words(lag)} before this answer"
        if lag is not None
        else "published before this answer"
    )


def answer_time_sentence(at: AnswerTime) -> str:
    """The fact in one sentence of words (no source text: excerpts are shown apart, labelled).

    E.g. "superseded when answered: revision C, published 21 days before this answer,
    already said otherwise".
    """
    if at.state == AnswerTimeState.CURRENT:
        if at.cited is None:
            return (
                "current when answered: the cited revision was the latest revision at the answer time "
                f"{utc(at.generated_at)}"
            )
        return (
            f"current when answered: revision {at.cited.revision} was the latest revision at the answer "
            f"time {utc(at.generated_at)} (committed {utc(at.cited.committed_at)})"
        )
    if at.state == AnswerTimeState.UNKNOWN:
        return f"answer time unknown ({at.reason}): {ANSWER_TIME_REASONS.get(at.reason, at.reason)}"
    f = at.in_force
    cited = at.cited.revision if at.cited is not None else "?"
    if f is None:
        return f"superseded when answered ({at.reason})"
    if at.reason == AnswerTimeReason.CHANGED_BEFORE_ANSWER:
        changed = at.changed_in or f
        out = (
            f"superseded when answered: the answer cites revision {cited}, but revision "
            f"{changed.revision}, {_published(changed, at.generated_at)}, already said otherwise"
        )
        if changed.revision != f.revision:
            out += f"; revision {f.revision} was in force ({_published(f, at.generated_at)})"
        return out
    if at.reason == AnswerTimeReason.UNCHANGED_BEFORE_ANSWER:
        return (
            f"superseded when answered: revision {f.revision} ({_published(f, at.generated_at)}) "
            f"was in force instead of {cited}, and still said this"
        )
    return (
        f"superseded when answered: revision {f.revision} ({_published(f, at.generated_at)}) was "
        f"in force instead of {cited}; whether it still said this cannot be read ({at.detail})"
    )
