"""Kill -9 an ingest at random points and check what survives.

    .venv/bin/python bench/crash_loop.py --iterations 200 --seed 7

Each iteration builds a fresh vault (custodian, one producer key, one investigator),
writes `--batches` batches of signed input files (one source revision and
`--manifests` manifests each), then starts a child process that ingests them batch by
batch through `store.ingest.ingest` and prints ``ACK <batch> <checkpoint size>`` after
each batch has committed.  The parent waits for the child's ``READY`` line, sleeps a
random delay, sends SIGKILL, reopens the vault and asserts:

* every acknowledged batch is present (its revision and all of its answers), with a
  checkpoint at exactly the size the child acknowledged;
* no half-appended batch: the batch in flight is present entirely or not at all, and
  `tracer.engine.verify.verify(vault)` (no session: structure, signatures, views,
  presence) reports nothing but producer faults;
* the log matches its last checkpoint: the newest checkpoint is signed by the
  custodian, its size is the log size and its root the recomputed Merkle root;
* the vault still takes the rest of the input afterwards.

Prints one JSON line; exits 1 if any iteration failed (the failing vault directories
are kept when `--keep` is given).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from store import admin  # noqa: E402
from store.crypto import Identity  # noqa: E402
from store.producer import draft_to_input  # noqa: E402

NOW = "2026-06-01T00:00:00Z"
T0 = "2026-01-01T00:00:00Z"
ORIGIN = "tracer.bench/crash-loop"


def custodian() -> Identity:
    return Identity.from_seed("custodian", b"crash-loop/custodian")


def producer() -> Identity:
    return Identity.from_seed("producer", b"crash-loop/producer")


def investigator() -> Identity:
    return Identity.from_seed("ines", b"crash-loop/ines")


# -- inputs -----------------------------------------------------------------------------------


def _revision(batch: int) -> dict[str, Any]:
    paragraphs = [f"Paragraph {k} of document {batch}: clause {batch * 31 + k} applies." for k in range(6)]
    return {
        "schema": "tracer.source_revision/v1",
        "document_id": f"doc-{batch:04d}",
        "revision": "r1",
        "source_system": "crash-wiki",
        "source_revision": f"src-{batch}",
        "path": f"docs/doc-{batch:04d}.md",
        "title": f"Document {batch}",
        "uri": f"docstore://doc-{batch:04d}",
        "backend": "docstore",
        "collection": "support",
        "committed_at": "2026-01-05T00:00:00Z",
        "content": "# Document\n\n" + "\n\n".join(paragraphs) + "\n",
    }


def _draft(batch: int, m: int, rev: dict[str, Any]) -> dict[str, Any]:
    content = rev["content"]
    passages = []
    for k in range(3):
        text = f"Paragraph {k} of document {batch}: clause {batch * 31 + k} applies."
        start = content.index(text)
        passages.append(
            {
                "passage_id": f"p{k}",
                "collection": "support",
                "source": {"system": "crash-wiki", "path": rev["path"], "revision": rev["source_revision"]},
                "document": {
                    "document_id": rev["document_id"],
                    "uri": rev["uri"],
                    "revision": rev["revision"],
                    "backend": "docstore",
                },
                "chunk": {
                    "chunk_id": f"{rev['document_id']}#{k}",
                    "pipeline_version": "c1",
                    "parameters": {},
                },
                "locator": {
                    "heading_path": ["Document"],
                    "paragraph": k,
                    "char_start": start,
                    "char_end": start + len(text),
                },
                "retrieved_text": text,
                "normalizer_version": "n1",
                "retrieved_at": "2026-02-01T10:00:00Z",
                "rank": k + 1,
                "score": 0.9 - k / 10,
                "query": f"question {batch}/{m}",
            }
        )
    answer = f"Answer {batch}/{m}: clause {batch * 31} applies."
    return {
        "run_id": f"run-{batch}-{m}",
        "answer_id": answer_id(batch, m),
        "generated_at": "2026-02-01T10:00:01Z",
        "producer": {"system": "crash-assistant", "version": "1.0.0"},
        "runtime": {
            "model": "m",
            "prompt_template_version": "t1",
            "pipeline_version": "rag-1",
            "parameters": {"temperature": 0},
        },
        "authorization": {"principal": "agent:bench", "policy_version": "acl-1", "decision": "allow"},
        "collection": "support",
        "question": f"What applies in document {batch} ({m})?",
        "answer": answer,
        "passages": passages,
        "citations": [{"answer_start": 0, "answer_end": len(answer), "passage_ids": ["p0", "p1"]}],
    }


def answer_id(batch: int, m: int) -> str:
    return f"ans-{batch:04d}-{m}"


def write_inputs(inputs: Path, batches: int, manifests: int) -> list[list[Path]]:
    prod = producer()
    out: list[list[Path]] = []
    for b in range(batches):
        d = inputs / f"batch-{b:04d}"
        d.mkdir(parents=True)
        rev = _revision(b)
        files = [d / "00-revision.json"]
        files[0].write_text(json.dumps(rev), encoding="utf-8")
        for m in range(manifests):
            f = d / f"{m + 1:02d}-manifest.json"
            f.write_text(json.dumps(draft_to_input(_draft(b, m, rev), prod)), encoding="utf-8")
            files.append(f)
        out.append(files)
    return out


def new_vault(path: Path) -> None:
    from store.vault import Vault

    with Vault.create(path, custodian(), T0, origin=ORIGIN) as vault:
        admin.add_producer_key(vault, custodian(), producer().public, T0)
        admin.grant_investigator(vault, custodian(), investigator().public, ["*"], T0)


# -- the child: ingest batch by batch, acknowledging each commit --------------------------------


def child(vault_path: Path, inputs: Path) -> int:
    from store.ingest import ingest
    from store.vault import Vault

    vault = Vault.open(vault_path)
    ident = custodian()
    batches = sorted(p for p in inputs.iterdir() if p.is_dir())
    print("READY", flush=True)
    for i, d in enumerate(batches):
        report = ingest(vault, sorted(d.glob("*.json")), ident, NOW)
        if not report.ok or not report.appended:
            print(f"FAIL {i} {json.dumps(report.to_json())}", flush=True)
            return 1
        print(f"ACK {i} {report.checkpoint_size}", flush=True)
    vault.close()
    print("DONE", flush=True)
    return 0


# -- the parent ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    iteration: int
    delay: float
    acked: int
    in_flight_present: bool | None
    finished: bool
    failures: list[str] = field(default_factory=list)


def _read_lines(stream: Any, lines: list[str]) -> None:
    for line in stream:
        lines.append(line.rstrip("\n"))


@dataclass(frozen=True)
class Killed:
    """What a child said before it was killed (or finished), and how it ended."""

    lines: list[str]
    stderr: str
    returncode: int
    delay: float


def kill_at_random(script: Path, args: list[str], rng: random.Random, max_delay: float) -> Killed:
    """Run `script --child ARGS`, wait until it prints READY, then SIGKILL it after a random
    delay in [0, max_delay): the one way both crash loops pick the moment of the crash."""
    proc = subprocess.Popen(
        [sys.executable, str(script), "--child", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    while "READY" not in lines and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    delay = rng.uniform(0, max_delay)
    time.sleep(delay)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reader.join(timeout=10)
    stderr = proc.stderr.read() if proc.stderr else ""
    return Killed(lines, stderr, proc.returncode, delay)


def check(
    vault_path: Path, files: list[list[Path]], manifests: int, acks: list[tuple[int, int]]
) -> tuple[list[str], bool | None]:
    """Reopen after the kill and check the invariants; returns (failures, in-flight present)."""
    from store.errors import StoreError
    from store.ingest import ingest
    from store.note import verify_checkpoint
    from store.vault import Vault
    from tracer.engine.verify import verify

    failures: list[str] = []
    try:
        vault = Vault.open(vault_path)
    except StoreError as exc:
        return [f"reopen failed: {exc.diagnostics()}"], None
    try:
        cust = custodian()
        size = vault.size()
        latest = vault.latest_checkpoint()
        cp = verify_checkpoint(latest.note, cust.name, cust.public.ed25519, origin=ORIGIN)
        if cp.size != size or latest.size != size:
            failures.append(f"latest checkpoint size {cp.size} (row {latest.size}) != log size {size}")
        if cp.root != vault.root():
            failures.append("latest checkpoint root != recomputed Merkle root")
        sizes = {row.size for row in vault.checkpoints()}
        present = {str(r[0]) for r in vault.query("SELECT answer_id FROM v_answers")}
        docs = {str(r[0]) for r in vault.query("SELECT document_id FROM v_revisions")}
        for batch, ack_size in acks:
            if ack_size not in sizes:
                failures.append(f"acknowledged checkpoint size {ack_size} (batch {batch}) has no checkpoint")
            if ack_size > size:
                failures.append(f"acknowledged size {ack_size} (batch {batch}) > log size {size}")
            missing = [answer_id(batch, m) for m in range(manifests) if answer_id(batch, m) not in present]
            if missing or f"doc-{batch:04d}" not in docs:
                failures.append(f"acknowledged batch {batch} incomplete: missing {missing}")
        in_flight = len(acks)
        flight_present: bool | None = None
        if in_flight < len(files):
            ids = [answer_id(in_flight, m) for m in range(manifests)]
            have = [a in present for a in ids] + [f"doc-{in_flight:04d}" in docs]
            if any(have) and not all(have):
                failures.append(f"batch {in_flight} half-appended: {have}")
            flight_present = all(have)
        later = [a for a in present if int(a.split("-")[1]) > in_flight]
        if later:
            failures.append(f"answers from batches never started: {sorted(later)[:5]}")
        report = verify(vault)
        bad = [f.to_json() for f in report.findings if f.kind != "producer_fault"]
        if bad:
            failures.append(f"verify findings: {json.dumps(bad)[:2000]}")
        # the vault still takes the rest of the input
        rest = in_flight + (1 if flight_present else 0)
        for batch in range(rest, min(rest + 2, len(files))):
            r = ingest(vault, files[batch], cust, NOW)
            if not r.ok:
                failures.append(f"re-ingest of batch {batch} after recovery failed: {r.to_json()}")
                break
    finally:
        vault.close()
    return failures, flight_present


def iteration(
    i: int, rng: random.Random, work: Path, batches: int, manifests: int, max_delay: float
) -> tuple[Outcome, Path]:
    base = work / f"it-{i:04d}"
    vault_path, inputs = base / "vault", base / "inputs"
    new_vault(vault_path)
    files = write_inputs(inputs, batches, manifests)
    run = kill_at_random(Path(__file__).resolve(), [str(vault_path), str(inputs)], rng, max_delay)
    lines, stderr, delay = run.lines, run.stderr, run.delay
    acks = [(int(p[1]), int(p[2])) for p in (line.split() for line in lines) if p and p[0] == "ACK"]
    outcome = Outcome(i, round(delay, 4), len(acks), None, "DONE" in lines)
    if "READY" not in lines:
        outcome.failures.append(f"child never became ready: {stderr[-2000:]}")
    if any(line.startswith("FAIL") for line in lines):
        outcome.failures.append(f"child ingest failed: {lines[-1][:2000]}")
    if run.returncode not in (0, -signal.SIGKILL):
        outcome.failures.append(f"child exited {run.returncode}: {stderr[-2000:]}")
    if [b for b, _s in acks] != list(range(len(acks))):
        outcome.failures.append(f"acks out of order: {acks}")
    failures, flight = check(vault_path, files, manifests, acks)
    outcome.failures.extend(failures)
    outcome.in_flight_present = flight
    return outcome, base


def run(
    iterations: int = 20,
    seed: int | None = None,
    batches: int = 40,
    manifests: int = 4,
    max_delay: float = 1.0,
    keep: Path | None = None,
) -> dict[str, Any]:
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="tracer-crash-"))
    outcomes: list[Outcome] = []
    started = time.monotonic()
    try:
        for i in range(iterations):
            outcome, base = iteration(i, rng, work, batches, manifests, max_delay)
            outcomes.append(outcome)
            if outcome.failures and keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copytree(base, keep / base.name, dirs_exist_ok=True)
            shutil.rmtree(base, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed = [o for o in outcomes if o.failures]
    return {
        "bench": "crash_loop",
        "iterations": iterations,
        "seed": seed,
        "batches": batches,
        "manifests_per_batch": manifests,
        "max_delay_s": max_delay,
        "killed_before_first_ack": sum(1 for o in outcomes if o.acked == 0 and not o.finished),
        "killed_mid_ingest": sum(1 for o in outcomes if o.acked > 0 and not o.finished),
        "finished_before_kill": sum(1 for o in outcomes if o.finished),
        "in_flight_batch_committed": sum(1 for o in outcomes if o.in_flight_present),
        "acked_batches": [o.acked for o in outcomes],
        "elapsed_s": round(time.monotonic() - started, 2),
        "ok": not failed,
        "failures": [{"iteration": o.iteration, "delay": o.delay, "failures": o.failures} for o in failed],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--batches", type=int, default=40, help="batches per child run")
    parser.add_argument("--manifests", type=int, default=4, help="manifests per batch")
    parser.add_argument("--max-delay", type=float, default=1.0, help="kill within this many seconds")
    parser.add_argument("--keep", type=Path, help="copy failing iterations' vaults here")
    parser.add_argument("--child", nargs=2, metavar=("VAULT", "INPUTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(Path(args.child[0]), Path(args.child[1]))
    result = run(args.iterations, args.seed, args.batches, args.manifests, args.max_delay, args.keep)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
