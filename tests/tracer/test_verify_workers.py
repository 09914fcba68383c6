"""Verification's worker processes: when they cannot start, the same checks run here."""

from __future__ import annotations

import pytest

from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine import runqueue
from tracer.engine import verify as verify_module
from tracer.engine.jsonshapes import FindingJSON

DOC = "# Returns policy\n\n## Refund window\n\nRefunds within thirty days.\n"


def _report(case: Case) -> tuple[list[FindingJSON], dict[str, int]]:
    s = case.session("ines", read_only=True)
    try:
        r = verify_module.verify(s.vault, s)
    finally:
        s.close()
    return [f.to_json() for f in r.findings], r.counts


def test_a_pool_that_cannot_start_is_no_reason_to_fail(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    rev = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Thirty.", [passage(rev, "thirty")]))).ok
    case.vault.con.execute("UPDATE v_answers SET producer_version = 'forged' WHERE answer_id = 'ans-1'")
    monkeypatch.setenv("TRACER_VERIFY_WORKERS", "0")
    inline = _report(case)
    assert any(f["kind"] == "view_row_altered_or_extra" for f in inline[0])

    def refuse(*_a: object, **_k: object) -> None:
        raise ValueError("bad value(s) in fds_to_keep")  # what a captured stderr gives

    monkeypatch.setenv("TRACER_VERIFY_WORKERS", "2")
    monkeypatch.setattr(runqueue, "ProcessPoolExecutor", refuse)
    assert _report(case) == inline


def test_worker_count_must_be_a_whole_number(monkeypatch: pytest.MonkeyPatch) -> None:
    from store.errors import InputError
    from tracer.engine.runqueue import worker_count

    monkeypatch.setenv("TRACER_VERIFY_WORKERS", "two")
    with pytest.raises(InputError, match="TRACER_VERIFY_WORKERS"):
        worker_count(10_000)
    monkeypatch.setenv("TRACER_VERIFY_WORKERS", "3")
    assert worker_count(10) == 3
    monkeypatch.delenv("TRACER_VERIFY_WORKERS")
    assert worker_count(10) == 0
