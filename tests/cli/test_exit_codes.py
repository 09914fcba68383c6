"""Every exit code `tracer --help` and docs/cli.md list, produced by a real command line,
and the documents saying the same as `EXIT_CODES`."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from tests.cli.conftest import REPO, World
from tracer.cli.main import EXIT_CODES, build_parser

CODES = {code for code, _ in EXIT_CODES}


def test_success_and_a_clean_verify_are_0(vault_world: World) -> None:
    w = vault_world
    r = w.run("verify", w.vault, "--key", w.key("ines"))
    assert r.code == 0, r


def test_findings_and_refused_input_files_are_1(vault_world: World) -> None:
    w = vault_world
    bad = w.write("junk.json", {"schema": "tracer.source_revision/v1"})
    r = w.run("ingest", w.vault, bad, *w.cust())
    assert r.code == 1 and "REJECTED" in r.out, r
    pack = w.root / "pack"
    assert w.run("export", w.vault, "--answer", "ans-1", "--out", pack, "--key", w.key("ines")).code == 0
    (pack / "report.md").write_bytes((pack / "report.md").read_bytes() + b"\n")
    r = w.run("verify-pack", pack)
    assert r.code == 1 and "NOT AUTHENTIC" in r.out, r
    r = w.run("revalidate", w.vault, "--key", w.key("ines"), "--fail-on", "verified")
    assert r.code == 1 and "FAIL-ON verified: 1 answer(s)" in r.out, r


def test_the_sample_vaults_finding_is_1(
    sample_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "pass"
    secret.write_text("omar-demo", encoding="utf-8")
    w = World(tmp_path, capsys)
    r = w.run(
        "verify", sample_vault, "--key", sample_vault / "keys" / "omar.key", "--passphrase-file", secret
    )
    assert r.code == 1 and "checksum_mismatch" in r.out, r


def test_what_could_not_be_done_is_2(vault_world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    w = vault_world
    ines: list[str | Path] = ["--key", w.key("ines")]
    cases: dict[str, tuple[str | Path, ...]] = {
        "unknown id": ("trace", w.vault, "ans-nope", *ines),
        "a missing argument": ("trace", w.vault),
        "refused hold (no hold right)": ("hold", w.vault, "--answer", "ans-1", "--reason", "r", *ines),
        "unknown command": ("nosuch",),
    }
    for what, args in cases.items():
        r = w.run(*args)
        assert r.code == 2, (what, r)
        assert "Traceback" not in r.err
    monkeypatch.setenv("TRACER_PASSPHRASE", "not the passphrase")
    r = w.run("trace", w.vault, "ans-1", *ines)
    assert r.code == 2 and "wrong passphrase" in r.err, r


def test_a_damaged_vault_is_2_without_a_traceback(vault_world: World) -> None:
    w = vault_world
    db = w.vault / "vault.duckdb"
    db.write_bytes(b"\0" * 4096 + db.read_bytes()[4096:])
    r = w.spawn("verify", w.vault, "--structural-only")
    assert r.code == 2 and r.err.startswith("tracer: error:") and "Traceback" not in r.err, r


def test_ctrl_c_is_130(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    class Interrupted(io.BytesIO):
        def read(self, *_: object) -> bytes:
            raise KeyboardInterrupt

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(Interrupted()))
    r = world.run("chunk", "-")
    assert r.code == 130 and "interrupted" in r.err


def test_the_codes_exercised_are_the_codes_listed() -> None:
    """The tests above produce each listed code: 0, 1, 2 and 130, and no other."""
    assert CODES == {0, 1, 2, 130}


def test_help_and_docs_list_the_same_codes_and_words() -> None:
    help_text = " ".join(build_parser(selected="").format_help().split())
    for code, meaning in EXIT_CODES:
        assert f"{code} {meaning}" in help_text
    doc = (REPO / "docs" / "cli.md").read_text("utf-8")
    section = doc.split("## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| (\d+) \| (.+) \|$", section, re.M))
    assert {int(k): v for k, v in rows.items()} == dict(EXIT_CODES)
    readme = (REPO / "README.md").read_text("utf-8")
    said = re.search(r"Exit codes: (.+?)\.\n", readme, re.S)
    assert said is not None
    assert [int(c) for c in re.findall(r"\b(\d+) ", said.group(1))] == [code for code, _ in EXIT_CODES]
