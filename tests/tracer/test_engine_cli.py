"""`tracer verify / trace / revalidate / impact`: documented JSON, exit codes, progress, unlock errors.

The commands run in-process through `tracer.cli.main.main`, exactly as the console
script does, with a real passphrase-protected key file.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store import admin
from store.crypto import Identity, sha256_hex
from tests.helpers import PASSPHRASE, T0, Case, case_copy, manifest, passage, revision, signed
from tracer.cli.main import main

SENTENCE = "Customers may request a refund within thirty days of delivery."
DOC = f"# Returns policy\n\n## Refund window\n\n{SENTENCE}\n"
ANSWER = "Refunds are accepted for thirty days."

VERIFY_KEYS = {
    "ok", "computed_at", "viewer", "mode", "verified_from", "warnings", "checkpoint", "counts", "findings"
}  # fmt: skip
FINDING_KEYS = {"kind", "seq", "record", "detail"}
TRACE_KEYS = {
    "answer_id", "run_id", "kind", "seq", "generated_at", "visible", "integrity", "currency", "answer_time",
    "reasons", "transform", "transform_failures", "signature", "producer", "runtime",
    "authorization_at_run_time", "question", "answer",
    "citations", "passages", "lineage", "faults", "findings", "computed_at", "checkpoint",
}  # fmt: skip
REVALIDATE_KEYS = {"computed_at", "checkpoint", "counts", "normalizer", "answers"}
ANSWER_ROW_KEYS = {
    "answer_id",
    "run_id",
    "kind",
    "generated_at",
    "producer",
    "citations",
    "integrity",
    "currency",
    "answer_time",
    "citation_verdicts",
}


def _cli_vault(case: Case) -> None:
    """Two revisions and an answer; ines's and a stranger's key files, the passphrase file."""
    ra = revision("refund", "A", DOC, "2026-01-05T00:00:00Z")
    rc = revision("refund", "C", DOC.replace("thirty", "fourteen"), "2026-03-05T00:00:00Z")
    draft = manifest("ans-1", ANSWER, [passage(ra, "thirty")])
    assert case.ingest(ra, rc, signed(case, draft)).ok
    keys = case.path.parent / "keys"
    key, _pub = case.investigators["ines"].save(keys, PASSPHRASE)
    Identity.from_seed("mallory", b"mallory").save(keys, PASSPHRASE)
    pw = case.path.parent / "pass"
    pw.write_bytes(PASSPHRASE)
    case.vault.close()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        # this machine pins the custodian now: the tests read stderr after FIRST USE was said
        assert main(["holds", str(case.path), "--key", str(key), "--passphrase-file", str(pw)]) == 0


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """`_cli_vault` with the home it left, built once per process and copied."""
    case = case_copy("engine-cli", _cli_vault, tmp_path)
    case.vault.close()
    key, stranger = tmp_path / "keys" / "ines.key", tmp_path / "keys" / "mallory.key"
    yield {
        "case": case,
        "vault": str(case.path),
        "key": str(key),
        "stranger": str(stranger),
        "pw": str(tmp_path / "pass"),
    }
    case.close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def auth(c: dict[str, Any], key: str | None = None) -> list[str]:
    return ["--key", key or c["key"], "--passphrase-file", c["pw"]]


# -- verify ----------------------------------------------------------------------------------


def _only_first_use(err: str) -> bool:
    """stderr says at most the first use (the pin, with its fingerprint): stdout is pure JSON."""
    return all(line.startswith("tracer: FIRST USE") for line in err.splitlines())


def test_verify_json_clean_exits_0(cli: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "verify", cli["vault"], *auth(cli), "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == VERIFY_KEYS
    assert doc["ok"] is True and doc["findings"] == []
    assert set(doc["checkpoint"]) == {"size", "signer", "recomputed_root", "log_size"}
    assert doc["counts"]["manifests"] == 1 and doc["counts"]["intact"] >= 4
    assert "ines" in doc["viewer"]
    assert _only_first_use(err)


def test_verify_json_findings_exit_1(cli: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    v = cli["case"].reopen()
    v.con.execute("UPDATE v_passages SET doc_revision = 'Z'")
    v.close()
    code, out, _err = run(capsys, "verify", cli["vault"], *auth(cli), "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["ok"] is False
    assert [f["kind"] for f in doc["findings"]] == [
        "view_row_altered_or_extra",
        "view_row_missing_or_altered",
    ]
    for f in doc["findings"]:
        assert set(f) == FINDING_KEYS
        assert f["record"]["answer_id"] == "ans-1" and f["record"]["passage_id"] == "p1"
        assert isinstance(f["seq"], int)


def test_verify_text_output_names_the_findings(
    cli: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    v = cli["case"].reopen()
    v.con.execute("UPDATE v_passages SET doc_revision = 'Z'")
    v.close()
    code, out, _err = run(capsys, "verify", cli["vault"], *auth(cli))
    assert code == 1
    assert "RESULT      2 finding(s)" in out
    assert "[view_row_altered_or_extra]" in out and "answer_id=ans-1" in out


def test_verify_structural_only_needs_no_key(cli: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "verify", cli["vault"], "--structural-only", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["viewer"] is None and doc["counts"]["out_of_scope"] >= 4
    assert SENTENCE not in out


def test_verify_usage_and_environment_errors_exit_2(
    cli: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "verify", cli["vault"], "--json")
    assert code == 2 and "no key file" in err
    code, _out, err = run(capsys, "verify", cli["vault"] + "-nope", *auth(cli))
    assert code == 2 and "no such vault" in err
    with pytest.raises(SystemExit) as exc:
        main(["verify"])
    assert exc.value.code == 2


class _TTY:
    """stderr that claims to be a terminal, to show progress is still withheld in --json mode."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, s: str) -> int:
        self.parts.append(s)
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("command", ["verify", "revalidate"])
def test_progress_only_on_a_terminal_and_never_with_json(
    cli: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    tty = _TTY()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main([command, cli["vault"], *auth(cli), "--json"]) == 0
    assert _only_first_use("".join(tty.parts))
    json.loads(capsys.readouterr().out)
    assert main([command, cli["vault"], *auth(cli)]) == 0
    assert "%" in "".join(tty.parts)


# -- trace -----------------------------------------------------------------------------------


def test_trace_json_schema(cli: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", cli["vault"], "ans-1", *auth(cli), "--json")
    assert code == 0 and _only_first_use(err)
    doc = json.loads(out)
    assert set(doc) == TRACE_KEYS
    assert (doc["integrity"], doc["currency"]) == ("intact", "stale")
    (c,) = doc["citations"]
    assert set(c) == {
        "index",
        "answer_start",
        "answer_end",
        "span",
        "passage_ids",
        "unknown_passages",
        "integrity",
        "currency",
        "answer_time",
    }
    assert c["span"] == ANSWER
    (p,) = doc["passages"]
    assert p["retrieved"]["text"] == SENTENCE and p["retrieved"]["state"] == "intact"
    assert set(p["chain"]) == {"chunk", "locator", "normalizer_version", "document", "source"}
    cur = p["currency"]
    assert (cur["state"], cur["reason"]) == ("stale", "quote_changed")
    assert cur["old_excerpt"] == SENTENCE
    assert cur["current_revision"]["excerpt"] == SENTENCE.replace("thirty", "fourteen")
    assert cur["current_revision"]["label"] == "current revision C (2026-03-05T00:00:00Z)"
    assert cur["cited_revision"]["content"]["state"] == "intact"
    assert doc["checkpoint"]["size"] > 0


def test_trace_text_keeps_current_text_in_its_labelled_block(
    cli: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, "trace", cli["vault"], "ans-1", *auth(cli))
    assert code == 0
    head, _sep, current = out.partition("--- current revision C (2026-03-05T00:00:00Z) ---")
    assert current and "fourteen" in current
    assert "fourteen" not in head and SENTENCE in head


def test_trace_unknown_answer_exits_2(cli: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", cli["vault"], "ans-nope", *auth(cli), "--json")
    assert code == 2 and out == "" and "no answer 'ans-nope'" in err


# -- revalidate and impact ---------------------------------------------------------------------


def test_revalidate_json_schema(cli: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "revalidate", cli["vault"], *auth(cli), "--json")
    assert code == 0 and _only_first_use(err)
    doc = json.loads(out)
    assert set(doc) == REVALIDATE_KEYS
    assert doc["counts"] == {
        "integrity": {"intact": 1},
        "currency": {"stale": 1},
        "answer_time": {"current": 1},
    }
    (row,) = doc["answers"]
    assert set(row) == ANSWER_ROW_KEYS
    assert (row["answer_id"], row["integrity"], row["currency"]) == ("ans-1", "intact", "stale")


def test_impact_json_by_document_revision_and_digest(
    cli: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "impact", cli["vault"], "--document", "refund", *auth(cli), "--json")
    doc = json.loads(out)
    assert code == 0 and set(doc) == REVALIDATE_KEYS | {"target", "holds"}
    assert doc["target"] == "document refund" and [a["answer_id"] for a in doc["answers"]] == ["ans-1"]
    code, out, _ = run(
        capsys, "impact", cli["vault"], "--document", "refund", "--revision", "C", *auth(cli), "--json"
    )
    assert code == 0 and json.loads(out)["answers"] == []
    digest = sha256_hex(DOC.encode())
    code, out, _ = run(capsys, "impact", cli["vault"], "--digest", digest, *auth(cli), "--json")
    assert code == 0 and [a["answer_id"] for a in json.loads(out)["answers"]] == ["ans-1"]
    code, _out, err = run(capsys, "impact", cli["vault"], "--digest", digest, "--revision", "C", *auth(cli))
    assert code == 2 and "--revision" in err


# -- unlock failures ---------------------------------------------------------------------------


def _no_evidence(*texts: str) -> None:
    for t in texts:
        assert SENTENCE not in t and ANSWER not in t and "thirty" not in t


@pytest.mark.parametrize(
    "command", [["verify"], ["trace", "ans-1"], ["revalidate"], ["impact", "--document", "refund"]]
)
def test_unknown_investigator_is_refused(
    cli: dict[str, Any], capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, out, err = run(
        capsys, command[0], cli["vault"], *command[1:], *auth(cli, cli["stranger"]), "--json"
    )
    assert code == 2 and out == ""
    assert "mallory" in err and "is not an investigator of this vault" in err
    _no_evidence(out, err)


def test_revoked_investigator_is_refused(cli: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    case: Case = cli["case"]
    v = case.reopen()
    admin.revoke_investigator(
        v, case.custodian, case.investigators["ines"].key_id, T0.replace("01-01", "06-01")
    )
    v.close()
    code, out, err = run(capsys, "trace", cli["vault"], "ans-1", *auth(cli), "--json")
    assert code == 2 and out == "" and "was revoked at 2026-06-01" in err
    _no_evidence(out, err)


def test_wrong_passphrase_is_refused(
    cli: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad-pass"
    bad.write_text("not the passphrase")
    code, out, err = run(
        capsys, "trace", cli["vault"], "ans-1", "--key", cli["key"], "--passphrase-file", str(bad)
    )
    assert code == 2 and out == ""
    assert "wrong passphrase" in err and "hint:" in err
    _no_evidence(out, err)
