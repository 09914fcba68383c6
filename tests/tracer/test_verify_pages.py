"""The transform check pages through passages and reads texts a chunk of revisions at a
time; revisions verified in one chunk are pinned and reused in later ones.  One-revision
chunks and one-passage pages must give exactly the verdicts of one page for everything,
including passages that are not at their locator."""

from __future__ import annotations

import pytest

from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.verify import Sizes, verify

FIRST = "Customers may request a refund within thirty days of delivery."
SECOND = "Refunds are paid to the original payment method within five business days."
DOC = f"# Returns policy\n\n## Refund window\n\n{FIRST}\n\n{SECOND}\n"


def _findings(
    case: Case, sizes: Sizes | None = None
) -> tuple[list[tuple[str, int | None, str]], dict[str, int]]:
    s = case.session("ines", read_only=True)
    try:
        report = verify(s.vault, s, full=True, sizes=sizes or Sizes())
    finally:
        s.close()
    return [(f.kind, f.seq, f.detail) for f in report.findings], report.counts


def test_pinned_revisions_give_the_same_verdicts(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    good = passage(rev, "thirty", "p1")
    moved = passage(rev, "five business", "p2")
    moved["locator"] = {**moved["locator"], "char_start": 0, "char_end": len(SECOND)}
    foreign = passage(rev, "thirty", "p3", retrieved_text="Shipping is always free of charge.")
    answers = [
        manifest("ans-1", "Thirty days.", [good]),
        manifest("ans-2", "Five days.", [moved]),
        manifest("ans-3", "Free.", [foreign]),
        manifest("ans-4", "Thirty days again.", [passage(rev, "thirty", "p4")]),
    ]
    assert case.ingest(rev, *(signed(case, a) for a in answers)).ok
    monkeypatch.setenv("TRACER_VERIFY_WORKERS", "0")
    whole = _findings(case)
    kinds = [k for k, _s, _d in whole[0]]
    assert "transform_found_elsewhere" in kinds and "transform_not_found" in kinds
    assert _findings(case, Sizes(text_chunk=1)) == whole
    assert _findings(case, Sizes(text_chunk=1, transform_page=1)) == whole
