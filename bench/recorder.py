"""Producer overhead per answer: the SDK's recorder writing to an outbox, one fsync pair
per answer (the default) against batch mode (`Outbox(dir, batch=N)`: one sync per batch).

    .venv/bin/python bench/recorder.py --answers 200,2000 --batch 100

Each answer is what a RAG pipeline records: a question, two retrieved passages located
in a revision, the prompt, the answer and a citation; `close()` signs and writes it.
Floors, in the same run on the same records: `Signer.sign_draft` of each answer's draft
(RFC 8785, SHA-256 of every text, one Ed25519 signature), what any recording must pay;
and the file system's share of batch mode's crash-safe write, the same bytes written to
fresh files the way the outbox does (create a temporary, write, link to the final name,
unlink the temporary; one `os.sync()` and one directory fsync per batch), which any
whole-files-or-none outbox of one file per answer pays on this disk. Printed per size:
ms per answer for both modes, each over the signing floor, batch mode over both floors
together, and each size's per-answer cost over the smaller size's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from tracer.producer import (
    Authorization,
    Outbox,
    Producer,
    Recorder,
    Runtime,
    Signer,
    SourceRevision,
    chunks,
)

DOC = (
    "# Returns\n\n## Refund window\n\nCustomers may request a refund within thirty days of delivery.\n\n"
    "## Exceptions\n\nGift cards are never refunded.\n"
)
REV = SourceRevision(
    document_id="returns",
    revision="r1",
    content=DOC,
    source_system="wiki",
    source_revision="s1",
    path="returns.md",
    uri="docstore://returns",
    backend="docstore",
    collection="support",
    committed_at="2026-01-05T00:00:00Z",
    title="Returns",
)
AUTH = Authorization("u", "acl-1", "allow")


def _one(recorder: Recorder, n: int, *, close: bool = True) -> Any:
    c0, c1 = chunks(DOC)
    rec = recorder.start(f"Refund window {n}?", AUTH, "support", answer_id=f"ans-{n}")
    p1 = rec.retrieved(c0.text, REV, rank=1, score=0.9, query="refund")
    rec.retrieved(c1.text, REV, rank=2, score=0.5, query="refund")
    rec.sent(f"Context:\n[1] {c0.text}\n[2] {c1.text}\nQ: refund window {n}?")
    rec.answer("Within thirty days of delivery.")
    rec.cite_text("thirty days", p1)
    if close:
        return rec.close()
    return rec._draft(recorder.now())


def _run(work: Path, answers: int, batch: int) -> float:
    signer = Signer(common.producer("support-assistant"))
    box = Outbox(work / f"box-{batch}-{answers}", batch=batch, batch_seconds=3600)
    recorder = Recorder(signer, box, Producer("support-assistant", "1"), Runtime("m", "t", "p"))
    t = time.perf_counter()
    for n in range(answers):
        _one(recorder, n)
    recorder.flush()
    return time.perf_counter() - t


def _written(work: Path, answers: int, batch: int) -> list[bytes]:
    return [p.read_bytes() for p in sorted((work / f"box-{batch}-{answers}").glob("answer-*.json"))]


def _fs_floor(work: Path, files: list[bytes], batch: int) -> float:
    """The outbox's batch protocol on its own, over the same bytes (see the docstring)."""
    folder = work / f"fs-floor-{len(files)}"
    folder.mkdir()
    t = time.perf_counter()
    waiting: list[tuple[str, str]] = []
    for n, data in enumerate(files):
        tmp, final = str(folder / f".tmp-{n}"), str(folder / f"answer-{n}.json")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data)
        os.close(fd)
        waiting.append((tmp, final))
        if len(waiting) >= batch or n == len(files) - 1:
            os.sync()
            for tmp, final in waiting:
                os.link(tmp, final)
                os.unlink(tmp)
            fd = os.open(folder, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
            waiting = []
    return time.perf_counter() - t


def _floor(work: Path, answers: int) -> float:
    signer = Signer(common.producer("support-assistant"))
    recorder = Recorder(signer, work / "floor", Producer("support-assistant", "1"), Runtime("m", "t", "p"))
    drafts = [_one(recorder, n, close=False) for n in range(answers)]
    t = time.perf_counter()
    for d in drafts:
        signer.sign_draft(d)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", default="200,2000")
    ap.add_argument("--batch", type=int, default=100)
    args = ap.parse_args()
    sizes = [int(s) for s in args.answers.split(",")]
    out: dict[str, Any] = {"bench": "recorder", "batch": args.batch, **common.code_version()}
    work = Path(tempfile.mkdtemp(prefix="tracer-bench-recorder-"))
    try:
        per: dict[int, dict[str, float]] = {}
        for size in sizes:
            floor = _floor(work, size)
            single = _run(work, size, 1)
            batched = _run(work, size, args.batch)
            fs = _fs_floor(work, _written(work, size, args.batch), args.batch)
            per[size] = {
                "floor_ms_per_answer": round(1000 * floor / size, 4),
                "fs_floor_ms_per_answer": round(1000 * fs / size, 4),
                "fsync_each_ms_per_answer": round(1000 * single / size, 4),
                "batch_ms_per_answer": round(1000 * batched / size, 4),
                "batch_minus_fs_floor_ms_per_answer": round(1000 * (batched - fs) / size, 4),
                "fsync_each_over_floor": round(single / floor, 3),
                "batch_over_floor": round(batched / floor, 3),
                "batch_over_both_floors": round(batched / (floor + fs), 3),
            }
        for size in sizes:
            for key in ("fsync_each", "batch"):
                base = per[sizes[0]][f"{key}_ms_per_answer"]
                per[size][f"{key}_vs_{sizes[0]}"] = round(per[size][f"{key}_ms_per_answer"] / base, 3)
            out[str(size)] = per[size]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    common.emit(out)


if __name__ == "__main__":
    main()
