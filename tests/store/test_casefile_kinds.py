"""Every statement kind an investigator may sign has a rule and a fold in the case file,
and nothing else has either: a kind added to the log's vocabulary without them would be
signed, accepted and then silently dropped from every case, hold and purge decision."""

from __future__ import annotations

from typing import cast

from store import casefile
from store.casefile import CaseFile
from store.entries import INVESTIGATOR_KINDS, EntryKind


def test_every_investigator_kind_has_a_fold_and_no_other_kind_has_one() -> None:
    assert set(casefile._FOLDS) == set(INVESTIGATOR_KINDS)


def test_every_investigator_kind_has_a_rule_of_its_own() -> None:
    cf = CaseFile()
    for kind in sorted(INVESTIGATOR_KINDS):
        refused = cf.refusal(kind, {"at": "2026-01-01T00:00:00Z"})
        assert refused is None or "is not a case-file statement" not in refused, kind


def test_a_kind_outside_the_vocabulary_is_refused_not_ignored() -> None:
    cf = CaseFile()
    # mypy refuses the word; the rule must still refuse it when it is read from a file
    refused = cf.refusal(cast("EntryKind", "case_reopen"), {"case_id": None, "at": "2026-01-01T00:00:00Z"})
    assert refused is not None
