"""The `--json` documents of docs/json.md, as TypedDicts: one name per documented object.

`serialize` (trace), `catalog` (revalidate, impact) and `verify` build their output as
these types, so mypy holds the code to the schema, and `tests/tracer/test_json_shapes.py`
holds the schema's field lists in docs/json.md to these keys, both ways.  Key order
is the order the builders write them in (the output is not sorted).  Members that carry
what a producer or an exporter wrote, unread (`runtime`, `authorization_at_run_time`,
a chunker's `parameters`, an export's description), stay `dict[str, Any]`: their keys are
not tracer's to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from store.entries import FaultJSON
from store.records import ChainJSON, LocatorJSON, ProducerJSON
from store.statements import FieldFactJSON
from store.words import ModelInput
from tracer.engine.answertime import AnswerTimeReason, AnswerTimeState
from tracer.engine.vocabulary import (
    Currency,
    CurrencyReason,
    FindingKind,
    Integrity,
    SignatureState,
    TransformState,
)

if TYPE_CHECKING:
    from store.queries import TombstoneRow

__all__ = [
    "AnswerStateJSON",
    "AnswerTimeJSON",
    "CaseActivityJSON",
    "CaseConclusionJSON",
    "CaseFindingJSON",
    "CaseJSON",
    "CaseNoteJSON",
    "CaseOpenedJSON",
    "CaseSelectionJSON",
    "CaseTagJSON",
    "ChangedInJSON",
    "CheckpointRefJSON",
    "CitationJSON",
    "CitationVerdictJSON",
    "CitedRevisionJSON",
    "ContentJSON",
    "CurrencyJSON",
    "CurrentRevisionJSON",
    "DatasetCheckpointJSON",
    "DatasetReportJSON",
    "EffectiveJSON",
    "FindingJSON",
    "FindingRecord",
    "HiddenTextJSON",
    "HoldJSON",
    "ImpactHoldJSON",
    "ImportedJSON",
    "ImportedPassageJSON",
    "InForceJSON",
    "LineageJSON",
    "NoteJSON",
    "PassageJSON",
    "PassageVerdictJSON",
    "PersonJSON",
    "ReleaseJSON",
    "RevalidationJSON",
    "RevisionJSON",
    "SignatureJSON",
    "StateReasonJSON",
    "SubjectJSON",
    "TextJSON",
    "TombstoneJSON",
    "TraceJSON",
    "TransformJSON",
    "VerdictJSON",
    "VerifiedCheckpointJSON",
    "VerifyJSON",
    "tombstone_json",
]


class TombstoneJSON(TypedDict):
    seq: int
    digest: str
    policy: str
    reason: str
    authorizer: str
    effective_at: str


def tombstone_json(t: TombstoneRow, effective_at: str) -> TombstoneJSON:
    """`t` as JSON, its `effective_at` given (normalized to UTC by the caller)."""
    return {
        "seq": t.seq,
        "digest": t.digest,
        "policy": t.policy,
        "reason": t.reason,
        "authorizer": t.authorizer,
        "effective_at": effective_at,
    }


class TextJSON(TypedDict):
    """A historical text slot: `text` only when `state` is intact."""

    digest: str | None
    state: Integrity
    recomputed: str | None
    text: str | None
    detail: NotRequired[str]
    tombstone: NotRequired[TombstoneJSON]


class ContentJSON(TypedDict):
    """A text object without `text`: the integrity of a stored text not repeated here."""

    digest: str | None
    state: Integrity
    recomputed: str | None
    detail: NotRequired[str]
    tombstone: NotRequired[TombstoneJSON]


class HiddenTextJSON(TypedDict):
    """The question or answer of an answer outside the viewer's scope."""

    state: Integrity


class RevisionJSON(TypedDict):
    revision: str
    source_revision: str
    committed_at: str
    content_sha256: str


class CitedRevisionJSON(RevisionJSON):
    content: NotRequired[ContentJSON]


class CurrentRevisionJSON(TypedDict):
    label: str
    revision: str
    source_revision: str
    committed_at: str
    content_sha256: str
    excerpt: str | None


class CurrencyJSON(TypedDict):
    state: Currency
    reason: CurrencyReason
    detail: NotRequired[str]
    normalizer: NotRequired[str | None]
    shows_current: NotRequired[bool]
    cited_revision: NotRequired[CitedRevisionJSON]
    old_excerpt: NotRequired[str]
    new_locator: NotRequired[LocatorJSON]
    candidates: NotRequired[list[LocatorJSON]]
    current_revision: NotRequired[CurrentRevisionJSON]


class VerdictJSON(TypedDict):
    state: Currency
    reason: CurrencyReason


class InForceJSON(TypedDict):
    label: str
    revision: str
    source_revision: str
    committed_at: str
    content_sha256: str
    is_current: bool
    verdict: VerdictJSON | None
    new_locator: LocatorJSON | None
    excerpt: str | None


class ChangedInJSON(TypedDict):
    revision: str
    source_revision: str
    committed_at: str
    content_sha256: str
    seconds_before_answer: int | None


class AnswerTimeJSON(TypedDict):
    state: AnswerTimeState
    reason: AnswerTimeReason
    generated_at: NotRequired[str]
    detail: NotRequired[str]
    cited_revision: NotRequired[RevisionJSON | None]
    in_force: NotRequired[InForceJSON]
    changed_in: NotRequired[ChangedInJSON]


class EffectiveJSON(TypedDict):
    integrity: Integrity
    currency: Currency


class TransformJSON(TypedDict):
    state: TransformState
    detail: str


class ImportedPassageJSON(TypedDict):
    """What the importer located; the members after `mark` are the export's, as read."""

    mark: str
    span_id: Any
    data_source: Any
    document_id: Any
    revision: Any
    chunk_ref: Any
    metadata: Any
    model_input_span_id: Any
    #: FieldFact.to_json of each field
    fields: dict[str, FieldFactJSON]


class PassageJSON(TypedDict):
    """A passage; one outside the viewer's scope has only the first seven members."""

    index: int
    passage_id: str
    visible: bool
    integrity: Integrity
    currency: CurrencyJSON
    answer_time: AnswerTimeJSON
    effective: EffectiveJSON
    collection: NotRequired[str]
    retrieved: NotRequired[TextJSON]
    model_input: NotRequired[TextJSON]
    #: sent, rewritten or not_sent (`tracer.manifest/v2`); None for an imported passage
    model_input_state: NotRequired[ModelInput | None]
    transform: NotRequired[TransformJSON]
    chain: NotRequired[ChainJSON | None]
    retrieved_at: NotRequired[str]
    rank: NotRequired[int | None]
    score: NotRequired[float | None]
    query_sha256: NotRequired[str | None]
    derived_from: NotRequired[str | None]
    imported: NotRequired[ImportedPassageJSON]


class LineageJSON(TypedDict):
    answer_id: str
    kind: str
    integrity: Integrity
    currency: Currency
    visible: bool
    cycle: bool
    shared: bool
    children: list[LineageJSON]


class CitationJSON(TypedDict):
    index: int
    answer_start: int
    answer_end: int
    span: str | None
    passage_ids: list[str]
    unknown_passages: list[str]
    integrity: Integrity
    currency: Currency
    answer_time: AnswerTimeState


class SignatureJSON(TypedDict):
    state: SignatureState
    keyid: str
    signed_by: NotRequired[str]


class NoteJSON(TypedDict):
    """An investigator's signed note on the answer (log kind `finding`)."""

    seq: int
    investigator: str
    target: str
    note: str
    at: str


class CheckpointRefJSON(TypedDict):
    size: int
    root: str


class ImportedJSON(TypedDict):
    mark: str
    attested_by_producer: bool
    export: dict[str, Any]
    trace_id: str
    root_span_id: str
    span_ids: list[str]
    imported_at: str
    fields: dict[str, FieldFactJSON]


class _NoProducer(TypedDict):
    pass


class TransformFailureJSON(TypedDict):
    passage_id: str
    state: TransformState
    detail: str


class TraceJSON(TypedDict):
    """`tracer trace --json`; an answer outside the viewer's scope keeps every key, empty."""

    answer_id: str
    run_id: str | None
    kind: str | None
    seq: int | None
    generated_at: str | None
    visible: bool
    integrity: Integrity
    currency: Currency
    answer_time: AnswerTimeState
    reasons: list[str]
    #: the worst transformation-trace failure of the answer's passages, if any
    transform: TransformState | None
    transform_failures: list[TransformFailureJSON]
    signature: SignatureJSON | None
    producer: ProducerJSON | _NoProducer
    runtime: dict[str, Any]
    authorization_at_run_time: dict[str, Any]
    question: TextJSON | HiddenTextJSON
    answer: TextJSON | HiddenTextJSON
    citations: list[CitationJSON]
    passages: list[PassageJSON]
    lineage: list[LineageJSON]
    #: as ingest recorded them in the entry (`store.ingest.Fault`: path, code, message)
    faults: list[FaultJSON]
    findings: list[NoteJSON]
    computed_at: str
    checkpoint: CheckpointRefJSON
    imported: NotRequired[ImportedJSON]


# -- revalidate and impact -----------------------------------------------------------------


class StateReasonJSON(TypedDict):
    state: AnswerTimeState
    reason: AnswerTimeReason


class PassageVerdictJSON(TypedDict):
    passage_id: str
    visible: bool
    currency: VerdictJSON
    effective_currency: Currency
    normalizer: str | None
    recorded_normalizer: str | None
    locator: LocatorJSON | None
    new_locator: LocatorJSON | None
    answer_time: StateReasonJSON


class CitationVerdictJSON(TypedDict):
    index: int
    integrity: Integrity
    currency: Currency
    answer_time: AnswerTimeState
    passages: list[PassageVerdictJSON]


class AnswerStateJSON(TypedDict):
    """One answer of `revalidate` / `impact`; `null` in every field but the id when hidden."""

    answer_id: str
    run_id: str | None
    kind: str | None
    generated_at: str | None
    producer: str | None
    citations: int | None
    integrity: Integrity
    currency: Currency
    answer_time: AnswerTimeState
    citation_verdicts: list[CitationVerdictJSON] | None
    imported: NotRequired[str]
    dependency: NotRequired[str]


class CountsJSON(TypedDict):
    integrity: dict[str, int]
    currency: dict[str, int]
    answer_time: dict[str, int]


class PersonJSON(TypedDict):
    name: str
    key_id: str
    role: str


class SubjectJSON(TypedDict):
    kind: str
    id: str


class ReleaseJSON(TypedDict):
    seq: int
    reason: str | None
    at: str
    signer: PersonJSON


class HoldJSON(TypedDict):
    """A legal hold as one viewer may see it (`case.HoldView`); `impact` adds `covers`."""

    seq: int
    case_id: str | None
    subject: SubjectJSON
    reason: str | None
    at: str
    signer: PersonJSON
    in_force: bool
    release: ReleaseJSON | None
    withheld: list[str]


class CaseOpenedJSON(TypedDict):
    seq: int
    at: str
    by: PersonJSON


class CaseTagJSON(TypedDict):
    seq: int
    tag: str
    answer_id: str
    target: str
    at: str
    by: PersonJSON


class CaseNoteJSON(TypedDict):
    seq: int
    answer_id: str | None
    text: str
    at: str
    by: PersonJSON


class CaseFindingJSON(TypedDict):
    seq: int
    answer_id: str
    target: str
    note: str
    at: str
    by: PersonJSON


class CaseActivityJSON(TypedDict):
    seq: int
    action: str
    target: str
    at: str
    by: PersonJSON
    #: in a case pack: made while the case was selected (False: an access to its answers)
    under_case: NotRequired[bool]


class CaseConclusionJSON(TypedDict):
    seq: int
    text: str
    at: str
    by: PersonJSON


class CaseSelectionJSON(TypedDict):
    what: str
    why: str
    answer_ids: list[str]


class CaseJSON(TypedDict):
    """A case as `tracer case show --json` and a case pack give it (docs/cases.md)."""

    case_id: str
    title: str
    purpose: str
    opened: CaseOpenedJSON
    investigators: list[PersonJSON]
    tags: list[CaseTagJSON]
    notes: list[CaseNoteJSON]
    findings: list[CaseFindingJSON]
    holds: list[HoldJSON]
    activity: list[CaseActivityJSON]
    conclusion: CaseConclusionJSON | None
    #: in a case pack: which answers the pack holds, and why
    selection: NotRequired[CaseSelectionJSON]


class ImpactHoldJSON(HoldJSON):
    covers: list[str]


class RevalidationJSON(TypedDict):
    computed_at: str
    checkpoint: CheckpointRefJSON
    counts: CountsJSON
    normalizer: str
    answers: list[AnswerStateJSON]
    selection: NotRequired[str]
    target: NotRequired[str]
    holds: NotRequired[list[ImpactHoldJSON]]
    #: `revalidate --fail-on`: the words asked for and the answers that matched
    fail_on: NotRequired[FailOnJSON]


class FailOnJSON(TypedDict):
    states: list[str]
    answers: list[str]


# -- verify --------------------------------------------------------------------------------


class FindingRecord(TypedDict, total=False):
    """What pins a finding to its record: whichever members apply.  Values are as the
    entry (or the stored row) says them, so of whatever JSON type it holds there."""

    kind: str
    answer_id: Any
    run_id: Any
    passage_id: Any
    digest: Any
    role: str
    document_id: Any
    revision: Any
    collection: Any
    table: str
    checkpoint: int
    size: int
    first_seq: int
    last_seq: int
    written_as: Any
    path: str
    file: str
    row_group: int


class FindingJSON(TypedDict):
    kind: FindingKind
    seq: int | None
    record: FindingRecord
    detail: str


class VerifiedCheckpointJSON(TypedDict):
    size: int
    signer: str | None
    recomputed_root: str
    log_size: int


class DatasetCheckpointJSON(TypedDict):
    """What `verify-dataset` recomputed: the signed size the export covers, the root."""

    size: int
    recomputed_root: str
    log_size: int


class DatasetReportJSON(TypedDict):
    """`tracer verify-dataset --json` (docs/scale.md)."""

    ok: bool
    engine: str
    #: the exporter the signed manifest names (name, key_id, role, scopes), as it says
    exporter: dict[str, Any]
    checkpoint: DatasetCheckpointJSON
    counts: dict[str, int]
    findings: list[FindingJSON]


class VerifyJSON(TypedDict):
    ok: bool
    computed_at: str
    viewer: str | None
    mode: str
    verified_from: int
    warnings: list[str]
    checkpoint: VerifiedCheckpointJSON
    counts: dict[str, int]
    findings: list[FindingJSON]
