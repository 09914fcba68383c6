"""A viewer outside a scope learns nothing of it: not through impact counts, not through
revalidate's human lines.  A restricted document answers exactly as an unknown one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracer.cli.main import main

NOTE_CITER = "ans-f1dcccc7f652"  # cites a note built on the restricted legal draft
LEGAL_DOC = "legal-brightwater-draft"


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def omar(sample_vault: Path, monkeypatch: pytest.MonkeyPatch) -> list[str | Path]:
    monkeypatch.setenv("TRACER_PASSPHRASE", "omar-demo")
    return ["--key", sample_vault / "keys" / "omar.key"]


def test_a_restricted_document_reads_as_unknown(
    sample_vault: Path, omar: list[str | Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _run(capsys, "holds", sample_vault, *omar)  # pins the custodian: FIRST USE is said once, here
    restricted = _run(capsys, "impact", sample_vault, "--document", LEGAL_DOC, *omar)
    unknown = _run(capsys, "impact", sample_vault, "--document", "no-such-document-x", *omar)
    assert restricted[0] == unknown[0] == 2
    assert restricted[2].replace(LEGAL_DOC, "X") == unknown[2].replace("no-such-document-x", "X")
    with_revision = _run(capsys, "impact", sample_vault, "--document", LEGAL_DOC, "--revision", "r1", *omar)
    assert with_revision[0] == 2 and "answer(s)" not in with_revision[1]


def test_revalidate_lines_show_nothing_of_an_invisible_answer(
    sample_vault: Path, omar: list[str | Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = _run(capsys, "revalidate", sample_vault, *omar)
    assert code == 0
    line = next(x for x in out.splitlines() if NOTE_CITER in x)
    assert "2026-" not in line and "northstar" not in line and "unavailable" in line


def _legal_digests(vault: Path) -> list[str]:
    import duckdb

    con = duckdb.connect(str(vault / "vault.duckdb"), read_only=True)
    try:
        revision = con.execute(
            "SELECT content_sha256 FROM v_revisions WHERE document_id = ? ORDER BY seq LIMIT 1", [LEGAL_DOC]
        ).fetchone()
        passage = con.execute(
            "SELECT digest FROM v_digests WHERE collection = 'legal' AND digest NOT IN "
            "(SELECT digest FROM v_digests WHERE collection <> 'legal') ORDER BY digest LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    assert revision is not None and passage is not None
    return [str(revision[0]), str(passage[0])]


def test_a_restricted_digest_reads_as_unknown(
    sample_vault: Path, omar: list[str | Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, omar's `impact --digest` of a legal text said "6 answer(s)" and listed them,
    while an unknown digest was an error: the probe told him the text exists."""
    unknown_digest = "0" * 64
    _run(capsys, "holds", sample_vault, *omar)  # pins the custodian: FIRST USE is said once, here
    unknown = _run(capsys, "impact", sample_vault, "--digest", unknown_digest, *omar)
    assert unknown[0] == 2
    for digest in _legal_digests(sample_vault):
        restricted = _run(capsys, "impact", sample_vault, "--digest", digest, *omar)
        assert restricted[0] == 2 and "answer(s)" not in restricted[1], restricted
        # the same refusal; only the nearest visible digests suggested differ with the input
        same = restricted[2].replace(digest, "X").split("closest")[0]
        assert same == unknown[2].replace(unknown_digest, "X").split("closest")[0], restricted[2]
