"""The one registry of the words tracer reports: states and verification finding kinds.

Every word has a one-line meaning and, for findings, a severity; `docs/states.md` and
`docs/json.md` explain the same words at length, and a test checks the registry against
both documents in both directions, and against every finding kind the code can emit.
StrEnum values are the words themselves, so JSON and comparisons stay plain strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tracer.engine.states import CURRENCY_MEANING, INTEGRITY_MEANING, MODEL_INPUT_MEANING

__all__ = [
    "FINDINGS",
    "INFO_KINDS",
    "STATE_MEANINGS",
    "Currency",
    "FindingKind",
    "Integrity",
    "ModelInput",
    "Severity",
    "Term",
]


class Integrity(StrEnum):
    """Is the record exactly what was captured?  Least strict first (`states.INTEGRITY`)."""

    INTACT = "intact"
    PURGED = "purged"
    NOT_CAPTURED = "not_captured"
    UNAVAILABLE = "unavailable"
    CHECKSUM_MISMATCH = "checksum_mismatch"
    SIGNATURE_INVALID = "signature_invalid"
    MISSING = "missing"


class Currency(StrEnum):
    """Does the source still say this today?  Least strict first (`states.CURRENCY`)."""

    VERIFIED = "verified"
    MOVED = "moved"
    UNCHECKED = "unchecked"
    AMBIGUOUS = "ambiguous"
    STALE = "stale"
    UNAVAILABLE = "unavailable"


class ModelInput(StrEnum):
    """What a producer's passage says the model was given (`states.MODEL_INPUT`)."""

    SENT = "sent"
    REWRITTEN = "rewritten"
    NOT_SENT = "not_sent"


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


class FindingKind(StrEnum):
    ENTRY_MISSING = "entry_missing"
    LEAF_HASH_MISMATCH = "leaf_hash_mismatch"
    ENTRY_OUT_OF_PLACE = "entry_out_of_place"
    ENTRY_KIND_MISMATCH = "entry_kind_mismatch"
    ENTRY_MALFORMED = "entry_malformed"
    ENTRY_UNKNOWN_KIND = "entry_unknown_kind"
    ENTRY_NOT_CHECKPOINTED = "entry_not_checkpointed"
    STATEMENT_OUT_OF_PLACE = "statement_out_of_place"
    ROSTER_CHANGE_REFUSED = "roster_change_refused"
    ANSWER_DUPLICATED = "answer_duplicated"
    CASE_STATEMENT_REFUSED = "case_statement_refused"
    SIGNATURE_INVALID = "signature_invalid"
    CUSTODIAN_MISMATCH = "custodian_mismatch"
    PRODUCER_FAULT = "producer_fault"
    CHECKPOINT_SIGNATURE_INVALID = "checkpoint_signature_invalid"
    CHECKPOINT_ORIGIN_MISMATCH = "checkpoint_origin_mismatch"
    CHECKPOINT_SIZE_MISMATCH = "checkpoint_size_mismatch"
    CHECKPOINT_ROOT_MISMATCH = "checkpoint_root_mismatch"
    CHECKPOINT_BEYOND_LOG = "checkpoint_beyond_log"
    CHECKPOINT_GUARD_MISMATCH = "checkpoint_guard_mismatch"
    VIEW_ROW_ALTERED_OR_EXTRA = "view_row_altered_or_extra"
    VIEW_ROW_MISSING_OR_ALTERED = "view_row_missing_or_altered"
    CHECKSUM_MISMATCH = "checksum_mismatch"
    MISSING = "missing"
    PURGED_BLOB_STILL_PRESENT = "purged_blob_still_present"
    DATA_KEY_MISSING = "data_key_missing"
    DATA_KEY_UNREADABLE = "data_key_unreadable"
    BLOB_UNREFERENCED = "blob_unreferenced"
    TRANSFORM_FOUND_ELSEWHERE = "transform_found_elsewhere"
    TRANSFORM_NOT_FOUND = "transform_not_found"
    TRANSFORM_UNKNOWN_NORMALIZER = "transform_unknown_normalizer"
    TRANSFORM_NOT_IN_SOURCE = "transform_not_in_source"
    TRANSFORM_SOURCE_MISSING = "transform_source_missing"
    DATASET_MANIFEST_MISMATCH = "dataset_manifest_mismatch"
    DATASET_MANIFEST_UNSIGNED = "dataset_manifest_unsigned"
    DATASET_SIGNATURE_INVALID = "dataset_signature_invalid"
    DATASET_FILE_MISSING = "dataset_file_missing"
    DATASET_FILE_UNLISTED = "dataset_file_unlisted"
    DATASET_FILE_MISMATCH = "dataset_file_mismatch"
    DATASET_ROW_GROUP_MISALIGNED = "dataset_row_group_misaligned"
    DATASET_ROW_OUT_OF_PLACE = "dataset_row_out_of_place"
    DATASET_ROOT_FOLD_MISMATCH = "dataset_root_fold_mismatch"
    DATASET_SIGNER_MISMATCH = "dataset_signer_mismatch"
    DATASET_TILE_MISMATCH = "dataset_tile_mismatch"
    DATASET_REFERENCE_ALTERED = "dataset_reference_altered"
    DATASET_REFERENCE_MISSING = "dataset_reference_missing"
    DATASET_TOMBSTONE_MISMATCH = "dataset_tombstone_mismatch"


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
INFO_KINDS: frozenset[str] = frozenset(k.value for k, t in FINDINGS.items() if t.severity is Severity.INFO)

#: the meanings of the state words, from `tracer.engine.states`
STATE_MEANINGS: dict[str, dict[str, str]] = {
    "integrity": INTEGRITY_MEANING,
    "currency": CURRENCY_MEANING,
    "model_input": MODEL_INPUT_MEANING,
}
