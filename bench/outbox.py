"""The cost per file of `tracer ingest-outbox`'s "already in the vault?" look-up, at two
vault sizes 10x apart (and 100x with `--sizes 1000,10000,100000`).

    .venv/bin/python bench/outbox.py --sizes 1000,10000 --files 200

For each size a fresh vault gets that many answers (ingested untimed, 1,000 per call),
then `--files` new signed answer files are written (untimed) and timed through:

* `fresh`: `already_in_vault` on the new files (the normal pass: nothing matches);
* `done`: the same call after those files were ingested behind its back (a pass that
  crashed after its commit: every file matches, each match checked against its leaf
  and the signed checkpoint);
* `drain`: a whole `ingest-outbox` pass (`outbox_cmds.drain`) over another `--files`
  new files: look-up, ingest, checkpoint, moves.

Floor, measured in the same run on the same files: reading and parsing each file and
its envelope (`_claim`), the least any look-up must do. The floor, `fresh` and `done`
are each the fastest of 5 runs (the machine is shared); `drain` runs once. Printed: ms per file for each,
the ratio of each to the floor, and the ratio of each size's per-file cost to the
smallest size's (the goal: ≤ 1.2).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.gen import new_vault
from store.ingest import ingest
from store.producer import draft_to_input
from store.vault import Vault
from tracer.cli import outbox_cmds

NOW = "2026-01-10T00:00:00Z"
#: each read-only step is timed this many times, the fastest kept (the floor too)
REPEAT = 5
TEXT = "Customers may request a refund within thirty days of delivery."


def _draft(answer_id: str) -> dict[str, Any]:
    return {
        "run_id": f"run-{answer_id}",
        "answer_id": answer_id,
        "generated_at": "2026-01-05T10:00:00Z",
        "producer": {"system": "support-assistant", "version": "1"},
        "runtime": {"model": "m", "prompt_template_version": "t", "pipeline_version": "p", "parameters": {}},
        "authorization": {"principal": "u", "policy_version": "acl-1", "decision": "allow"},
        "collection": "support",
        "question": f"question {answer_id}?",
        "answer": f"Thirty days ({answer_id}).",
        "passages": [
            {
                "passage_id": "p1",
                "collection": "support",
                "source": {"system": "wiki", "path": "returns.md", "revision": "s1"},
                "document": {
                    "document_id": "returns",
                    "uri": "docstore://returns",
                    "revision": "r1",
                    "backend": "docstore",
                },
                "chunk": {
                    "chunk_id": "returns#0",
                    "pipeline_version": "tracer-para-chunker/1",
                    "parameters": {},
                },
                "locator": {"heading_path": [], "paragraph": 0, "char_start": 0, "char_end": len(TEXT)},
                "retrieved_text": TEXT,
                "normalizer_version": "tracer-norm/1",
                "retrieved_at": "2026-01-05T10:00:00Z",
                "rank": 1,
                "score": 0.9,
                "query": "refund window",
            }
        ],
        "citations": [{"answer_start": 0, "answer_end": 11, "passage_ids": ["p1"]}],
    }


def _write(directory: Path, ids: list[str]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    signer = common.producer("support-assistant")
    paths = []
    for answer_id in ids:
        p = directory / f"answer-{answer_id}.json"
        p.write_text(json.dumps(draft_to_input(_draft(answer_id), signer)), encoding="utf-8")
        paths.append(p)
    return paths


def _fill(vault: Vault, work: Path, size: int) -> None:
    for start in range(0, size, 1000):
        files = _write(work / "fill", [f"ans-{n}" for n in range(start, min(size, start + 1000))])
        report = ingest(vault, files, common.custodian(), NOW)
        if not report.ok:
            raise SystemExit(json.dumps(report.to_json()["rejected"][:2]))
        shutil.rmtree(work / "fill")


def _best(step: Callable[[], object], repeat: int = REPEAT) -> float:
    """The fastest of `repeat` runs of a read-only step: the machine is shared, and the
    minimum is the run the other jobs disturbed least."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return min(times)


def _per_file_ms(seconds: float, files: int) -> float:
    return round(1000 * seconds / files, 4)


def measure(size: int, n_files: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="tracer-bench-outbox-"))
    try:
        vault = new_vault(work / "vault")
        _fill(vault, work, size)
        files = _write(work / "outbox", [f"new-{n}" for n in range(n_files)])
        floor = _best(lambda: [outbox_cmds._claim(f) for f in files])
        assert all(c is not None for c in (outbox_cmds._claim(f) for f in files))
        assert outbox_cmds.already_in_vault(vault, files) == set()
        t_fresh = _best(lambda: outbox_cmds.already_in_vault(vault, files))
        ingest(vault, files, common.custodian(), NOW)
        assert outbox_cmds.already_in_vault(vault, files) == set(files)
        t_done = _best(lambda: outbox_cmds.already_in_vault(vault, files))
        entries = vault.size()
        vault.close()
        box = work / "outbox2"
        _write(box, [f"more-{n}" for n in range(n_files)])
        t = time.perf_counter()
        p = outbox_cmds.drain(work / "vault", box, common.custodian(), NOW)
        t_drain = time.perf_counter() - t
        assert p.ok and len(p.moved) == n_files
        return {
            "log_entries": entries,
            "floor_ms_per_file": _per_file_ms(floor, n_files),
            "fresh_ms_per_file": _per_file_ms(t_fresh, n_files),
            "done_ms_per_file": _per_file_ms(t_done, n_files),
            "drain_ms_per_file": _per_file_ms(t_drain, n_files),
            "fresh_over_floor": round(t_fresh / floor, 3),
            "done_over_floor": round(t_done / floor, 3),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--files", type=int, default=200)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    out: dict[str, Any] = {"bench": "outbox", "files_per_pass": args.files, **common.code_version()}
    results = {}
    for size in sizes:
        print(f"[outbox] vault of {size} answers", file=sys.stderr, flush=True)
        results[size] = measure(size, args.files)
    base = results[sizes[0]]
    for size in sizes:
        r = results[size]
        for key in ("fresh", "done", "drain"):
            r[f"{key}_vs_{sizes[0]}"] = round(r[f"{key}_ms_per_file"] / base[f"{key}_ms_per_file"], 3)
        out[str(size)] = r
    common.emit(out)


if __name__ == "__main__":
    main()
