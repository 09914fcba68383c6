"""The words tracer reports, as types: integrity, currency, model-input, transform and
signature states, currency reasons, and finding kinds.

Only the names live here, below every layer that emits them (the store's roster
reader emits finding kinds too); their meanings, severities and order of strictness
are the registry's, `tracer.engine.vocabulary`.  StrEnum members are the words
themselves, so JSON, SQL parameters and comparisons see plain strings, and a field
typed with one of these makes mypy refuse any word the registry does not hold.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "AnswerReason",
    "Currency",
    "CurrencyReason",
    "FindingKind",
    "Integrity",
    "LineageGap",
    "ModelInput",
    "SignatureState",
    "TextVerdict",
    "TransformState",
]


class Integrity(StrEnum):
    """Is the record exactly what was captured?  Least strict first: the order is the strictness."""

    INTACT = "intact"
    PURGED = "purged"
    NOT_CAPTURED = "not_captured"
    #: where the model input of a passage its producer signed `not_sent` would be
    NOT_SENT = "not_sent"
    UNAVAILABLE = "unavailable"
    CHECKSUM_MISMATCH = "checksum_mismatch"
    SIGNATURE_INVALID = "signature_invalid"
    MISSING = "missing"


class CurrencyReason(StrEnum):
    """Why a passage's currency is what it is (docs/states.md, "Currency reason codes"):
    decided from the log (`tracer.engine.currency`) or by the relocation rules."""

    OUT_OF_SCOPE = "out_of_scope"
    SOURCE_DELETED = "source_deleted"
    LATEST_REVISION_PURGED = "latest_revision_purged"
    NO_REVISIONS_IMPORTED = "no_revisions_imported"
    CITED_REVISION_NOT_IMPORTED = "cited_revision_not_imported"
    LATEST_REVISION_UNREADABLE = "latest_revision_unreadable"
    IMPORTED_NOT_LOCATED = "imported_not_located"
    HISTORICAL_TEXT_UNAVAILABLE = "historical_text_unavailable"
    DERIVED_TEXT = "derived_text"
    UNKNOWN_NORMALIZER = "unknown_normalizer"
    AT_LOCATOR = "at_locator"
    NORMALIZED_IDENTICAL = "normalized_identical"
    UNCHANGED_AT_LOCATOR = "unchanged_at_locator"
    RELOCATED_SAME_SECTION = "relocated_same_section"
    RELOCATED_COMPATIBLE_SECTION = "relocated_compatible_section"
    RELOCATED_HEADING_AGREES = "relocated_heading_agrees"
    RELOCATED_RENUMBERED_SECTION = "relocated_renumbered_section"
    MULTIPLE_MATCHES = "multiple_matches"
    UNIQUE_MATCH_INCOMPATIBLE_SECTION = "unique_match_incompatible_section"
    NOT_AT_LOCATOR = "not_at_locator"
    QUOTE_CHANGED = "quote_changed"
    QUOTE_REMOVED = "quote_removed"
    EMPTY_QUOTE = "empty_quote"


class AnswerReason(StrEnum):
    """Why an answer's own states are what they are, beside its passages' currency reasons
    (`trace --json` `reasons`; the TUI words them in `tracer.tui.words`)."""

    LINEAGE_CYCLE = "lineage_cycle"
    LINEAGE_TARGET_MISSING = "lineage_target_missing"
    ENTRY_DAMAGED = "entry_damaged"


class LineageGap(StrEnum):
    """What stands in a lineage tree's `kind` where no readable manifest does (otherwise
    the kind is the manifest's own, as its producer signed it)."""

    MISSING = "missing"
    DAMAGED = "damaged"
    #: a source that loops back to an answer already on the path
    CYCLE = "?"


class ModelInput(StrEnum):
    """What a producer's passage says the model was given (`model_input` in a
    `tracer.manifest/v2` payload; a v1 passage is always `sent`)."""

    SENT = "sent"
    REWRITTEN = "rewritten"
    NOT_SENT = "not_sent"


class Currency(StrEnum):
    """Does the source still say this today?  Least strict first: the order is the strictness."""

    VERIFIED = "verified"
    MOVED = "moved"
    UNCHECKED = "unchecked"
    AMBIGUOUS = "ambiguous"
    STALE = "stale"
    UNAVAILABLE = "unavailable"


class TransformState(StrEnum):
    """Was a retained passage's text at its locator in the revision it names (docs/states.md,
    "The transformation trace")?  The failures are those `verify` reports as the finding
    `transform_<state>`; the others passed, or could not be checked."""

    FOUND_AT_LOCATOR = "found_at_locator"
    FOUND_ELSEWHERE = "found_elsewhere"
    NOT_FOUND = "not_found"
    UNKNOWN_NORMALIZER = "unknown_normalizer"
    REVISION_NOT_IMPORTED = "revision_not_imported"
    REVISION_UNREADABLE = "revision_unreadable"
    PASSAGE_UNREADABLE = "passage_unreadable"
    MATCHES_SOURCE = "matches_source"
    FOUND_IN_SOURCE = "found_in_source"
    NOT_IN_SOURCE = "not_in_source"
    SOURCE_MISSING = "source_missing"
    SOURCE_UNREADABLE = "source_unreadable"
    UNAVAILABLE = "unavailable"
    IMPORTED_NOT_LOCATED = "imported_not_located"


class SignatureState(StrEnum):
    """Does the signature over a manifest, an imported statement or a journal line verify?"""

    VALID = "valid"
    SIGNATURE_INVALID = "signature_invalid"
    #: a journal line that cannot be read, so there is no signature to check
    UNREADABLE = "unreadable"


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


class TextVerdict(StrEnum):
    """What the text audit found for one reference to a stored text (`store.audit`).

    The first four are every reference's ordinary outcomes, counted in this order; the
    rest are the states of a readable text that did not verify (`text_problem`)."""

    PURGED = "purged"
    MISSING = "missing"
    OUT_OF_SCOPE = "out_of_scope"
    INTACT = "intact"
    CHECKSUM_MISMATCH = "checksum_mismatch"
