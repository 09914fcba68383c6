"""`tracer trace` of an imported answer: the mark said once in the header, then on every
fact — the span id with its own attestation, the runtime and authorization absent, and
each citation row marked as the importer's."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.helpers import Case
from tests.imports.conftest import FIXTURES, run_import
from tracer.cli.render import print_trace
from tracer.engine.imported import MISRECORDED_FILE
from tracer.engine.trace import Tracer


def _printed(case: Case, answer_id: str, capsys: pytest.CaptureFixture[str]) -> str:
    s = case.session("ines")
    t = Tracer(s).trace(answer_id, record=False)
    capsys.readouterr()
    print_trace(t, s)
    return capsys.readouterr().out


def test_trace_marks_each_imported_fact_once_and_every_citation(
    sourced: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = run_import(sourced, FIXTURES / "langchain-openinference-0.1.80.jsonl")
    st = plan.items[0].statement
    out = _printed(sourced, st["answer_id"], capsys)
    head = [line for line in out.splitlines() if "NOT ATTESTED BY THE PRODUCER" in line]
    assert len(head) == 1 and "not attested by the producer" not in head[0]  # said once, not twice
    span_id = st["passages"][0]["span_id"]
    assert f"span {span_id} [importer-computed] (the span the passage was read from)" in out
    assert f"span {span_id} [absent]" not in out
    assert "authorization at run time — [absent]" in out
    assert "prompt template, pipeline, parameters — [absent]" in out
    cited = [line for line in out.splitlines() if line.startswith("citation [")]
    assert cited and len(cited) == len(st["citations"])
    for line in cited:
        assert re.search(r"\[imported — not attested\] \[importer-computed\] \(the whole answer rests", line)


def test_an_old_import_that_recorded_a_field_name_as_its_file_says_so(
    sourced: Case, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # imports before the fix signed `export.file` = "runtime.session_id": the same bytes
    # come from an export whose file really has that name
    export = tmp_path / MISRECORDED_FILE
    shutil.copyfile(FIXTURES / "langchain-openinference-0.1.80.jsonl", export)
    st = run_import(sourced, export).items[0].statement
    assert st["export"]["file"] == MISRECORDED_FILE  # signed as found, never rewritten
    out = _printed(sourced, st["answer_id"], capsys)
    assert f"from {MISRECORDED_FILE} (not the file name: an older import's defect, see docs/import.md)" in out


def test_a_real_file_name_is_shown_without_the_defect_note(
    sourced: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    st = run_import(sourced, FIXTURES / "langchain-openinference-0.1.80.jsonl").items[0].statement
    out = _printed(sourced, st["answer_id"], capsys)
    assert "from langchain-openinference-0.1.80.jsonl (" in out and "older import's defect" not in out
