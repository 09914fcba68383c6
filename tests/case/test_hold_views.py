"""A legal hold is visible to whoever sees its subject, through the real CLI; only what
its author wrote (the reason, the case id) is withheld from a viewer who does not cover
them, and it says so.  Also: the hold right's refusals say how to obtain it, and the
purge refusal names the exact release command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.case.test_cli import _digest
from tests.cli.conftest import World, cli_template, vault_world, world_copy
from tracer.report import verify_pack

__all__ = ["cli_template", "vault_world"]

SECRET = "Brightwater settlement, counsel only"

#: the world, omar's key arguments, the hold's seq
Held = tuple[World, list[str | Path], str]


def _omar(w: World) -> list[str | Path]:
    """A support-only investigator, granted by the custodian."""
    w.ok("keygen", "omar", "--out", w.keys)
    w.ok("investigators", "grant", w.vault, w.pub("omar"), "--scope", "support", *w.cust())
    return ["--key", w.key("omar")]


def _held_by_the_custodian(w: World) -> str:
    """ines (reads everything) opens a case; the custodian holds ans-1 under it."""
    me: list[str | Path] = ["--key", w.key("ines")]
    w.ok("case", "open", w.vault, "INC-SECRET", "--title", "Legal matter", "--purpose", "counsel", *me)
    cust: list[str | Path] = ["--key", w.key("custodian")]
    r = w.ok("hold", w.vault, "--answer", "ans-1", "--reason", SECRET, "--case", "INC-SECRET", *cust)
    return r.out.split("release VAULT ")[1].split()[0]


def _omar_and_the_hold(w: World) -> None:
    _omar(w)
    (w.root / "held-seq").write_text(_held_by_the_custodian(w), encoding="utf-8")


@pytest.fixture
def hold_world(
    cli_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Held:
    """`vault_world` with omar granted `support` and ans-1 held under ines's case: once per
    process, copied per test."""
    w = world_copy("hold-views", _omar_and_the_hold, cli_template, tmp_path, monkeypatch, capsys)
    return w, ["--key", w.key("omar")], (w.root / "held-seq").read_text(encoding="utf-8")


def test_a_narrower_viewer_sees_the_hold_but_not_its_reason(
    hold_world: Held,
) -> None:
    w, omar, seq = hold_world
    listed = w.ok("holds", w.vault, *omar).out
    assert f"{seq:>6}  IN FORCE" in listed and "answer ans-1" in listed
    assert "reason withheld" in listed and "case withheld" in listed and "custodian (" in listed
    assert SECRET not in listed and "INC-SECRET" not in listed
    [h] = w.ok("holds", w.vault, "--json", *omar).json()["holds"]
    assert h["reason"] is None and h["case_id"] is None and h["withheld"] == ["reason", "case_id"]
    assert h["in_force"] and h["subject"] == {"kind": "answer", "id": "ans-1"}
    assert h["signer"]["role"] == "custodian"
    traced = w.ok("trace", w.vault, "ans-1", *omar).out
    assert "LEGAL HOLD in force on answer ans-1: reason withheld" in traced and SECRET not in traced
    impact = w.ok("impact", w.vault, "--document", "returns", *omar).out
    assert "LEGAL HOLD in force on answer ans-1: reason withheld" in impact and "covers ans-1" in impact
    r = w.run("release", w.vault, seq, "--reason", "mine now", *omar)
    assert r.code == 2 and "withheld from you" in r.err
    # ines reads everything: she sees it whole
    [full] = w.ok("holds", w.vault, "--json", "--key", w.key("ines")).json()["holds"]
    assert (full["reason"], full["case_id"], full["withheld"]) == (SECRET, "INC-SECRET", [])


def test_a_narrower_viewers_pack_says_the_evidence_is_held(hold_world: Held) -> None:
    w, omar, held_seq = hold_world
    seq = int(held_seq)
    w.ok("case", "open", w.vault, "OM-1", "--title", "Refunds", "--purpose", "support side", *omar)
    w.ok("tag", w.vault, "ans-1", "stale-window", "--case", "OM-1", *omar)
    out = w.root / "pack"
    w.ok("export", w.vault, "--case", "OM-1", "--out", out, *omar)
    checked = verify_pack(out)
    assert checked.ok, checked.failures
    assert any(f"hold at log entry {seq} is shown without its reason" in x for x in checked.warnings)
    everything = "\n".join(p.read_text("utf-8") for p in sorted(out.iterdir()))
    assert SECRET not in everything and "INC-SECRET" not in everything
    report = json.loads((out / "report.json").read_text("ascii"))
    [held] = report["answers"][0]["holds"]
    assert held["seq"] == seq and held["withheld"] == ["reason", "case_id"]
    assert seq not in {r["seq"] for r in report["records"]}
    md = (out / "report.md").read_text("utf-8")
    assert "No hold was placed under this case." in md
    assert "Also in force over the evidence in this pack" in md and f"LEGAL HOLD, log entry {seq}" in md
    html = (out / "report.html").read_text("utf-8")
    assert "Also in force over the evidence in this pack" in html and "reason withheld" in html


def test_a_released_holds_release_says_who_and_why(hold_world: Held) -> None:
    w, omar, seq = hold_world
    w.ok("release", w.vault, seq, "--reason", "matter settled", "--key", w.key("custodian"))
    mine = w.ok("holds", w.vault, "--all", "--key", w.key("ines")).out
    assert "released" in mine and "by custodian (" in mine and "matter settled" in mine
    theirs = w.ok("holds", w.vault, "--all", *omar).out
    assert "by custodian (" in theirs and "matter settled" not in theirs and "reason withheld" in theirs


def test_the_hold_right_refusals_say_how_to_obtain_it(vault_world: World) -> None:
    w = vault_world
    r = w.run("hold", w.vault, "--document", "returns", "--reason", "x", "--key", w.key("ines"))
    assert r.code == 2 and "--right hold" in r.err and "tracer keygen" in r.err
    r = w.run("investigators", "grant", w.vault, w.pub("ines"), "--scope", "*", "--right", "hold", *w.cust())
    assert r.code == 2 and "already granted" in r.err and "tracer investigators revoke VAULT" in r.err


def test_the_purge_refusal_names_the_release_command(vault_world: World) -> None:
    w = vault_world
    r = w.ok("hold", w.vault, "--document", "returns", "--reason", "litigation", "--key", w.key("custodian"))
    seq = r.out.split("release VAULT ")[1].split()[0]
    r = w.run(
        "purge", w.vault, _digest(w), "--policy", "p", "--reason", "r", "--custodian-key", w.key("custodian")
    )
    assert r.code == 2 and f"`tracer release VAULT {seq} --reason …`" in r.err
