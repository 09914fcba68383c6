"""The one registry of the words tracer reports: states and verification finding kinds.

Every word has a one-line meaning and, for findings, a severity; `docs/states.md` and
`docs/json.md` explain the same words at length, and a test checks the registry against
both documents in both directions.  The words themselves are the StrEnums of
`store.words` (re-exported here for the layers above the store): every field and
parameter that holds a state or a finding kind is typed with them, so mypy, not a
scan of the source, refuses a word the registry does not hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from store.words import (
    AnswerReason,
    Currency,
    CurrencyReason,
    FindingKind,
    Integrity,
    LineageGap,
    ModelInput,
    SignatureState,
    TransformState,
)

__all__ = [
    "CURRENCY_MEANING",
    "FINDINGS",
    "INFO_KINDS",
    "INTEGRITY_MEANING",
    "MODEL_INPUT_MEANING",
    "AnswerReason",
    "Currency",
    "CurrencyReason",
    "FindingKind",
    "Integrity",
    "LineageGap",
    "ModelInput",
    "Severity",
    "SignatureState",
    "Term",
    "TransformState",
    "currency_meaning",
    "integrity_meaning",
    "model_input_meaning",
]

INTEGRITY_MEANING: Mapping[Integrity, str] = {
    Integrity.INTACT: "the retained text hashes to the digest that was signed and logged",
    Integrity.PURGED: "deleted under a retention policy; a tombstone says who, when and why",
    Integrity.NOT_CAPTURED: "imported: the export held no whole text here (absent, redacted or truncated)",
    Integrity.NOT_SENT: "no model input: the producer signed the passage as retrieved but not sent",
    Integrity.UNAVAILABLE: "outside your scope: nothing about this record is shown to you",
    Integrity.CHECKSUM_MISMATCH: "the retained text does not hash to its recorded digest: altered",
    Integrity.SIGNATURE_INVALID: "the producer's signature over the manifest does not verify",
    Integrity.MISSING: "absent and no tombstone explains it: evidence lost (alarm)",
}
CURRENCY_MEANING: Mapping[Currency, str] = {
    Currency.VERIFIED: "the cited revision is current (or unchanged since) and the quote matches",
    Currency.MOVED: "the same quote sits, once, in a structurally compatible place of a later revision",
    Currency.UNCHECKED: "could not be checked now, e.g. the source's revisions were never imported",
    Currency.AMBIGUOUS: "the quote appears in several places and the structure does not pick one",
    Currency.STALE: "the quote changed in a later revision; old and current text shown side by side",
    Currency.UNAVAILABLE: "the source was deleted, its revision purged, or it is outside your scope",
}
#: what a producer's passage says the model was given: not an axis of its own and never
#: folded into integrity (a `not_sent` passage's integrity is its retrieved text's)
MODEL_INPUT_MEANING: Mapping[ModelInput, str] = {
    ModelInput.SENT: "the model was given this passage; the model input is the prompt text that carried it",
    ModelInput.REWRITTEN: "the model was given this passage as the pipeline transformed it "
    "(escaped, compressed …)",
    ModelInput.NOT_SENT: "retrieved, but in no prompt sent to the model: no model input, "
    "and no citation rests on it",
}
_BY_WORD_I: Mapping[str, str] = {k.value: v for k, v in INTEGRITY_MEANING.items()}
_BY_WORD_M: Mapping[str, str] = {k.value: v for k, v in MODEL_INPUT_MEANING.items()}
_BY_WORD_C: Mapping[str, str] = {k.value: v for k, v in CURRENCY_MEANING.items()}


def integrity_meaning(word: str) -> str:
    """The meaning of an integrity word read back from JSON (a pack), "" when unknown."""
    return _BY_WORD_I.get(word, "")


def model_input_meaning(word: str) -> str:
    """The meaning of a model-input word read back from JSON (a pack), "" when unknown."""
    return _BY_WORD_M.get(word, "")


def currency_meaning(word: str) -> str:
    """The meaning of a currency word read back from JSON (a pack), "" when unknown."""
    return _BY_WORD_C.get(word, "")


class Severity(StrEnum):
    #: evidence changed, lost or forged: the vault fails verification
    ALARM = "alarm"
    #: the record is sound but something about it needs a person's judgement
    WARNING = "warning"
    #: reported for completeness; does not make `ok` false
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Term:
    severity: Severity
    meaning: str


_A, _W, _I = Severity.ALARM, Severity.WARNING, Severity.INFO
FINDINGS: dict[FindingKind, Term] = {
    FindingKind.ENTRY_MISSING: Term(_A, "the log has a gap: an entry was removed"),
    FindingKind.LEAF_HASH_MISMATCH: Term(_A, "the entry's bytes no longer hash to their stored leaf: edited"),
    FindingKind.ENTRY_OUT_OF_PLACE: Term(_A, "the entry was written for another position: moved or swapped"),
    FindingKind.ENTRY_KIND_MISMATCH: Term(_A, "the log row's kind disagrees with the entry"),
    FindingKind.ENTRY_MALFORMED: Term(_A, "the entry, its envelope or a passage in it cannot be read"),
    FindingKind.ENTRY_UNKNOWN_KIND: Term(_A, "an entry of a kind this version does not know"),
    FindingKind.ENTRY_NOT_CHECKPOINTED: Term(_A, "past the latest signed checkpoint: appended without a key"),
    FindingKind.STATEMENT_OUT_OF_PLACE: Term(_A, "a signed statement stored where it was not signed for"),
    FindingKind.ROSTER_CHANGE_REFUSED: Term(_A, "a key or grant statement that breaks the roster's rules"),
    FindingKind.ANSWER_DUPLICATED: Term(_A, "an answer id logged twice: a replayed manifest"),
    FindingKind.CASE_STATEMENT_REFUSED: Term(_A, "a signed case-file statement that breaks its rules"),
    FindingKind.SIGNATURE_INVALID: Term(_A, "a DSSE signature that does not verify with a key valid then"),
    FindingKind.CUSTODIAN_MISMATCH: Term(_A, "entry 0 names another custodian than the vault's metadata"),
    FindingKind.PRODUCER_FAULT: Term(_W, "recorded at ingest: the signed manifest is internally wrong"),
    FindingKind.CHECKPOINT_SIGNATURE_INVALID: Term(_A, "a checkpoint note's signature does not verify"),
    FindingKind.CHECKPOINT_ORIGIN_MISMATCH: Term(_A, "a checkpoint names another vault origin"),
    FindingKind.CHECKPOINT_SIZE_MISMATCH: Term(_A, "a checkpoint note's size disagrees with its row"),
    FindingKind.CHECKPOINT_ROOT_MISMATCH: Term(_A, "the recomputed Merkle root differs from the signed one"),
    FindingKind.CHECKPOINT_BEYOND_LOG: Term(_A, "a checkpoint claims more entries than the log has"),
    FindingKind.CHECKPOINT_GUARD_MISMATCH: Term(
        _A, "a checkpoint commits to other revocations, tombstones, holds"
    ),
    FindingKind.VIEW_ROW_ALTERED_OR_EXTRA: Term(_A, "a stored view row the log does not imply"),
    FindingKind.VIEW_ROW_MISSING_OR_ALTERED: Term(_A, "a view row the log implies is not stored"),
    FindingKind.CHECKSUM_MISMATCH: Term(_A, "a retained text was altered"),
    FindingKind.MISSING: Term(_A, "a text is absent and no tombstone explains it: evidence lost"),
    FindingKind.PURGED_BLOB_STILL_PRESENT: Term(_A, "a purged text is stored again; it is never shown"),
    FindingKind.DATA_KEY_MISSING: Term(_A, "texts of a collection you are granted have no data key for you"),
    FindingKind.DATA_KEY_UNREADABLE: Term(_A, "a data key wrapped to you does not unwrap: altered"),
    FindingKind.BLOB_UNREFERENCED: Term(_I, "a stored text no log entry refers to"),
    FindingKind.TRANSFORM_FOUND_ELSEWHERE: Term(_W, "the retrieved text is in the cited revision, elsewhere"),
    FindingKind.TRANSFORM_NOT_FOUND: Term(_A, "the retrieved text is not in the cited revision"),
    FindingKind.TRANSFORM_UNKNOWN_NORMALIZER: Term(_W, "a normalizer version this build does not know"),
    FindingKind.TRANSFORM_NOT_IN_SOURCE: Term(_A, "a derived passage is not in its source's text"),
    FindingKind.TRANSFORM_SOURCE_MISSING: Term(_A, "a derived passage names a source not in the vault"),
    FindingKind.DATASET_MANIFEST_MISMATCH: Term(_A, "the dataset manifest was edited after it was signed"),
    FindingKind.DATASET_MANIFEST_UNSIGNED: Term(_A, "the dataset manifest carries no readable signature"),
    FindingKind.DATASET_SIGNATURE_INVALID: Term(_A, "the dataset manifest's signature does not verify"),
    FindingKind.DATASET_FILE_MISSING: Term(_A, "a file the dataset manifest lists is absent"),
    FindingKind.DATASET_FILE_UNLISTED: Term(_A, "a file in the dataset the manifest does not list"),
    FindingKind.DATASET_FILE_MISMATCH: Term(_A, "a dataset file differs from its signed digest"),
    FindingKind.DATASET_ROW_GROUP_MISALIGNED: Term(_A, "a log row group is not a whole subtree"),
    FindingKind.DATASET_ROW_OUT_OF_PLACE: Term(_A, "a log row stored at another position than its seq"),
    FindingKind.DATASET_ROOT_FOLD_MISMATCH: Term(_A, "row-group roots do not fold into the tree root"),
    FindingKind.DATASET_SIGNER_MISMATCH: Term(_A, "the signer column disagrees with the entry's envelope"),
    FindingKind.DATASET_TILE_MISMATCH: Term(_A, "a tile or entry bundle disagrees with the log"),
    FindingKind.DATASET_REFERENCE_ALTERED: Term(_A, "a references row the log does not imply"),
    FindingKind.DATASET_REFERENCE_MISSING: Term(_A, "a reference the log implies is absent"),
    FindingKind.DATASET_TOMBSTONE_MISMATCH: Term(
        _A, "tombstones.parquet disagrees with the log's tombstones"
    ),
}

#: kinds that are informational and do not make a verification fail
INFO_KINDS: frozenset[FindingKind] = frozenset(k for k, t in FINDINGS.items() if t.severity is Severity.INFO)
