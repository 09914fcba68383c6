"""Many answers at once: revalidation, impact, and the paged answers list.

The TUI and the CLI both come here, so a state shown in a list is computed by exactly
the code that computes it in a trace.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from store import queries
from store.attest import IMPORTED_MARK
from store.gcpause import no_cycle_collection
from store.queries import AnswerFilter, AnswerRow
from store.records import LocatorJSON
from tracer.clock import now_iso
from tracer.engine.answertime import AnswerTimeState
from tracer.engine.jsonshapes import (
    AnswerStateJSON,
    CheckpointRefJSON,
    CitationVerdictJSON,
    CountsJSON,
    RevalidationJSON,
)
from tracer.engine.normalizers import RECORDED
from tracer.engine.relocate import Locator
from tracer.engine.serialize import locator_json, utc
from tracer.engine.session import Session
from tracer.engine.trace import CitationVerdict, Summary, Tracer
from tracer.engine.vocabulary import Currency, Integrity

__all__ = ["AnswerState", "Revalidation", "answer_page", "impact", "revalidate"]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class AnswerState:
    row: AnswerRow
    summary: Summary

    def to_json(self) -> AnswerStateJSON:
        r, s = self.row, self.summary
        if not s.visible:
            # Outside the viewer's scope (itself or through its lineage): the id and the word.
            return {
                "answer_id": r.answer_id,
                "run_id": None,
                "kind": None,
                "generated_at": None,
                "producer": None,
                "citations": None,
                "integrity": Integrity.UNAVAILABLE,
                "currency": Currency.UNAVAILABLE,
                "answer_time": AnswerTimeState.UNKNOWN,
                "citation_verdicts": None,
            }
        out: AnswerStateJSON = {
            "answer_id": r.answer_id,
            "run_id": r.run_id,
            "kind": r.answer_kind,
            "generated_at": utc(r.generated_at),
            "producer": r.producer_system,
            "citations": r.n_citations,
            "integrity": s.integrity,
            "currency": s.currency,
            "answer_time": s.answer_time,
            "citation_verdicts": [_citation_json(c) for c in s.citations],
        }
        if r.answer_kind == "imported":
            # an imported trace, signed by its importer: nothing in it is attested by a producer
            out["imported"] = IMPORTED_MARK
        return out


def _loc(loc: Locator | None) -> LocatorJSON | None:
    return locator_json(loc) if loc is not None else None


def _citation_json(c: CitationVerdict) -> CitationVerdictJSON:
    """Per citation: both states, and per passage why (reason, normalizer, both locators)."""
    return {
        "index": c.index,
        "integrity": c.integrity,
        "currency": c.currency,
        "answer_time": c.answer_time,
        "passages": [
            {
                "passage_id": p.passage_id,
                "visible": p.visible,
                "currency": {"state": p.state, "reason": p.reason},
                "effective_currency": p.effective_currency,
                "normalizer": p.normalizer or None,
                "recorded_normalizer": p.recorded_normalizer or None,
                "locator": _loc(p.locator),
                "new_locator": _loc(p.new_locator),
                "answer_time": {"state": p.answer_time, "reason": p.answer_time_reason},
            }
            for p in c.passages
        ],
    }


@dataclass
class Revalidation:
    computed_at: str
    checkpoint: CheckpointRefJSON
    answers: list[AnswerState] = field(default_factory=list)
    target: str = ""
    #: for impact: the answers that cite the target themselves (the rest depend on it through lineage)
    direct: frozenset[str] | None = None
    #: the normalizer choice ("recorded" or a version /1 citations were carried over to)
    normalizer: str = RECORDED
    #: only answers given from a revision already superseded at answer time were kept
    superseded_only: bool = False

    @property
    def counts(self) -> CountsJSON:
        return {
            "integrity": dict(Counter(a.summary.integrity for a in self.answers)),
            "currency": dict(Counter(a.summary.currency for a in self.answers)),
            "answer_time": dict(Counter(a.summary.answer_time for a in self.answers)),
        }

    def to_json(self) -> RevalidationJSON:
        out: RevalidationJSON = {
            "computed_at": self.computed_at,
            "checkpoint": self.checkpoint,
            "counts": self.counts,
            "normalizer": self.normalizer,
            "answers": [self._answer_json(a) for a in self.answers],
        }
        if self.superseded_only:
            out["selection"] = "answered_from_superseded"
        if self.target:
            out["target"] = self.target
        return out

    def _answer_json(self, a: AnswerState) -> AnswerStateJSON:
        out = a.to_json()
        if self.direct is not None:
            out["dependency"] = "direct" if a.row.answer_id in self.direct else "lineage"
        return out


def _checkpoint(session: Session) -> CheckpointRefJSON:
    return {"size": session.status.checkpoint_size, "root": session.status.checkpoint_root}


def answer_page(
    session: Session, tracer: Tracer, f: AnswerFilter, limit: int, after_seq: int = -1
) -> list[AnswerState]:
    rows = queries.answer_rows(session.vault, f, limit, after_seq)
    tracer.prime(rows)
    return [AnswerState(r, tracer.summary(r.answer_id)) for r in rows]


def revalidate(
    session: Session,
    progress: Progress | None = None,
    f: AnswerFilter | None = None,
    normalizer: str = RECORDED,
    superseded_only: bool = False,
) -> Revalidation:
    """Currency and integrity of every answer (or those matching `f`), paged through the log.

    `normalizer`: "recorded", or the version to check ``/1`` citations under.
    `superseded_only`: keep only answers given from a revision already superseded then.
    """
    with no_cycle_collection(), session.vault.blobs.index():
        out = _revalidate(session, progress, f, normalizer)
    if superseded_only:
        out.answers = [a for a in out.answers if a.summary.answer_time == AnswerTimeState.SUPERSEDED]
        out.superseded_only = True
    return out


def _revalidate(
    session: Session, progress: Progress | None, f: AnswerFilter | None, normalizer: str = RECORDED
) -> Revalidation:
    f = f or AnswerFilter()
    tracer = Tracer(session, normalizer)
    total = queries.answer_count(session.vault, f)
    out = Revalidation(now_iso(), _checkpoint(session), normalizer=normalizer)
    cursor = -1
    while True:
        page = answer_page(session, tracer, f, 500, cursor)
        if not page:
            break
        out.answers.extend(page)
        cursor = page[-1].row.seq
        if progress:
            progress("answers", len(out.answers), total)
    return out


def impact(
    session: Session,
    document: str | None = None,
    revision: str | None = None,
    digest: str | None = None,
    normalizer: str = RECORDED,
    superseded_only: bool = False,
) -> Revalidation:
    """Every answer that depends on a document (or one revision of it) or on a digest.

    Dependence is transitive through lineage: an answer that cites a note built from the
    document is affected by a retention or policy change to it as much as the note is.
    """
    if digest:
        ids = queries.answers_citing_digest(session.vault, digest)
        target = f"digest {digest}"
    else:
        ids = queries.answers_citing_document(session.vault, document or "", revision)
        target = f"document {document}" + (f" revision {revision}" if revision else "")
    dependents: dict[str, set[str]] = {}
    for derived, source in queries.derivation_edges(session.vault):
        dependents.setdefault(source, set()).add(derived)
    found, todo = set(ids), list(ids)
    while todo:
        for d in dependents.get(todo.pop(), ()):
            if d not in found:
                found.add(d)
                todo.append(d)
    result = revalidate(
        session, None, AnswerFilter(answer_ids=tuple(sorted(found))), normalizer, superseded_only
    )
    result.target = target
    result.direct = frozenset(ids)
    return result
