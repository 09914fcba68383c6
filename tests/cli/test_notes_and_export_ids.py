"""Investigator notes name their target one way and are checked like tags; `export`
resolves ids like `trace` and `impact`; `trace` shows an answer's tags.

Before: `tracer finding --help` said "e.g. citation:1", tags said `claim:1`, the TUI wrote
`citation [1]`, and any `--target` text was accepted; `export --answer PREFIX` and
`export --impact <typo>` said "no answer" / "nothing exported" instead of naming the
closest ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import run_main as _run
from tracer.cli.main import EXIT_USAGE


def _targets(capsys: pytest.CaptureFixture[str], vault: Path, answer: str) -> list[str]:
    code, out, _err = _run(capsys, "trace", str(vault), answer, "--json")
    assert code == 0
    return [f["target"] for f in json.loads(out)["findings"]]


def test_a_note_target_has_one_spelling_and_the_old_one_is_read_as_it(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "annotate", str(vault), "ans-stale", "one", "--target", "claim:1")[0] == 0
    assert _run(capsys, "annotate", str(vault), "ans-stale", "two", "--target", "citation:1")[0] == 0
    assert _run(capsys, "annotate", str(vault), "ans-stale", "three", "--target", "passage:p1")[0] == 0
    assert _run(capsys, "annotate", str(vault), "ans-stale", "four")[0] == 0
    assert _targets(capsys, vault, "ans-stale") == ["claim:1", "claim:1", "passage:p1", "answer"]


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("claim:9", "has no claim 9 (its claims are numbered 1 to 1)"),
        ("passage:nope", "has no passage 'nope'"),
        ("line 3", "is not 'answer', 'claim:N'"),
    ],
)
def test_a_note_on_something_the_answer_does_not_have_is_refused(
    vault: Path, capsys: pytest.CaptureFixture[str], target: str, said: str
) -> None:
    code, _out, err = _run(capsys, "annotate", str(vault), "ans-stale", "x", "--target", target)
    assert code == EXIT_USAGE
    assert f"--target {target!r}" in err and said in err
    assert _targets(capsys, vault, "ans-stale") == []


def test_finding_is_the_old_name_of_annotate(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "finding", str(vault), "ans-stale", "old name", "--target", "citation:1")
    assert code == 0 and "investigator note on ans-stale signed" in out
    assert "`tracer finding` is now `tracer annotate`" in err
    assert _targets(capsys, vault, "ans-stale") == ["claim:1"]


def test_trace_lists_the_answers_tags(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "tag", str(vault), "ans-stale", "window-changed", "--target", "citation:1")[0] == 0
    code, out, _err = _run(capsys, "trace", str(vault), "ans-stale")
    assert code == 0
    assert "TAG window-changed on claim:1 by ines (" in out


def test_export_accepts_a_unique_answer_prefix(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = _run(capsys, "export", str(vault), "--answer", "ans-sta", "--out", str(tmp_path / "p"))
    assert code == 0 and "exported 1 answer(s)" in out
    report = json.loads((tmp_path / "p" / "report.json").read_text("ascii"))
    assert [a["answer_id"] for a in report["answers"]] == ["ans-stale"]


def test_export_of_a_mistyped_answer_names_the_closest(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _run(
        capsys, "export", str(vault), "--answer", "ans-stael", "--out", str(tmp_path / "p")
    )
    assert code == EXIT_USAGE
    assert "no answer 'ans-stael'" in err and "closest known: ans-stale" in err
    assert not (tmp_path / "p").exists()


def test_export_impact_of_a_mistyped_document_is_exit_2(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _run(capsys, "export", str(vault), "--impact", "retruns", "--out", str(tmp_path / "p"))
    assert code == EXIT_USAGE
    assert "no document 'retruns'" in err and "closest known: returns" in err
    code, out, _err = _run(capsys, "export", str(vault), "--impact", "ret", "--out", str(tmp_path / "q"))
    assert code == 0 and "exported 1 answer(s)" in out
