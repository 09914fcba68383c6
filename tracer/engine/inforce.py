"""Answer time: was the revision a passage cites already superseded when the answer was
generated, and did the quote still stand in the revision then in force?

One `AnswerTimeJudge` serves one `CurrencyEngine` and owns the answer-time caches (commit
instants, where each cited revision stands, the quote checks and the facts shared by the
answers given from one superseded revision); the engine owns the reads and today's
verdicts, which both use.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from store.queries import RevisionRow
from store.records import Chain, Passage
from tracer.engine.answertime import AnswerTime, AnswerTimeReason, AnswerTimeState, answer_time_unknown
from tracer.engine.evidence import TextResult
from tracer.engine.memo import Memo
from tracer.engine.normalizers import Normalizer
from tracer.engine.quotes import carry, stand_in
from tracer.engine.relocate import still_says
from tracer.engine.times import aware
from tracer.engine.vocabulary import CurrencyReason

if TYPE_CHECKING:
    from tracer.engine.currency import CurrencyEngine, CurrencyResult, Scope

__all__ = ["AnswerTimeJudge"]


@dataclass(frozen=True)
class _Superseded:
    """A passage whose cited revision `ci` of `revs` (dated by `instants`) was no longer
    in force at answer time: revision `k` was.  What `_in_force` judges from, one value."""

    chain: Chain
    retrieved: TextResult
    cited: RevisionRow
    revs: list[RevisionRow]
    instants: list[datetime]
    ci: int
    k: int


class AnswerTimeJudge:
    """The answer-time facts of one engine's passages, memoized for its run."""

    def __init__(self, engine: CurrencyEngine):
        self.engine = engine
        self._instants: dict[str, list[datetime] | None] = {}
        self._cited_at: dict[tuple[str, str], int | None] = {}
        self._holds: Memo[tuple[Any, ...], bool] = Memo(16384)
        #: answer-time facts of passages answered from a superseded revision, by passage
        #: and revision in force (`generated_at` is filled in per answer)
        self._superseded: Memo[tuple[Any, ...], AnswerTime] = Memo(65536)

    def _instants_of(self, document_id: str) -> list[datetime] | None:
        if document_id not in self._instants:
            found = [aware(r.committed_at) for r in self.engine.revisions(document_id)]
            dated = [x for x in found if x is not None]
            self._instants[document_id] = dated if len(dated) == len(found) else None
        return self._instants[document_id]

    def _holds_quote(
        self,
        chain: Chain,
        quote: str,
        cited: RevisionRow,
        cited_text: TextResult | None,
        rev: RevisionRow,
        rev_text: str,
        recorded: Normalizer,
        norm: Normalizer,
    ) -> bool:
        loc = chain.locator
        key = (norm.version, quote, loc, cited.content_sha256, rev.content_sha256)
        found = self._holds.get(key)
        if found is None:
            old = cited_text.text if cited_text is not None and cited_text.verified else None
            q, carried = carry(quote, loc, old, recorded, norm)
            if old is None:
                old = stand_in(chain, q, carried, norm)
            found = self._holds.put(key, still_says(q, carried, old, rev_text, norm))
        return found

    def judge(
        self,
        ps: Passage,
        retrieved: TextResult,
        key: tuple[Any, ...] | None,
        cur: CurrencyResult,
        generated_at: str,
    ) -> AnswerTime:
        """Was the cited revision already superseded when the answer was generated?

        From the revisions' own commit instants: the revision in force at answer time is
        the last one committed at or before `generated_at` (commit instant, any offset,
        then log order). If it is a later one than the cited revision, the answer was
        given from a superseded revision; whether the quote still stood in it, and since
        which revision it had not, is decided by the same anchored search as `moved`.
        `key` is the passage's `_currency_key` (None: not memoized).
        """
        unknown = answer_time_unknown
        if cur.reason == CurrencyReason.OUT_OF_SCOPE:
            return unknown(AnswerTimeReason.OUT_OF_SCOPE, generated_at)
        if ps.derived_from:
            return unknown(AnswerTimeReason.DERIVED_TEXT, generated_at)
        chain = ps.located()
        if self.engine.norms(chain) is None:
            return unknown(AnswerTimeReason.UNKNOWN_NORMALIZER, generated_at)
        doc = chain.document_id
        revs = self.engine.revisions(doc)
        if not revs:
            return unknown(AnswerTimeReason.NO_REVISIONS_IMPORTED, generated_at)
        ci = self._cited_index(doc, chain.revision)
        if ci is None:
            return unknown(AnswerTimeReason.CITED_REVISION_NOT_IMPORTED, generated_at)
        cited = revs[ci]
        instants = self._instants_of(doc)
        when = aware(generated_at)
        if instants is None or when is None:
            return unknown(AnswerTimeReason.UNDATED, generated_at, cited=cited)
        if instants[ci] > when:
            return unknown(AnswerTimeReason.CITED_AFTER_ANSWER, generated_at, cited=cited)
        k = bisect_right(instants, when) - 1
        if k <= ci:
            return AnswerTime(
                AnswerTimeState.CURRENT,
                AnswerTimeReason.LATEST_AT_ANSWER,
                generated_at,
                cited=cited,
                in_force=cited,
            )
        # the rest depends on the answer's time only through the revision in force (k):
        # answers given from the same superseded revision share it
        superseded = _Superseded(chain, retrieved, cited, revs, instants, ci, k)
        return self._in_force_memo(key, superseded).at(generated_at)

    def _in_force_memo(self, key: tuple[Any, ...] | None, sup: _Superseded) -> AnswerTime:
        """`_in_force`, memoized per passage and revision in force (`key` None: not memoized)."""
        if key is None:
            return self._in_force(sup)
        memo = self._superseded.get((*key, sup.k))
        if memo is None:
            memo = self._superseded.put((*key, sup.k), self._in_force(sup))
        return memo

    def _cited_index(self, document_id: str, revision: str) -> int | None:
        """Where the cited revision stands in the document's ordered revisions (the first
        one of that name, as `cited_revision` finds it), memoized per run."""
        pair = (document_id, revision)
        if pair not in self._cited_at:
            revs = self.engine.revisions(document_id)
            self._cited_at[pair] = next((i for i, r in enumerate(revs) if r.revision == revision), None)
        return self._cited_at[pair]

    def _in_force(self, sup: _Superseded) -> AnswerTime:
        """The answer-time fact when revision `k`, later than the cited `ci`, was in force
        (`generated_at` left empty: the caller fills it in)."""
        chain, retrieved, cited, revs, instants = sup.chain, sup.retrieved, sup.cited, sup.revs, sup.instants
        ci, k = sup.ci, sup.k
        s = self.engine.source
        norms = self.engine.norms(chain)
        assert norms is not None  # noqa: S101 - the caller returned earlier otherwise
        recorded, norm = norms
        generated_at = ""
        in_force = revs[k]
        is_current = k == len(revs) - 1
        if not s.can_read(in_force.collection):
            return answer_time_unknown(AnswerTimeReason.OUT_OF_SCOPE, generated_at, cited=cited)
        cited_text = self.engine.revision_text(cited)
        quote = self.engine.quote(chain, retrieved, cited, cited_text, recorded)
        # every return below names its own reason
        base = AnswerTime(
            AnswerTimeState.SUPERSEDED,
            AnswerTimeReason.IN_FORCE_UNREADABLE,
            generated_at,
            cited=cited,
            in_force=in_force,
            in_force_is_current=is_current,
        )
        if quote is None:
            return base.but(AnswerTimeReason.IN_FORCE_UNREADABLE, "the historical quote cannot be read")
        text = self.engine.revision_text(in_force)
        if not text.verified or text.text is None:
            return base.but(
                AnswerTimeReason.IN_FORCE_UNREADABLE, f"the revision in force at answer time is {text.state}"
            )
        if self._holds_quote(chain, quote, cited, cited_text, in_force, text.text, recorded, norm):
            return base.but(AnswerTimeReason.UNCHANGED_BEFORE_ANSWER)
        rel = self.engine.verdict(chain, quote, cited, cited_text, in_force, text, recorded, norm)
        first = self._first_changed(s, chain, quote, cited, cited_text, revs, (ci, k), (recorded, norm))
        return base.but(
            AnswerTimeReason.CHANGED_BEFORE_ANSWER,
            relocation=rel,
            changed_in=revs[first],
            changed_at=instants[first],
        )

    def _first_changed(
        self,
        s: Scope,
        chain: Chain,
        quote: str,
        cited: RevisionRow,
        cited_text: TextResult | None,
        revs: list[RevisionRow],
        span: tuple[int, int],
        norms: tuple[Normalizer, Normalizer],
    ) -> int:
        """The earliest revision since which, up to the answer (`k`), the quote had not
        stood: walking back towards the cited `ci`, until a revision cannot be read or
        still holds the quote."""
        recorded, norm = norms
        ci, k = span
        first = k
        for j in range(k - 1, ci, -1):
            t = self.engine.revision_text(revs[j])
            if not t.verified or t.text is None or not s.can_read(revs[j].collection):
                break
            if self._holds_quote(chain, quote, cited, cited_text, revs[j], t.text, recorded, norm):
                break
            first = j
        return first
