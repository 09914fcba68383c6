"""`tracer export` and `tracer verify-pack` as a user runs them, exit codes included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import PASSPHRASE
from tests.report.packs import Built, report_of
from tracer.cli.main import main


@pytest.fixture
def cli(built: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Common flags: the vault (closed, so the CLI can open it) and ines's key file."""
    key, _pub = built.case.investigators["ines"].save(tmp_path / "keys", PASSPHRASE)
    monkeypatch.setenv("TRACER_PASSPHRASE", PASSPHRASE.decode())
    built.case.close()
    return [str(built.case.path), "--key", str(key)]


def test_export_then_verify_pack(cli: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pack"
    args = [
        "export",
        cli[0],
        "--answer",
        "ans-stale",
        "ans-purged",
        "--answer",
        "ans-note",
        "--out",
        str(out),
    ]
    assert main([*args, *cli[1:]]) == 0
    assert "exported 3 answer(s)" in capsys.readouterr().out
    assert [a["answer_id"] for a in report_of(out)["answers"]] == ["ans-stale", "ans-purged", "ans-note"]
    assert main(["verify-pack", str(out)]) == 0
    assert "RESULT      pack authentic" in capsys.readouterr().out
    assert main(["verify-pack", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_verify_pack_exit_codes(cli: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pack"
    assert main(["export", cli[0], "--answer", "ans-stale", "--out", str(out), *cli[1:]]) == 0
    capsys.readouterr()
    (out / "report.html").write_text("tampered")
    assert main(["verify-pack", str(out), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["failures"] == [
        {
            "file": "report.html",
            "path": "$",
            "message": "SHA-256 differs from the digest signed in report.json $.files",
        }
    ]
    assert main(["verify-pack", str(tmp_path / "nowhere")]) == 2


def test_format_selects_people_files(cli: list[str], tmp_path: Path) -> None:
    out = tmp_path / "pack"
    assert (
        main(["export", cli[0], "--answer", "ans-stale", "--out", str(out), "--format", "md", *cli[1:]]) == 0
    )
    names = {p.name for p in out.iterdir()}
    assert "report.md" in names and "report.json" in names and "report.html" not in names
    assert (
        main(
            [
                "export",
                cli[0],
                "--answer",
                "ans-stale",
                "--out",
                str(tmp_path / "x"),
                "--format",
                "pdf",
                *cli[1:],
            ]
        )
        == 2
    )


def test_all_exports_only_answers_in_scope(cli: list[str], tmp_path: Path) -> None:
    out = tmp_path / "pack"
    assert main(["export", cli[0], "--all", "--out", str(out), *cli[1:]]) == 0
    ids = [a["answer_id"] for a in report_of(out)["answers"]]
    assert "ans-secret" not in ids and "ans-note-secret" not in ids
    assert {"ans-stale", "ans-purged", "ans-hostile", "ans-note", "note-1"} <= set(ids)
    assert report_of(out)["selection"] == "all answers in scope"


def test_impact_exports_answers_citing_a_document(cli: list[str], tmp_path: Path) -> None:
    out = tmp_path / "pack"
    assert main(["export", cli[0], "--impact", "returns", "--out", str(out), *cli[1:]]) == 0
    ids = {a["answer_id"] for a in report_of(out)["answers"]}
    assert {"ans-stale", "ans-hostile", "ans-note", "note-1"} <= ids
    assert "ans-purged" not in ids and "ans-secret" not in ids


def test_refusals(cli: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("x")
    assert main(["export", cli[0], "--answer", "ans-stale", "--out", str(busy), *cli[1:]]) == 2
    assert "not an empty directory" in capsys.readouterr().err
    assert main(["export", cli[0], "--answer", "nope", "--out", str(tmp_path / "p"), *cli[1:]]) == 2
    assert "no answer 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()
