"""Trace one answer: citations → passages → chunk → imported revision → source revision.

Reads the signed manifest from the log (never the views), releases historical text only
through `read_text`, and keeps the two axes separate for every passage.

Lineage (a manifest's `lineage` ids and its passages' `derived_from`) is walked down to
original passages; derived text takes the strictest state found on either axis.  Scope
follows lineage too: a note is shown only to a viewer who may see everything it was
built from, and anything derived from a source the viewer may not see is itself
unavailable to them, as a whole, with ids only.  Cycles are reported, never looped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from store import queries
from store.attest import FieldFact
from store.entries import FaultJSON
from store.filters import AnswerFilter
from store.queries import AnswerRow, FindingRow
from store.records import Citation, Locator, MalformedRecordError, Manifest, Passage, Producer
from tracer.clock import now_iso
from tracer.engine.answertime import AnswerTimeReason, AnswerTimeState, strictest_answer_time
from tracer.engine.currency import CurrencyEngine, CurrencyResult
from tracer.engine.evidence import TextResult
from tracer.engine.imported import (
    ImportedFacts,
    not_captured,
    not_located,
    passage_attestation,
)
from tracer.engine.manifests import DamagedEntryError, ManifestReader, SignedManifest, UnknownAnswerError
from tracer.engine.normalizers import RECORDED
from tracer.engine.prefetch import Prefetch
from tracer.engine.session import Session
from tracer.engine.states import strictest_currency, strictest_integrity
from tracer.engine.transform import (
    TRANSFORM_FAILURES,
    Transform,
    TransformChecker,
    derived_transform,
    worst_failure,
)
from tracer.engine.vocabulary import (
    AnswerReason,
    Currency,
    CurrencyReason,
    Integrity,
    LineageGap,
    ModelInput,
    SignatureState,
    TransformState,
)

__all__ = [
    "AnswerTrace",
    "CitationTrace",
    "CitationVerdict",
    "DamagedEntryError",
    "LineageNode",
    "PassageTrace",
    "PassageVerdict",
    "Summary",
    "Tracer",
    "UnknownAnswerError",
]

#: an answer's reasons: its own (`AnswerReason`), and `out_of_scope` when it is hidden
Reason = CurrencyReason | AnswerReason


@dataclass(frozen=True)
class PassageVerdict:
    """One cited passage's verdicts, compact enough to keep for every answer of a revalidation.

    `locator` is the recorded one (in `recorded_normalizer` coordinates); `new_locator` is
    where the quote is now (moved, verified) or its proposed successor (stale), in
    `normalizer` coordinates. Both are None for a passage outside the viewer's scope.
    """

    passage_id: str
    visible: bool
    state: Currency
    reason: CurrencyReason
    effective_currency: Currency
    normalizer: str
    recorded_normalizer: str
    locator: Locator | None
    new_locator: Locator | None
    answer_time: AnswerTimeState
    answer_time_reason: AnswerTimeReason


@dataclass(frozen=True)
class CitationVerdict:
    index: int
    integrity: Integrity
    currency: Currency
    answer_time: AnswerTimeState
    passages: tuple[PassageVerdict, ...]


@dataclass(frozen=True)
class Summary:
    """The effective states of an answer (own passages plus lineage), for one viewer.

    `pending` names answers on the current lineage path that this summary loops back to;
    a summary with pending ids is partial (its cycle is still being walked) and is never
    memoized.
    """

    answer_id: str
    integrity: Integrity
    currency: Currency
    visible: bool
    reasons: tuple[Reason, ...] = ()
    pending: frozenset[str] = frozenset()
    #: answer-time currency of its own citations: current, unknown or superseded
    answer_time: AnswerTimeState = AnswerTimeState.UNKNOWN
    citations: tuple[CitationVerdict, ...] = ()


@dataclass
class PassageTrace:
    index: int
    passage_id: str
    collection: str
    visible: bool
    retrieved: TextResult
    model_input: TextResult
    integrity: Integrity
    currency: CurrencyResult
    transform: Transform
    effective_integrity: Integrity
    effective_currency: Currency
    #: the signed passage; None when it is outside the viewer's scope (ids only then)
    record: Passage | None
    #: an imported passage's fields and who vouches for each (empty for a producer's manifest)
    attestation: dict[str, FieldFact] = field(default_factory=dict)
    #: what the producer signed the model was given (`states.MODEL_INPUT`); None for an
    #: imported passage or one outside the viewer's scope
    model_input_state: ModelInput | None = None

    @property
    def imported(self) -> bool:
        return bool(self.attestation)

    @property
    def document_id(self) -> str | None:
        """The document the passage names (None out of scope, or for an import naming none)."""
        doc = self.record.document.document_id if self.record is not None else None
        return str(doc) if doc else None

    @property
    def derived_from(self) -> str | None:
        value = self.record.derived_from if self.record is not None else None
        return str(value) if value else None

    @property
    def answer_time(self) -> AnswerTimeState:
        at = self.currency.answer_time
        return at.state if at is not None and self.visible else AnswerTimeState.UNKNOWN

    def verdict(self) -> PassageVerdict:
        if not self.visible:
            return PassageVerdict(
                self.passage_id, False,
                Currency.UNAVAILABLE, CurrencyReason.OUT_OF_SCOPE, Currency.UNAVAILABLE,
                "", "", None, None, AnswerTimeState.UNKNOWN, AnswerTimeReason.OUT_OF_SCOPE,
            )  # fmt: skip
        c, at = self.currency, self.currency.answer_time
        rel = c.relocation
        chain = self.record.chain if self.record is not None else None
        return PassageVerdict(
            self.passage_id,
            True,
            c.state,
            c.reason,
            self.effective_currency,
            c.normalizer,
            chain.normalizer_version if chain is not None else "",
            chain.locator if chain is not None else None,
            rel.locator if rel is not None else None,
            at.state if at is not None else AnswerTimeState.UNKNOWN,
            at.reason if at is not None else AnswerTimeReason.NOT_COMPUTED,
        )


@dataclass
class CitationTrace:
    index: int
    answer_start: int
    answer_end: int
    span: str | None
    passage_ids: list[str]
    passages: list[PassageTrace]
    unknown_passages: list[str]
    integrity: Integrity
    currency: Currency
    answer_time: AnswerTimeState = AnswerTimeState.UNKNOWN


@dataclass
class LineageNode:
    answer_id: str
    kind: str
    integrity: Integrity
    currency: Currency
    visible: bool
    cycle: bool = False
    children: list[LineageNode] = field(default_factory=list)
    shared: bool = False


@dataclass
class AnswerTrace:
    seq: int
    answer_id: str
    run_id: str
    kind: str
    generated_at: str
    collection: str
    visible: bool
    signature: SignatureState
    signer: str
    producer: Producer
    runtime: Mapping[str, Any]
    authorization: Mapping[str, Any]
    question: TextResult
    answer: TextResult
    passages: list[PassageTrace]
    citations: list[CitationTrace]
    lineage: list[LineageNode]
    faults: list[FaultJSON]
    findings: list[FindingRow]
    integrity: Integrity
    currency: Currency
    computed_at: str
    checkpoint_size: int
    checkpoint_root: str
    reasons: tuple[Reason, ...] = ()
    pending: frozenset[str] = frozenset()
    answer_time: AnswerTimeState = AnswerTimeState.UNKNOWN
    #: an imported trace (not a producer manifest): its export and per-field attestation
    imported: ImportedFacts | None = None

    @property
    def transform_failures(self) -> list[PassageTrace]:
        """The visible passages whose retrieved text is not where the manifest says in the
        revision it names (a `TRANSFORM_FAILURES` state): the answer's header says so,
        beside its integrity and currency, not only the passage's details."""
        return [p for p in self.passages if p.visible and p.transform.state in TRANSFORM_FAILURES]

    @property
    def transform(self) -> TransformState | None:
        """The worst transform failure of its passages, or None when the chain holds."""
        return worst_failure(p.transform.state for p in self.transform_failures)


@dataclass
class _Walk:
    """What walking one answer's lineage ran into: open cycles and reasons to report."""

    pending: set[str] = field(default_factory=set)
    reasons: set[Reason] = field(default_factory=set)


def _hidden(digest: str) -> TextResult:
    return TextResult(digest, Integrity.UNAVAILABLE, detail="outside your scope")


_OUT_OF_SCOPE = CurrencyResult(Currency.UNAVAILABLE, CurrencyReason.OUT_OF_SCOPE)
#: what stands where a `not_sent` passage's model input would
NOT_SENT_DETAIL = "retrieved, but in no prompt sent to the model (signed so by the producer)"
#: answers per query when answers named by id are primed (a revalidation page's size)
_PRIME_PAGE = 500


class Tracer:
    """Engine entry point for one session; caches per run, so make one per job."""

    def __init__(self, session: Session, normalizer: str = RECORDED):
        """`normalizer`: "recorded", or the version to check ``/1`` citations under."""
        self.session = session
        self.currency = CurrencyEngine(session, normalizer)
        self.transforms = TransformChecker(self.currency)
        self.manifests = ManifestReader(session)
        self.prefetch = Prefetch(self.manifests, self.currency)
        self._summaries: dict[str, Summary] = {}

    def _source(self, answer_id: str, stack: tuple[str, ...], walk: _Walk) -> Summary:
        """The summary of a lineage source, as seen from the path `stack`."""
        if answer_id in stack:
            walk.pending.add(answer_id)
            walk.reasons.add(AnswerReason.LINEAGE_CYCLE)
            # A loop adds nothing new to the states (the answers on it are all being
            # walked), but a claim resting on circular provenance cannot be called current.
            return _cycle_summary(answer_id)
        sub = self.summary(answer_id, stack)
        walk.pending.update(sub.pending)
        walk.reasons.update(r for r in sub.reasons if r != CurrencyReason.OUT_OF_SCOPE)
        return sub

    # -- public API -----------------------------------------------------------------------

    def prime(self, rows: list[AnswerRow]) -> None:
        """Read the log entries of a page of answers in one go (a list or revalidation page)."""
        self.prefetch.page([r for r in rows if r.answer_id not in self._summaries])

    def prime_ids(self, answer_ids: list[str]) -> None:
        """`prime` for answers named by id (a holds listing, a pack), a page at a time."""
        todo = list(dict.fromkeys(answer_ids))
        for i in range(0, len(todo), _PRIME_PAGE):
            page = tuple(todo[i : i + _PRIME_PAGE])
            self.prime(queries.answer_rows(self.session.vault, AnswerFilter(answer_ids=page), 2 * len(page)))

    def summary(self, answer_id: str, stack: tuple[str, ...] = ()) -> Summary:
        """Effective states of an answer, memoized; cycles are reported, never looped."""
        if answer_id in self._summaries:
            return self._summaries[answer_id]
        if answer_id in stack:
            return _cycle_summary(answer_id)
        try:
            t = self._build(answer_id, stack, full=False)
        except UnknownAnswerError:
            out = Summary(
                answer_id, Integrity.MISSING, Currency.UNCHECKED, True, (AnswerReason.LINEAGE_TARGET_MISSING,)
            )
        except DamagedEntryError:
            out = Summary(
                answer_id,
                Integrity.SIGNATURE_INVALID,
                Currency.UNCHECKED,
                True,
                (AnswerReason.ENTRY_DAMAGED,),
            )
        else:
            verdicts = tuple(
                CitationVerdict(
                    c.index, c.integrity, c.currency, c.answer_time, tuple(pt.verdict() for pt in c.passages)
                )
                for c in t.citations
            )
            out = Summary(
                answer_id,
                t.integrity,
                t.currency,
                t.visible,
                t.reasons,
                t.pending,
                t.answer_time,
                verdicts if t.visible else (),
            )
        if not out.pending:
            self._summaries[answer_id] = out
        return out

    def question(self, answer_id: str) -> TextResult:
        """The recorded question of an answer, released exactly as `trace` releases it.

        Only to a viewer who may see the whole answer (its lineage included); otherwise
        "outside your scope".  A page primed with `prime` has its questions read already.
        """
        m = self.manifests.get(answer_id)
        recorded = m.record.question_sha256
        if recorded is None and m.imported is not None:  # an import that kept no question
            return (
                not_captured(m.imported.field("$.question_sha256"))
                if self.summary(answer_id).visible
                else _hidden("")
            )
        digest = str(recorded)
        if not self.summary(answer_id).visible:
            return _hidden(digest)
        return self.currency.text(digest, m.record.collection)

    def trace(self, answer_id: str, record: bool = True, stack: tuple[str, ...] = ()) -> AnswerTrace:
        """The full trace of one answer; `record` appends the look to the access log."""
        t = self._build(answer_id, stack, full=True)
        if record:
            self.session.record("open_answer", answer_id)
        return t

    # -- building -------------------------------------------------------------------------

    def _passage(
        self,
        ps: Passage,
        idx: int,
        stack: tuple[str, ...],
        walk: _Walk,
        generated_at: str,
        imported: ImportedFacts | None = None,
    ) -> PassageTrace:
        s = self.session
        derived = ps.derived_from
        visible = s.can_read(ps.collection)
        sub: Summary | None = None
        if derived and visible:
            sub = self._source(str(derived), stack, walk)
            visible = sub.visible
        if not visible:
            return PassageTrace(
                idx,
                ps.passage_id,
                ps.collection,
                False,
                _hidden(str(ps.retrieved_sha256)),
                _hidden(str(ps.model_input_sha256 or "")),
                Integrity.UNAVAILABLE,
                _OUT_OF_SCOPE,
                Transform(TransformState.UNAVAILABLE),
                Integrity.UNAVAILABLE,
                Currency.UNAVAILABLE,
                None,  # out of scope: no title, path, heading or excerpt, ids only
            )
        if imported is not None:
            att = passage_attestation(imported, idx)
            return _imported_passage(self.currency, self.transforms, ps, idx, generated_at, att)
        retrieved = self.currency.text(str(ps.retrieved_sha256), ps.collection)
        if ps.not_sent:
            # nothing was sent, so there is no text to verify: the word, never a text
            model_input = TextResult("", Integrity.NOT_SENT, detail=NOT_SENT_DETAIL)
            integrity = retrieved.state
        else:
            model_input = self.currency.text(str(ps.model_input_sha256), ps.collection)
            integrity = strictest_integrity([retrieved.state, model_input.state])
        currency = self.currency.currency(ps, retrieved, generated_at)
        eff_i, eff_c = integrity, currency.state
        key = ps.transform_key()
        if sub is not None and derived:
            source = self._source_text(derived)
            transform = derived_transform(derived, str(ps.retrieved_sha256), retrieved, source)
            eff_i = strictest_integrity([eff_i, sub.integrity])
            eff_c = sub.currency
        elif key is not None:
            transform = self.transforms.check(key, retrieved)
        else:
            raise MalformedRecordError(f"passage {ps.passage_id!r} names no revision and locator")
        return PassageTrace(
            idx,
            ps.passage_id,
            ps.collection,
            True,
            retrieved,
            model_input,
            integrity,
            currency,
            transform,
            eff_i,
            eff_c,
            ps,
            model_input_state=ps.model_input_state,
        )

    def _source_text(self, answer_id: str) -> TextResult | None:
        try:
            p = self.manifests.get(answer_id).record
        except (UnknownAnswerError, DamagedEntryError):
            return None
        return self.currency.text(str(p.answer_sha256), p.collection)

    def _lineage(self, ids: list[str], stack: tuple[str, ...], seen: set[str]) -> list[LineageNode]:
        """The lineage tree below `stack`; a source reached twice is expanded once (`shared`)."""
        nodes: list[LineageNode] = []
        for aid in ids:
            if aid in stack:
                nodes.append(
                    LineageNode(aid, LineageGap.CYCLE, Integrity.INTACT, Currency.UNCHECKED, True, cycle=True)
                )
                continue
            sub = self.summary(aid, stack)
            try:
                m: SignedManifest | None = self.manifests.get(aid)
            except (UnknownAnswerError, DamagedEntryError):
                m = None
            if m is None:
                gap = (
                    LineageGap.MISSING
                    if AnswerReason.LINEAGE_TARGET_MISSING in sub.reasons
                    else LineageGap.DAMAGED
                )
                nodes.append(LineageNode(aid, gap, sub.integrity, sub.currency, sub.visible))
                continue
            node = LineageNode(aid, m.record.kind, sub.integrity, sub.currency, sub.visible)
            if aid in seen:
                node.shared = True
            elif sub.visible:
                seen.add(aid)
                node.children = self._lineage(m.sources, (*stack, aid), seen)
            nodes.append(node)
        return nodes

    def _build(self, answer_id: str, stack: tuple[str, ...], full: bool) -> AnswerTrace:
        m = self.manifests.get(answer_id)
        self.prefetch.answer(answer_id, m)
        try:
            return self._assemble(m, answer_id, stack, full)
        except (MalformedRecordError, TypeError, AttributeError, IndexError) as exc:
            if m.signature == SignatureState.VALID:
                raise  # a signed manifest passed the schema at ingest: this is a bug, not data
            raise DamagedEntryError(
                f"log entry {m.seq} (answer {answer_id!r}) fails its signature and cannot be read: {exc!r}"
            ) from exc

    def _assemble(self, m: SignedManifest, answer_id: str, stack: tuple[str, ...], full: bool) -> AnswerTrace:
        s = self.session
        p = m.record
        stack = (*stack, answer_id)
        walk = _Walk()
        passages = [
            self._passage(ps, i, stack, walk, p.generated_at, m.imported) for i, ps in enumerate(p.passages)
        ]
        by_id: dict[str, PassageTrace] = {}
        for pt in passages:
            by_id.setdefault(pt.passage_id, pt)
        sources = [self._source(x, stack, walk) for x in sorted(set(p.lineage))]
        reasons = walk.reasons
        visible = self._visible(p, sources, passages)
        if not visible:
            reasons.add(CurrencyReason.OUT_OF_SCOPE)
        question, answer = self._question_answer(m, visible)
        lin_i = [sub.integrity for sub in sources]
        lin_c = [sub.currency for sub in sources]
        citations = [_citation(i, c, by_id, lin_i, lin_c, visible, answer) for i, c in enumerate(p.citations)]
        integrity, currency, answer_time = _answer_states(
            m, [question.state, answer.state], passages, citations, lin_i, lin_c, visible
        )
        lineage = self._lineage(m.sources, stack, set()) if full else []
        findings = queries.finding_rows(s.vault, answer_id) if full and visible else []
        return AnswerTrace(
            seq=m.seq,
            answer_id=answer_id,
            run_id=p.run_id,
            kind=p.kind,
            generated_at=p.generated_at,
            collection=p.collection,
            visible=visible,
            signature=m.signature,
            signer=m.signer,
            producer=p.producer,
            runtime=p.runtime if visible else {},
            authorization=p.authorization if visible else {},
            question=question,
            answer=answer,
            passages=passages,
            citations=citations,
            lineage=lineage,
            faults=m.faults,
            findings=findings,
            integrity=integrity,
            currency=currency,
            computed_at=now_iso() if full else "",  # a summary keeps only the states
            checkpoint_size=s.status.checkpoint_size,
            checkpoint_root=s.status.checkpoint_root,
            reasons=tuple(sorted(reasons)),
            pending=frozenset(walk.pending - {answer_id}),
            answer_time=answer_time,
            imported=m.imported,
        )

    def _visible(self, p: Manifest, sources: list[Summary], passages: list[PassageTrace]) -> bool:
        """Scope: the answer's own collection, every source it was derived from, and for a
        note (derived text by definition) every passage it was built from."""
        return (
            self.session.can_read(p.collection)
            and all(sub.visible for sub in sources)
            and all(pt.visible for pt in passages if pt.derived_from)
            and (p.kind != "note" or all(pt.visible for pt in passages))
        )

    def _question_answer(self, m: SignedManifest, visible: bool) -> tuple[TextResult, TextResult]:
        p, facts = m.record, m.imported
        if not visible:
            return _hidden(str(p.question_sha256)), _hidden(str(p.answer_sha256))
        question = _text_or_absent(
            self.currency,
            p.question_sha256,
            p.collection,
            facts.field("$.question_sha256") if facts else None,
        )
        answer = _text_or_absent(
            self.currency, p.answer_sha256, p.collection, facts.field("$.answer_sha256") if facts else None
        )
        return question, answer


def _citation(
    i: int,
    c: Citation,
    by_id: dict[str, PassageTrace],
    lin_i: list[Integrity],
    lin_c: list[Currency],
    visible: bool,
    answer: TextResult,
) -> CitationTrace:
    """One citation: the strictest states of the passages it cites and of the lineage."""
    cited = [by_id[x] for x in c.passage_ids if x in by_id]
    unknown = [x for x in c.passage_ids if x not in by_id]
    ci = strictest_integrity(
        [pt.effective_integrity for pt in cited] + lin_i + ([Integrity.MISSING] if unknown else [])
    )
    cc = strictest_currency([pt.effective_currency for pt in cited] + lin_c)
    if not visible or any(not pt.visible for pt in cited):
        cc = Currency.UNAVAILABLE
    span = None
    if (
        answer.verified
        and answer.text is not None
        and 0 <= c.answer_start <= c.answer_end <= len(answer.text)
    ):
        span = answer.text[c.answer_start : c.answer_end]
    return CitationTrace(
        i,
        c.answer_start,
        c.answer_end,
        span,
        list(c.passage_ids),
        cited,
        unknown,
        ci,
        cc,
        strictest_answer_time(pt.answer_time for pt in cited),
    )


def _answer_states(
    m: SignedManifest,
    text_states: list[Integrity],
    passages: list[PassageTrace],
    citations: list[CitationTrace],
    lin_i: list[Integrity],
    lin_c: list[Currency],
    visible: bool,
) -> tuple[Integrity, Currency, AnswerTimeState]:
    """(integrity, currency, answer time) of a whole answer: its own texts, passages and
    signature, its citations (or, with none, its passages) and its lineage."""
    if not visible:
        # Nothing about a record the viewer may not see, not even whether it is intact.
        return Integrity.UNAVAILABLE, Currency.UNAVAILABLE, AnswerTimeState.UNKNOWN
    own_i = text_states + [pt.effective_integrity for pt in passages]
    if m.signature != SignatureState.VALID:
        own_i.append(Integrity.SIGNATURE_INVALID)
    integrity = strictest_integrity(own_i + lin_i)
    if citations:
        currency = strictest_currency([c.currency for c in citations] + lin_c)
        answer_time = strictest_answer_time(c.answer_time for c in citations)
    else:
        currency = strictest_currency([pt.effective_currency for pt in passages] + lin_c)
        answer_time = strictest_answer_time(pt.answer_time for pt in passages)
    return integrity, currency, answer_time


def _cycle_summary(answer_id: str) -> Summary:
    """An answer met again on its own lineage path: a loop adds nothing new to the states,
    but a claim resting on circular provenance cannot be called current."""
    return Summary(
        answer_id,
        Integrity.INTACT,
        Currency.UNCHECKED,
        True,
        (AnswerReason.LINEAGE_CYCLE,),
        frozenset({answer_id}),
    )


def _text_or_absent(
    currency: CurrencyEngine, digest: str | None, collection: str, fact: FieldFact | None
) -> TextResult:
    """A recorded text; where an import kept none, its attestation (never a text)."""
    if digest is None:
        return not_captured(fact)
    return currency.text(digest, collection)


def _imported_passage(
    engine: CurrencyEngine,
    transforms: TransformChecker,
    ps: Passage,
    idx: int,
    generated_at: str,
    att: dict[str, FieldFact],
) -> PassageTrace:
    """An imported passage: texts only where the export held them whole; currency only
    where the importer located the passage in a source revision of this vault."""
    coll = ps.collection
    retrieved = _text_or_absent(engine, ps.retrieved_sha256, coll, att.get("retrieved_sha256"))
    model_input = _text_or_absent(engine, ps.model_input_sha256, coll, att.get("model_input_sha256"))
    integrity = strictest_integrity([retrieved.state, model_input.state])
    key = ps.transform_key()
    if key is not None and retrieved.digest:
        currency = engine.currency(ps, retrieved, generated_at)
        transform = transforms.check(key, retrieved)
    else:
        currency, transform = not_located(att)
    return PassageTrace(
        idx, ps.passage_id, coll, True, retrieved, model_input, integrity, currency, transform,
        integrity, currency.state, ps, att,
    )  # fmt: skip
