"""The case flows through the real CLI: open, tag, note, find, hold, purge refused,
release, purge, conclude, export --case, verify-pack."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import World, cli_template, vault_world
from tracer.inert import inert

__all__ = ["cli_template", "vault_world"]

HOSTILE_TITLE = "Refunds \x1b]8;;http://evil.example\x07click\x1b]8;;\x07 \u202eevil"


def _digest(w: World) -> str:
    log = w.ok("log", w.vault, "--json").out.splitlines()
    import base64

    for line in log:
        line = line.strip().rstrip(",")
        if '"kind": "revision"' in line or '"kind":"revision"' in line:
            entry = json.loads(base64.b64decode(json.loads(line)["entry"]))
            payload = json.loads(base64.b64decode(entry["envelope"]["payload"]))
            return str(payload["statement"]["content_sha256"])
    raise AssertionError("no revision in the log")


def test_a_case_from_open_to_pack(vault_world: World) -> None:
    w = vault_world
    me: list[str | Path] = ["--key", w.key("ines")]
    cust: list[str | Path] = ["--key", w.key("custodian")]
    r = w.ok("case", "open", w.vault, "INC-1", "--title", HOSTILE_TITLE, "--purpose", "Why 30 days?", *me)
    assert "case INC-1 opened" in r.out
    w.ok("tag", w.vault, "ans-1", "dropped-exception", "--target", "claim:1", "--case", "INC-1", *me)
    tags = w.ok("tags", w.vault, "--tag", "dropped-exception", "--json", *me).json()["tags"]
    assert [(t["answer_id"], t["target"], t["by"]["name"]) for t in tags] == [("ans-1", "claim:1", "ines")]
    note = w.root / "note.txt"
    note.write_text("Line one.\nLine two \x1b[2J.\n", encoding="utf-8")
    w.ok("note", w.vault, "--case", "INC-1", "--file", note, "--answer", "ans-1", *me)
    w.ok("finding", w.vault, "ans-1", "window is 14 days now", "--case", "INC-1", *me)
    # ines was granted no hold right: refused, nothing appended
    r = w.run("hold", w.vault, "--document", "returns", "--reason", "litigation", *me)
    assert r.code == 2 and "'hold' right" in r.err
    r = w.ok("hold", w.vault, "--document", "returns", "--reason", "litigation", "--case", "INC-1", *cust)
    hold_seq = r.out.split("release VAULT ")[1].split()[0]
    digest = _digest(w)
    purge: list[str | Path] = [
        "purge",
        w.vault,
        digest,
        "--policy",
        "retention",
        "--reason",
        "expired",
        "--custodian-key",
        w.key("custodian"),
    ]
    r = w.run(*purge)
    assert r.code == 2 and f"under legal hold: hold at log entry {hold_seq} on document 'returns'" in r.err
    holds = w.ok("holds", w.vault, "--json", *me).json()["holds"]
    assert [h["subject"] for h in holds] == [{"kind": "document", "id": "returns"}]
    w.ok("case", "conclude", w.vault, "INC-1", "--text", "Stale answer confirmed.", *me)
    shown = w.ok("case", "show", w.vault, "INC-1", *me).out
    assert "\x1b" not in shown and "\u202e" not in shown and "⟨ESC⟩" in shown and "⟨U+202E⟩" in shown
    assert "Line two ⟨ESC⟩[2J." in shown and "ines (" in shown
    as_json = w.ok("case", "show", w.vault, "INC-1", "--json", *me).out
    assert "\u202e" not in as_json and "\\u202e" in as_json
    assert json.loads(as_json)["title"] == HOSTILE_TITLE
    out = w.root / "pack"
    r = w.ok("export", w.vault, "--case", "INC-1", "--why", "for counsel", "--out", out, *me)
    assert "exported 1 answer(s)" in r.out
    r = w.ok("verify-pack", out)
    assert "RESULT      pack authentic" in r.out and "exporter    ines signed size" in r.out
    md = (out / "report.md").read_text("utf-8")
    assert "# Case INC-1: Refunds" in md and inert("for counsel") in md
    (out / "report.md").write_bytes((out / "report.md").read_bytes().replace(b"counsel", b"Counsel", 1))
    assert w.run("verify-pack", out).code == 1
    w.ok("release", w.vault, hold_seq, "--reason", "matter closed", *cust)
    assert w.ok("holds", w.vault, "--json", *me).json()["holds"] == []
    r = w.ok(*purge)
    assert "purged" in r.out


def test_case_cli_refusals_are_exit_2_and_named(vault_world: World) -> None:
    w = vault_world
    me: list[str | Path] = ["--key", w.key("ines")]
    r = w.run("note", w.vault, "--case", "NOPE", "--text", "x", *me)
    assert r.code == 2 and "no case 'NOPE'" in r.err
    r = w.run("tag", w.vault, "ans-nope", "x", *me)
    assert r.code == 2 and "no answer 'ans-nope'" in r.err
    r = w.run("release", w.vault, "3", "--reason", "x", *me)
    assert r.code == 2 and "no hold at log entry 3" in r.err
    r = w.run("export", w.vault, "--case", "NOPE", "--out", w.root / "p", *me)
    assert r.code == 2 and "no case 'NOPE'" in r.err and not (w.root / "p").exists()


def test_trace_names_a_hold_in_force(vault_world: World) -> None:
    w = vault_world
    w.ok("hold", w.vault, "--answer", "ans-1", "--reason", "litigation", "--key", w.key("custodian"))
    out = w.ok("trace", w.vault, "ans-1", "--key", w.key("ines")).out
    assert "LEGAL HOLD in force on answer ans-1: litigation" in out
