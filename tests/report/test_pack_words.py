"""A pack follows the chosen normalizer and names it beside every verdict; its headline
names the checkpoint the states were computed against; the checking steps it prints run.

Before: `tracer export` always used the recorded normalizer (a Markdown-only edit read
stale in the pack while `trace --normalizer tracer-norm/2` said verified), report.md said
"Currency: stale (quote_changed)" naming no version, the headline gave the custodian's
checkpoint size while the states were computed against the exporter's newer one, and the
pack sent its reader to docs/reports.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import manifest, new_case, passage, revision, signed
from tracer.report import export_pack, verify_pack

DOC = "# Returns policy\n\n## Refund window\n\nCustomers *must* ask within **thirty** days of delivery.\n"
LINT = DOC.replace("*must*", "_must_").replace("**thirty**", "__thirty__")


def _export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normalizer: str) -> tuple[Path, dict[str, Any]]:
    monkeypatch.setenv("TRACER_CLOCK", "2026-07-01T12:00:00Z")
    case = new_case(tmp_path / "vault")
    r1 = revision("returns", "r1", DOC, "2026-01-05T00:00:00Z")
    r2 = revision("returns", "r2", LINT, "2026-02-05T00:00:00Z")
    answer = manifest(
        "ans-lint", "Thirty days.", [passage(r1, "thirty")], generated_at="2026-01-10T00:00:00Z"
    )
    assert case.ingest(r1, r2, signed(case, answer)).ok
    s = case.session("ines")
    try:
        out = export_pack(s, ["ans-lint"], tmp_path / "pack", {"json", "md", "html"}, normalizer=normalizer)
    finally:
        s.close()
        case.close()
    report: dict[str, Any] = json.loads((out / "report.json").read_text("ascii"))
    return out, report


@pytest.mark.parametrize(
    ("normalizer", "state", "named"),
    [("recorded", "stale", "tracer-norm/1"), ("tracer-norm/2", "verified", "tracer-norm/2")],
)
def test_a_pack_follows_the_chosen_normalizer_and_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normalizer: str, state: str, named: str
) -> None:
    out, report = _export(tmp_path, monkeypatch, normalizer)
    assert verify_pack(out).ok
    assert report["normalizer"] == normalizer
    cur = report["answers"][0]["trace"]["passages"][0]["currency"]
    assert (cur["state"], cur["normalizer"]) == (state, named)
    assert report["answers"][0]["currency"] == state
    md = (out / "report.md").read_text("utf-8")
    assert re.search(rf"Currency: \*\*{state}\*\* \([a-z_\\]+, under {re.escape(named)}\)", md), md
    html = (out / "report.html").read_text("utf-8")
    assert f"under {named}" in html
    said = "checked under tracer-norm/2" if normalizer != "recorded" else "recorded with"
    assert said in md and said in html


def test_the_headline_names_the_checkpoint_the_states_were_computed_against(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, report = _export(tmp_path, monkeypatch, "recorded")
    head, cp = report["head"], report["checkpoint"]
    assert head["size"] == report["computed_against"]["size"] > cp["size"]
    md = (out / "report.md").read_text("utf-8")
    said = f"against checkpoint size {head['size']}, root {head['root']}, which the exporter ines signed"
    assert said in md and f"custodian's checkpoint size {cp['size']}" in md
    assert said in (out / "report.html").read_text("utf-8")
    assert "docs/reports.md" not in md and "docs/reports.md" not in (out / "report.html").read_text("utf-8")


def test_the_steps_the_pack_prints_run_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, _report = _export(tmp_path, monkeypatch, "recorded")
    md = (out / "report.md").read_text("utf-8")
    code = md.split("```python\n", 1)[1].split("\n```", 1)[0]
    assert 'report["files"]' in code
    ran = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and "signature and files OK" in ran.stdout, ran.stderr
    (out / "lineage.prov.json").write_bytes((out / "lineage.prov.json").read_bytes() + b" ")
    ran = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True, check=False)
    assert ran.returncode != 0 and "lineage.prov.json" in ran.stderr
