"""Kill -9 every write path at random points and check that nothing acknowledged is lost.

    .venv/bin/python bench/crash_writes.py --iterations 100 --seed 7

`bench/crash_loop.py` kills ingest alone.  Here a child process runs, round after round,
every other kind of write a vault takes and prints ``ACK <op> <round> <log size>`` after
each has committed:

* `ingest` — a batch of one source revision and `--manifests` manifests;
* `recover` — that batch's checkpoint row deleted (as an attacker would), then the
  custodian's recovery (quarantine file, cut back, re-ingest: `store.recovery`);
* `purge` — the retrieved text of the round's first answer (tombstone + blob delete);
* `unlock` — an investigator's first open of the round (its signed access entry);
* `hold` and `release` — a legal hold on the round's second answer, then its release;
* `import` — an OTLP export of two traces (`bench/import.py`'s synthetic spans);
* `outbox` — a producer's outbox of one revision and `--manifests` manifests, drained
  as `tracer ingest-outbox` does (ingest, then move each file to `ingested/`).

The parent sleeps a random delay, sends SIGKILL, and then, as the custodian would,
finishes an interrupted recovery (re-runs it on an uncovered tail, restores every
quarantine file), drains the outbox once more, and asserts:

* the vault opens and its newest valid checkpoint covers every entry;
* every acknowledged write is there: its answers, its tombstone, its access entry, its
  hold or release, each at or below the log size, each acknowledged size a checkpoint;
* every acknowledged import's answers are there, and the outbox holds no finished file
  that is not in the vault;
* `verify` (no session) reports nothing but producer faults;
* the vault takes another write.

Prints one JSON line; exits 1 if any iteration failed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.crash_loop import (  # noqa: E402
    ORIGIN,
    T0,
    answer_id,
    custodian,
    investigator,
    kill_at_random,
    producer,
    write_inputs,
)
from store import admin  # noqa: E402

NOW = "2026-06-01T00:00:00Z"
OPS = ("ingest", "recover", "purge", "unlock", "hold", "release", "import", "outbox")
TRACES_PER_IMPORT = 2


def new_vault(path: Path) -> None:
    from store.vault import Vault

    with Vault.create(path, custodian(), T0, origin=ORIGIN) as vault:
        admin.add_producer_key(vault, custodian(), producer().public, T0)
        admin.grant_investigator(vault, custodian(), investigator().public, ["*"], T0, rights=["hold"])


def _retrieved_digest(vault: Any, aid: str) -> str:
    rows = vault.query(
        "SELECT d.digest FROM v_digests d JOIN v_answers a ON a.seq = d.seq "
        "WHERE a.answer_id = ? AND d.role = 'retrieved' ORDER BY d.digest LIMIT 1",
        [aid],
    )
    return str(rows[0][0])


def _write_export(path: Path, rnd: int) -> None:
    """Round `rnd`'s OTLP export: traces no other round has."""
    trace_record = importlib.import_module("bench.import").trace_record  # a keyword as module name
    lines = [json.dumps(trace_record(rnd * TRACES_PER_IMPORT + j)) for j in range(TRACES_PER_IMPORT)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _import(vault: Any, export: Path) -> list[str]:
    from tracer.importers.build import DocumentMapping
    from tracer.importers.mapping import ReadOptions
    from tracer.importers.run import ExportFormat, import_files

    plan = import_files(
        vault, custodian(), [export], ExportFormat.OTLP_JSON, "support", NOW, DocumentMapping(), ReadOptions()
    )
    return sorted(str(it.answer_id) for it in plan.items)


def _fill_outbox(outbox: Path, files: list[Path]) -> None:
    """What a producer leaves: each file written under a temporary name, then renamed."""
    outbox.mkdir(exist_ok=True)
    for f in files:
        name = ("revision-" if "revision" in f.name else "answer-") + f.name
        tmp = outbox / f".tmp-{name}"
        shutil.copyfile(f, tmp)
        os.replace(tmp, outbox / name)


def _drop_newest_checkpoint(vault: Any) -> None:
    vault.con.execute("DELETE FROM checkpoints WHERE id = (SELECT max(id) FROM checkpoints)")
    vault.forget_tree()


def child(vault_path: Path, inputs: Path, home: Path) -> int:
    os.environ["TRACER_HOME"] = str(home)
    from store.ingest import ingest
    from store.recovery import quarantine_tail
    from store.vault import Vault
    from tracer.cli.outbox_cmds import drain
    from tracer.engine.case import CaseDesk
    from tracer.engine.session import unlock as unlock_vault
    from tracer.engine.session import valid_prefix_checkpoint
    from tracer.engine.trust import TrustStore

    cust = custodian()
    every = sorted(p for p in inputs.iterdir() if p.is_dir() and p.name.startswith("batch-"))
    batches, outbox_batches = every[: len(every) // 2], every[len(every) // 2 :]
    outbox = vault_path.parent / "outbox"
    print("READY", flush=True)
    vault = Vault.open(vault_path)

    def ack(op: str, i: int, extra: str = "") -> None:
        print(f"ACK {op} {i} {vault.size()} {extra}".rstrip(), flush=True)

    for i, d in enumerate(batches):
        report = ingest(vault, sorted(d.glob("*.json")), cust, NOW)
        if not report.ok:
            print(f"FAIL ingest {i} {json.dumps(report.to_json())}", flush=True)
            return 1
        ack("ingest", i)
        _drop_newest_checkpoint(vault)
        kept = valid_prefix_checkpoint(vault, vault.leaf_hashes())
        quarantine_tail(vault, cust, int(kept or 0), NOW)
        ack("recover", i)
        digest = _retrieved_digest(vault, answer_id(i, 0))
        admin.purge(vault, cust, digest, "retention", "expired", "dpo", NOW)
        ack("purge", i, digest)
        vault.close()
        s = unlock_vault(vault_path, investigator(), trust=TrustStore(home))
        vault = s.vault
        ack("unlock", i)
        desk = CaseDesk(s)
        hold = desk.hold("answer", answer_id(i, 1), f"round {i}")
        ack("hold", i, str(hold))
        desk = CaseDesk(s)
        rel = desk.release(hold, f"round {i} done")
        ack("release", i, str(rel))
        s.close()
        vault = Vault.open(vault_path)
        export = inputs / f"export-{i:04d}.jsonl"
        _write_export(export, i)
        ack("import", i, ",".join(_import(vault, export)))
        vault.close()
        _fill_outbox(outbox, sorted(outbox_batches[i].glob("*.json")))
        drained = drain(vault_path, outbox, cust, NOW)
        if drained.report is not None and not drained.report.ok:
            print(f"FAIL outbox {i} {json.dumps(drained.report.to_json())}", flush=True)
            return 1
        vault = Vault.open(vault_path)
        ack("outbox", i)
    vault.close()
    print("DONE", flush=True)
    return 0


@dataclass
class Outcome:
    iteration: int
    delay: float
    acked: list[str]
    finished: bool
    failures: list[str] = field(default_factory=list)


def _finish_recovery(vault: Any) -> None:
    """What the custodian does after a crash: an uncovered tail is recovered, a quarantine
    restored; the tail is the crash's own honest one, so a guarded tail is re-covered."""
    from store import merkle
    from store.recovery import Quarantined, quarantine_tail, read_quarantine, restore
    from tracer.engine.session import head_checkpoint, valid_prefix_checkpoint

    leaves = vault.leaf_hashes()
    cp, code, _why = head_checkpoint(vault, vault.roster(), len(leaves), merkle.root(leaves))
    if cp is None and code == "entry_not_checkpointed":
        kept = valid_prefix_checkpoint(vault, leaves)
        try:
            quarantine_tail(vault, custodian(), int(kept or 0), NOW)
        except Exception as exc:
            if "must stay final" not in str(exc):
                raise
            vault.tree.cover_checked_tail(custodian(), len(leaves), merkle.root(leaves))
    for file in sorted((Path(vault.path) / "quarantine").glob("*.jsonl")):
        restore(vault, custodian(), Quarantined(file, -1, read_quarantine(file)), NOW)


def _finish_outbox(vault_path: Path) -> list[str]:
    """Drain the outbox again, as the custodian's next `ingest-outbox` would: a file the
    killed pass ingested but did not move is recognised and moved, the rest ingested."""
    from tracer.cli.outbox_cmds import drain, pending

    outbox = vault_path.parent / "outbox"
    if not outbox.is_dir():
        return []
    before = os.environ.get("TRACER_HOME")
    os.environ["TRACER_HOME"] = str(vault_path.parent / "home")  # the child's machine, not ours
    try:
        drained = drain(vault_path, outbox, custodian(), NOW)
    finally:
        if before is None:
            os.environ.pop("TRACER_HOME", None)
        else:
            os.environ["TRACER_HOME"] = before
    if drained.report is not None and not drained.report.ok:
        return [f"outbox drain after the kill: {json.dumps(drained.report.to_json())[:1500]}"]
    left = [p.name for p in pending(outbox)]
    return [f"outbox still holds {left} after a second drain"] if left else []


def check(vault_path: Path, manifests: int, acks: list[list[str]], rounds: int = 0) -> list[str]:
    from store import merkle
    from store.errors import StoreError
    from store.vault import Vault
    from tracer.engine.session import head_checkpoint
    from tracer.engine.verify import verify

    failures: list[str] = []
    try:
        vault = Vault.open(vault_path)
        try:
            _finish_recovery(vault)
        finally:
            vault.close()
        failures += _finish_outbox(vault_path)
    except StoreError as exc:
        failures.append(f"recovery before the outbox drain failed: {exc.diagnostics()}")
    try:
        vault = Vault.open(vault_path)
    except StoreError as exc:
        return [f"reopen failed: {exc.diagnostics()}"]
    try:
        try:
            _finish_recovery(vault)
        except StoreError as exc:
            failures.append(f"recovery failed: {exc.diagnostics()}")
        leaves = vault.leaf_hashes()
        size = len(leaves)
        cp, code, why = head_checkpoint(vault, vault.roster(), size, merkle.root(leaves))
        if cp is None:
            failures.append(f"head: {code}: {why}")
        present = {str(r[0]) for r in vault.query("SELECT answer_id FROM v_answers")}
        tombs = {str(r[0]) for r in vault.query("SELECT digest FROM v_tombstones")}
        holds = {int(r[0]) for r in vault.query("SELECT seq FROM v_holds")}
        access = int(vault.query("SELECT count(*) FROM v_access")[0][0])
        unlocks = 0
        for a in acks:
            op, rnd = a[1], int(a[2])
            if op == "ingest":
                missing = [answer_id(rnd, m) for m in range(manifests) if answer_id(rnd, m) not in present]
                if missing:
                    failures.append(f"acknowledged ingest {rnd} lost answers {missing}")
            elif op == "purge" and a[4] not in tombs:
                failures.append(f"acknowledged purge {rnd} lost its tombstone")
            elif op in ("hold", "release") and int(a[4]) not in holds:
                failures.append(f"acknowledged {op} {rnd} (entry {a[4]}) lost")
            elif op == "unlock":
                unlocks += 1
            elif op == "import":
                lost = [aid for aid in a[4].split(",") if aid not in present]
                if lost:
                    failures.append(f"acknowledged import {rnd} lost answers {lost}")
            elif op == "outbox":
                lost = [answer_id(rounds + rnd, m) for m in range(manifests)]
                lost = [aid for aid in lost if aid not in present]
                if lost:
                    failures.append(f"acknowledged outbox drain {rnd} lost answers {lost}")
        if access < unlocks:
            failures.append(f"{unlocks} acknowledged unlocks, {access} access entries")
        bad = [f.to_json() for f in verify(vault).findings if f.kind != "producer_fault"]
        if bad:
            failures.append(f"verify findings: {json.dumps(bad)[:2000]}")
        admin.record_access(vault, investigator(), "view", "after-crash", NOW)
    except StoreError as exc:
        failures.append(f"after the kill: {exc.diagnostics()}")
    finally:
        vault.close()
    return failures


def iteration(
    i: int, rng: random.Random, work: Path, rounds: int, manifests: int, max_delay: float
) -> Outcome:
    base = work / f"it-{i:04d}"
    vault_path, inputs, home = base / "vault", base / "inputs", base / "home"
    new_vault(vault_path)
    write_inputs(inputs, 2 * rounds, manifests)  # the second half goes through the outbox
    run = kill_at_random(Path(__file__).resolve(), [str(vault_path), str(inputs), str(home)], rng, max_delay)
    lines = run.lines
    acks = [line.split() for line in lines if line.startswith("ACK ")]
    outcome = Outcome(i, round(run.delay, 4), [a[1] for a in acks], "DONE" in lines)
    if any(line.startswith("FAIL") for line in lines) or run.returncode not in (0, -signal.SIGKILL):
        outcome.failures.append(
            f"child failed ({run.returncode}): {(lines[-1:] or [''])[0][:500]} {run.stderr[-1500:]}"
        )
    outcome.failures.extend(check(vault_path, manifests, acks, rounds))
    shutil.rmtree(base, ignore_errors=True)
    return outcome


def run(iterations: int, seed: int | None, rounds: int, manifests: int, max_delay: float) -> dict[str, Any]:
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="tracer-crash-writes-"))
    started = time.monotonic()
    outcomes: list[Outcome] = []
    try:
        for i in range(iterations):
            outcomes.append(iteration(i, rng, work, rounds, manifests, max_delay))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # the op each kill interrupted: the one after the last acknowledged
    killed_in: dict[str, int] = dict.fromkeys(OPS, 0)
    for o in outcomes:
        if not o.finished:
            nxt = OPS[(OPS.index(o.acked[-1]) + 1) % len(OPS)] if o.acked else "ingest"
            killed_in[nxt] += 1
    failed = [o for o in outcomes if o.failures]
    return {
        "bench": "crash_writes",
        "iterations": iterations,
        "seed": seed,
        "rounds": rounds,
        "manifests_per_batch": manifests,
        "max_delay_s": max_delay,
        "killed_during": killed_in,
        "finished_before_kill": sum(1 for o in outcomes if o.finished),
        "acknowledged_writes": sum(len(o.acked) for o in outcomes),
        "elapsed_s": round(time.monotonic() - started, 2),
        "ok": not failed,
        "failures": [{"iteration": o.iteration, "delay": o.delay, "failures": o.failures} for o in failed],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--rounds", type=int, default=6, help="rounds of every write per child run")
    parser.add_argument("--manifests", type=int, default=3, help="manifests per ingest batch")
    parser.add_argument("--max-delay", type=float, default=4.0, help="kill within this many seconds")
    parser.add_argument("--child", nargs=3, metavar=("VAULT", "INPUTS", "HOME"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(Path(args.child[0]), Path(args.child[1]), Path(args.child[2]))
    result = run(args.iterations, args.seed, args.rounds, args.manifests, args.max_delay)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
