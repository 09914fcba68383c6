"""Ids as people type them: a typo is exit 2 naming the closest ids, a unique prefix works.

`tracer impact --document returns` once printed "0 answer(s)" and exited 0 for a
document that does not exist: a typo read as "nothing depends on this".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run_main as _run
from tracer.cli.main import EXIT_USAGE


def test_impact_of_an_unknown_document_is_exit_2_with_the_closest(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "impact", str(vault), "--document", "retruns")
    assert code == EXIT_USAGE, out
    assert "no document 'retruns'" in err and "closest known: returns" in err
    assert "answer(s)" not in out


def test_impact_accepts_a_unique_document_prefix(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "impact", str(vault), "--document", "ret")
    assert code == 0
    assert "impact of document returns: 1 answer(s)" in out and "ans-stale" in out


def test_impact_of_an_unknown_revision_names_the_known_ones(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _run(capsys, "impact", str(vault), "--document", "returns", "--revision", "B")
    assert code == EXIT_USAGE
    assert "no revision of returns 'B'" in err and "A" in err.split("closest known:")[1]


def test_impact_of_an_unknown_digest_is_exit_2(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "impact", str(vault), "--digest", "ab" * 32)
    assert code == EXIT_USAGE, out
    assert "no digest" in err


def test_a_document_outside_the_viewers_scope_is_not_known(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACER_KEY", str(vault.parent / "keys" / "rita.key"))
    code, _out, err = _run(capsys, "impact", str(vault), "--document", "draft-secret")
    assert code == EXIT_USAGE
    assert "no document 'draft-secret' you can see" in err
    assert "draft-secret" not in err.split("you can see")[1]


def test_trace_accepts_a_unique_answer_prefix(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "trace", str(vault), "ans-sta")
    assert code == 0 and "answer ans-stale" in out


def test_trace_of_an_ambiguous_prefix_lists_the_candidates(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _run(capsys, "trace", str(vault), "ans-")
    assert code == EXIT_USAGE
    assert "no unique answer 'ans-'" in err and "ans-verified" in err


def test_trace_of_a_mistyped_answer_suggests_the_closest(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _run(capsys, "trace", str(vault), "ans-stael")
    assert code == EXIT_USAGE
    assert "no answer 'ans-stael'" in err and "closest known: ans-stale" in err


def test_a_note_on_a_prefix_lands_on_the_one_answer(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "finding", str(vault), "ans-run", "exception dropped")
    assert code == 0
    assert "investigator note on ans-runbook signed and recorded at log entry" in out


def test_impact_of_an_ambiguous_document_prefix_lists_the_candidates(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _run(capsys, "impact", str(vault), "--document", "draft")
    assert code == EXIT_USAGE
    assert "no unique document 'draft'" in err and "draft-public" in err
