"""`verify-pack` says what the pack proves (it is authentic) apart from what its evidence
records (findings, states, holds), and counts each legal hold once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracer.cli.main import main

#: the sample vault's answer whose retrieved passage fails its checksum
MISMATCHED = "ans-f5f07070554a"
PASSAGE = "psg-b47db759e7"
#: another answer citing the same document (shipping-policy)
SIBLING = "ans-2d69784851b4"


def _run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    return code, capsys.readouterr().out


def _as(vault: Path, name: str, passphrase: str) -> list[str | Path]:
    secret = vault.parent / f"{name}.pass"
    secret.write_text(passphrase, encoding="utf-8")
    return ["--key", vault / "keys" / f"{name}.key", "--passphrase-file", secret]


def test_an_authentic_pack_over_a_checksum_mismatch_names_the_finding(
    sample_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ines = _as(sample_vault, "ines", "ines-demo")
    pack = tmp_path / "pack"
    assert _run(capsys, "export", sample_vault, "--answer", MISMATCHED, "--out", pack, *ines)[0] == 0
    code, out = _run(capsys, "verify-pack", pack)
    assert code == 0
    assert "RESULT      pack authentic: every signature, proof and digest checks out" in out
    assert "OK" not in out
    lines = out.splitlines()
    at = lines.index("RECORDED    the evidence inside carries 1 finding(s):")
    assert lines[at + 1].startswith(
        f"  FINDING   answer {MISMATCHED}, passage {PASSAGE} retrieved text: checksum_mismatch (recorded "
    )
    assert "answers' states: integrity checksum_mismatch 1; currency verified 1" in out
    code, out = _run(capsys, "verify-pack", pack, "--json")
    got = json.loads(out)
    assert code == 0 and got["authentic"] is True and got["ok"] is True
    assert [(f["answer_id"], f["state"]) for f in got["recorded"]["findings"]] == [
        (MISMATCHED, "checksum_mismatch")
    ]


def test_a_pack_that_fails_says_its_record_is_unproven(
    sample_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ines = _as(sample_vault, "ines", "ines-demo")
    pack = tmp_path / "pack"
    assert _run(capsys, "export", sample_vault, "--answer", SIBLING, "--out", pack, *ines)[0] == 0
    code, out = _run(capsys, "verify-pack", pack)
    assert code == 0 and "RECORDED    the evidence inside carries no finding" in out
    report = pack / "report.json"
    report.write_bytes(report.read_bytes().replace(b'"intact"', b'"intakt"', 1))
    code, out = _run(capsys, "verify-pack", pack)
    assert code == 1
    assert "RESULT      NOT AUTHENTIC:" in out and "pack authentic" not in out
    assert "CLAIMED     unproven (pack failed): the evidence" in out


def test_each_hold_is_counted_once_however_often_the_pack_shows_it(
    sample_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two holds under a case: the document hold is shown beside both answers and in the
    case, the answer hold beside one answer and in the case: five showings, two holds."""
    ines = _as(sample_vault, "ines", "ines-demo")
    cust = _as(sample_vault, "custodian", "northstar-custodian")
    v = sample_vault
    assert _run(capsys, "case", "open", v, "INC-9", "--title", "T", "--purpose", "P", *ines)[0] == 0
    hold: list[str | Path] = ["hold", v, "--case", "INC-9"]
    assert _run(capsys, *hold, "--document", "shipping-policy", "--reason", "litigation", *cust)[0] == 0
    assert _run(capsys, *hold, "--answer", MISMATCHED, "--reason", "complaint", *cust)[0] == 0
    pack = tmp_path / "pack"
    export: list[str | Path] = [
        "export",
        v,
        "--case",
        "INC-9",
        "--answer",
        MISMATCHED,
        SIBLING,
        "--out",
        pack,
    ]
    assert _run(capsys, *export, *ines)[0] == 0
    report = json.loads((pack / "report.json").read_text("utf-8"))
    shown = sum(len(a["holds"]) for a in report["answers"]) + len(report["case"]["holds"])
    assert shown == 5
    code, out = _run(capsys, "verify-pack", pack, "--json")
    got = json.loads(out)
    assert code == 0 and got["checked"]["holds"] == 2
    assert (got["recorded"]["holds"], got["recorded"]["holds_in_force"]) == (2, 2)
    code, out = _run(capsys, "verify-pack", pack)
    assert "legal holds: 2 (2 in force)" in out
    assert "the vault's verification at export, log entry 264: checksum_mismatch" in out
