"""tracer chunk, batch tracer pack and tracer ingest-outbox, driven as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store.crypto import load_identity
from tests.cli.conftest import PASSPHRASE, World, draft, revision_input
from tests.producer.conftest import RETURNS, Ticks
from tracer import secrets
from tracer.cli import outbox_cmds
from tracer.producer import Authorization, Producer, Recorder, Runtime, Signer, SourceRevision, chunk_report
from tracer.producer.outbox import TEMP_MAX_AGE


def _sdk_record(w: World, outbox: Path, answer_id: str) -> Path:
    rev = SourceRevision(**{k: v for k, v in revision_input("B").items() if k != "schema"})
    rec_ = Recorder(
        Signer.from_key_file(w.key("producer"), PASSPHRASE),
        outbox,
        Producer("northstar-support-assistant", "2.0.0"),
        Runtime("model-x", "support-v3", "rag-3"),
        clock=Ticks(),
    )
    recorder_rev = rec_.write_revision(rev) if answer_id == "ans-sdk-1" else None
    with rec_.start(
        "What is the refund window?", Authorization("u:1", "acl-7", "allow"), "support", answer_id=answer_id
    ) as rec:
        text = "Customers may request a refund within thirty days of delivery."
        p = rec.retrieved(text, rev, rank=1, score=0.9, query="refund window")
        rec.sent(f"Context:\n{text}\nQuestion: What is the refund window?")
        rec.answer("Thirty days from delivery.")
        rec.cite(0, 26, p)
    assert recorder_rev is None or recorder_rev.exists()
    return next(outbox.glob(f"answer-{answer_id}-*.json"))


def test_chunk_prints_the_engine_s_blocks(world: World, tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes((RETURNS + "\nEvil \x1b[31mred\x1b[0m text.\n").encode())
    report = world.ok("chunk", doc, "--json").json()
    assert report == chunk_report(doc.read_text(encoding="utf-8"))
    human = world.ok("chunk", doc).out
    assert "¶0" in human and "Returns policy > Refund window" in human
    assert "\x1b" not in human and "⟨ESC⟩" in human
    doc.write_bytes(b"\xff\xfe")
    r = world.run("chunk", doc)
    assert r.code == 2 and "not UTF-8" in r.err


def test_pack_signs_many_drafts_with_one_unlock(vault_world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    w = vault_world
    drafts = [w.write(f"d{n}.json", draft(f"ans-b{n}")) for n in range(5)]
    unlocks: list[Path] = []
    real = secrets.load_key

    def counting(path: Path, passphrase_file: Path | None) -> object:
        unlocks.append(path)
        return real(path, passphrase_file)

    monkeypatch.setattr(secrets, "load_key", counting)  # store_cmds imports it when a command runs
    out = w.root / "packed"
    w.ok("pack", *drafts, "--key", w.key("producer"), "--out-dir", out)
    assert unlocks == [w.key("producer")]
    packed = sorted(out.iterdir())
    assert [p.name for p in packed] == [f"d{n}.json" for n in range(5)]
    r = w.ok("ingest", w.vault, *packed, *w.cust(), "--json").json()
    assert r["ok"] and len(r["accepted"]) == 5 and r["faults"] == []
    again = w.run("pack", drafts[0], "--key", w.key("producer"), "--out-dir", out)
    assert again.code == 2 and "not overwritten" in again.err
    many = w.run("pack", *drafts[:2], "--key", w.key("producer"))
    assert many.code == 2 and "--out-dir" in many.err
    bad = w.write("bad.json", [1])
    r2 = w.run("pack", drafts[1], bad, "--key", w.key("producer"), "--out-dir", w.root / "p2")
    assert r2.code == 2 and not (w.root / "p2").exists()  # nothing signed before all were read


def test_ingest_outbox_appends_then_moves_aside(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    first = _sdk_record(w, outbox, "ans-sdk-1")
    (outbox / ".tmp-0123-half.json").write_text('{"envel')  # a write in progress
    stale = outbox / ".tmp-4567-answer-dead.json"  # what a writer killed an hour ago left
    stale.write_text('{"envel')
    old = time.time() - TEMP_MAX_AGE - 1
    os.utime(stale, (old, old))
    r = w.ok("ingest-outbox", w.vault, outbox, *w.cust())
    assert "appended 2 file(s)" in r.out
    assert not stale.exists() and f"removed {stale.name}" in r.out
    assert sorted(p.name for p in (outbox / "ingested").iterdir()) == sorted(
        [first.name, next((outbox / "ingested").glob("revision-*")).name]
    )
    assert outbox_cmds.pending(outbox) == []
    assert (outbox / ".tmp-0123-half.json").exists()
    assert w.ok("ingest-outbox", w.vault, outbox, *w.cust()).out == "nothing to ingest\n"
    ines = {"TRACER_KEY": str(w.key("ines"))}
    t = w.run("trace", w.vault, "ans-sdk-1", "--json", env=ines)
    assert t.code == 0, t.err
    doc = t.json()
    assert (doc["integrity"], doc["currency"]) == ("intact", "verified")
    assert doc["citations"][0]["span"] == "Thirty days from delivery."


def test_a_pass_that_died_after_its_commit_is_not_ingested_twice(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    path = _sdk_record(w, outbox, "ans-sdk-1")
    rev = next(outbox.glob("revision-*.json"))
    w.ok("ingest", w.vault, rev, path, *w.cust())  # committed; the move never happened
    size = w.ok("checkpoint", w.vault).out.splitlines()[1]
    r = w.ok("ingest-outbox", w.vault, outbox, *w.cust(), "--json").json()
    assert sorted(r["already_in_vault"]) == sorted([path.name, rev.name]) and r["ingest"] is None
    assert w.ok("checkpoint", w.vault).out.splitlines()[1] == size
    assert not list(outbox.glob("*.json"))


def test_refused_files_stay_or_go_to_rejected(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    good = _sdk_record(w, outbox, "ans-sdk-1")
    (outbox / "answer-broken.json").write_text('{"envelope": {}, "contents": {}}')
    r = w.run("ingest-outbox", w.vault, outbox, *w.cust())
    assert r.code == 1 and "REJECTED" in r.out and "nothing appended" in r.out
    assert good.exists() and (outbox / "answer-broken.json").exists()
    r = w.run("ingest-outbox", w.vault, outbox, *w.cust(), "--skip-invalid")
    assert r.code == 1 and "appended 2 file(s)" in r.out
    assert (outbox / "rejected" / "answer-broken.json").exists()
    assert "$.envelope" in (outbox / "rejected" / "answer-broken.json.reason.txt").read_text()
    assert not good.exists() and (outbox / "ingested" / good.name).exists()


def test_watch_picks_up_files_written_while_it_waits(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "outbox"
    _sdk_record(w, outbox, "ans-sdk-1")
    custodian = load_identity(w.key("custodian"), PASSPHRASE.encode())
    passes: list[outbox_cmds.Pass] = []
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 1:
            _sdk_record(w, outbox, "ans-sdk-2")

    busy = outbox_cmds.watch(
        w.vault,
        outbox,
        custodian,
        interval=5.0,
        rounds=3,
        on_pass=passes.append,
        sleep=sleep,
        clock=lambda: "2026-06-01T00:00:00Z",
    )
    assert busy == 2 and waits == [5.0, 5.0]
    assert [len(p.moved) for p in passes] == [2, 1]
    assert len(list((outbox / "ingested").glob("answer-*.json"))) == 2


def test_watch_waits_for_an_outbox_the_producer_has_not_created_yet(vault_world: World) -> None:
    w = vault_world
    outbox = w.root / "not-yet"
    custodian = load_identity(w.key("custodian"), PASSPHRASE.encode())
    passes: list[outbox_cmds.Pass] = []
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:  # the producer starts only after two polls
            _sdk_record(w, outbox, "ans-sdk-1")

    busy = outbox_cmds.watch(
        w.vault, outbox, custodian, interval=1.0, rounds=4, on_pass=passes.append, sleep=sleep
    )
    assert busy == 1 and [len(p.moved) for p in passes] == [2]
    assert w.capsys.readouterr().err.count("waiting for") == 1
    # the command line: a watcher starts on a missing outbox, a single pass refuses it plainly
    r = w.run("ingest-outbox", w.vault, w.root / "nowhere", *w.cust())
    assert (
        r.code == 2
        and r.err
        == f"tracer: error: {w.root / 'nowhere'}: the outbox does not exist (with --watch it is waited for)\n"
    )
    r = w.run(
        "ingest-outbox",
        w.vault,
        w.root / "nowhere",
        *w.cust(),
        "--watch",
        "--rounds",
        "1",
        "--interval",
        "0.01",
    )
    assert r.code == 0 and "waiting for" in r.err and not (w.root / "nowhere").exists()


def test_path_errors_name_the_file_without_a_json_path(world: World, tmp_path: Path) -> None:
    r = world.run("chunk", tmp_path / "nonexistent.md")
    assert r.code == 2 and "$" not in r.err
    assert r.err.startswith(f"tracer: error: {tmp_path / 'nonexistent.md'}: cannot read file (")


CRASH = """
import os, sys
from pathlib import Path
from tracer.producer import outbox
def die(fd):
    os._exit(9)
os.fsync = die
outbox.write_atomically(Path(sys.argv[1]) / "answer-x.json", b'{"envelope": ' + b"x" * 100000)
"""


def test_a_crash_mid_write_leaves_no_file_for_ingest(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    p = subprocess.run([sys.executable, "-c", CRASH, str(box)], cwd=Path(__file__).parents[2], check=False)
    assert p.returncode == 9
    assert not (box / "answer-x.json").exists()
    assert [f.name.startswith(".tmp-") for f in box.iterdir()] == [True]
    assert outbox_cmds.pending(box) == []
    assert os.listdir(box)


def test_an_unregistered_producer_key_s_refusal_names_tracer_keys_add(vault_world: World) -> None:
    from store.crypto import Identity

    w = vault_world
    outbox = w.root / "outbox"
    rec_ = Recorder(
        Signer(Identity.from_seed("stranger", b"not-in-the-keyring")),
        outbox,
        Producer("northstar-support-assistant", "2.0.0"),
        Runtime("model-x", "support-v3", "rag-3"),
        clock=Ticks(),
    )
    with rec_.start("Q?", Authorization("u:1", "acl-7", "allow"), "support", answer_id="ans-stranger") as rec:
        rec.answer("A.")
    r = w.run("ingest-outbox", w.vault, outbox, *w.cust(), "--skip-invalid")
    assert r.code == 1 and "REJECTED" in r.out and "no signature by a known key" in r.out, r
    assert "hint:" in r.out and "tracer keys add VAULT PRODUCER.pub --role producer" in r.out
    (reason,) = (outbox / "rejected").glob("*.reason.txt")
    assert "tracer keys add" in reason.read_text()
