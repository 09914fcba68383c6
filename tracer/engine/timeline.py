"""One document's revisions in commit order, with the answers that cite it placed among them.

What the investigator of an index lag wants to see at a glance: r2 was committed on the
11th, and these answers, given after it, still quoted r1. Only revisions and answers
the viewer may see are listed; an answer outside scope is left out altogether.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from store import queries
from store.queries import RevisionRow
from tracer.engine.answertime import AnswerTimeState
from tracer.engine.normalizers import RECORDED
from tracer.engine.session import Session
from tracer.engine.times import utc
from tracer.engine.trace import AnswerTrace, Tracer, UnknownAnswerError
from tracer.engine.vocabulary import Currency

__all__ = ["Timeline", "TimelineEvent", "document_timeline"]


@dataclass(frozen=True)
class TimelineEvent:
    """A revision committed, or an answer generated citing the document.

    For an answer: `revision` is the cited revision, `answer_time` and `reason` its
    answer-time fact, `currency` the passage's currency today.
    """

    at: str
    kind: str  # "revision" or "answer"
    revision: str
    answer_id: str = ""
    passage_id: str = ""
    #: "" for a revision
    answer_time: AnswerTimeState | Literal[""] = ""
    reason: str = ""
    currency: Currency | Literal[""] = ""
    is_latest: bool = False


@dataclass(frozen=True)
class Timeline:
    document_id: str
    events: tuple[TimelineEvent, ...]
    #: answers citing the document that were not placed (beyond `limit`)
    left_out: int = 0

    @property
    def superseded(self) -> int:
        return sum(
            1 for e in self.events if e.kind == "answer" and e.answer_time == AnswerTimeState.SUPERSEDED
        )


def _key(e: TimelineEvent) -> tuple[datetime | str, int]:
    try:
        when: datetime | str = datetime.fromisoformat(e.at.replace("Z", "+00:00"))
    except ValueError:
        when = e.at
    return (when, 0 if e.kind == "revision" else 1)


def document_timeline(
    session: Session, document_id: str, normalizer: str = RECORDED, limit: int = 500
) -> Timeline:
    """The timeline of `document_id` for this viewer (answers traced without recording)."""
    tracer = Tracer(session, normalizer)
    revs = tracer.currency.revisions(document_id)
    visible = [r for r in revs if session.can_read(r.collection)]
    events = _revision_events(revs, visible)
    ids = queries.answers_citing_document(session.vault, document_id)
    for aid in ids[:limit]:
        try:
            t = tracer.trace(aid, record=False)
        except UnknownAnswerError:
            continue
        if t.visible:
            events += _answer_events(t, aid, document_id)
    if len(revs) != len(visible) and not visible:
        events = [e for e in events if e.kind == "revision"]
    events.sort(key=_key)
    return Timeline(document_id, tuple(events), max(0, len(ids) - limit))


def _revision_events(revs: list[RevisionRow], visible: list[RevisionRow]) -> list[TimelineEvent]:
    """One event per revision the viewer may read; the document's last revision is marked."""
    return [
        TimelineEvent(utc(r.committed_at), "revision", r.revision, is_latest=r is revs[-1]) for r in visible
    ]


def _answer_events(t: AnswerTrace, aid: str, document_id: str) -> list[TimelineEvent]:
    """One event per visible passage of answer `aid` that cites `document_id`."""
    events: list[TimelineEvent] = []
    for p in t.passages:
        if not p.visible or p.record is None or p.document_id != document_id:
            continue
        at = p.currency.answer_time
        events.append(
            TimelineEvent(
                utc(t.generated_at),
                "answer",
                str(p.record.document.revision),
                answer_id=aid,
                passage_id=p.passage_id,
                answer_time=at.state if at is not None else AnswerTimeState.UNKNOWN,
                reason=at.reason if at is not None else "",
                currency=p.currency.state,
            )
        )
    return events
