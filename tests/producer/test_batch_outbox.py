"""Batch mode: one sync per batch, and a killed writer leaves whole files or none."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import Case
from tests.producer.conftest import RETURNS, ingest_files, source_revision, trace_of
from tests.producer.test_recorder import AUTH, QUESTION
from tracer.cli import outbox_cmds
from tracer.producer import Outbox, Recorder, RecordError, chunks


def _record(recorder: Recorder, answer_id: str) -> None:
    rev = source_revision("returns", RETURNS)
    c0 = chunks(RETURNS)[0]
    with recorder.start(QUESTION, AUTH, "support", answer_id=answer_id) as rec:
        p = rec.retrieved(c0.text, rev, rank=1, score=0.8, query=QUESTION)
        rec.sent(f"ctx: {c0.text}")
        rec.answer("Thirty days.")
        rec.cite(0, 12, p)


def _batched(recorder: Recorder, batch: int, seconds: float = 3600.0) -> Recorder:
    box = Outbox(recorder.outbox.directory, batch=batch, batch_seconds=seconds)
    return Recorder(recorder.signer, box, recorder.producer, recorder.runtime, clock=recorder.clock)


def test_answers_appear_when_their_batch_is_flushed(case: Case, recorder: Recorder) -> None:
    batched = _batched(recorder, 3)
    box = batched.outbox.directory
    _record(batched, "ans-b1")
    _record(batched, "ans-b2")
    assert outbox_cmds.pending(box) == []  # not visible, not durable yet
    with pytest.raises(RecordError, match="already in the outbox"):
        batched.start(QUESTION, AUTH, "support", answer_id="ans-b2")  # an id waiting in the batch is taken
    _record(batched, "ans-b3")  # the third fills the batch: one sync, three names
    assert len(outbox_cmds.pending(box)) == 3
    _record(batched, "ans-b4")
    assert len(batched.flush()) == 1 and batched.flush() == []
    rev = batched.write_revision(source_revision("returns", RETURNS))
    report = ingest_files(case, rev, *sorted(box.glob("answer-*.json")))
    assert report.ok and not report.faults, report.to_json()
    assert trace_of(case, "ans-b4").currency == "verified"


def test_a_batch_older_than_batch_seconds_is_flushed_by_the_next_write(recorder: Recorder) -> None:
    batched = _batched(recorder, 100, seconds=0.01)
    _record(batched, "ans-t1")
    time.sleep(0.02)
    _record(batched, "ans-t2")
    assert len(outbox_cmds.pending(batched.outbox.directory)) == 2


def test_bad_batch_settings_are_refused(tmp_path: Path) -> None:
    for kw in ({"batch": 0}, {"batch": True}, {"batch_seconds": 0}):
        with pytest.raises(RecordError, match="batch"):
            Outbox(tmp_path / "b", **kw)


WRITER = """
import sys
from pathlib import Path
from tests.producer.test_batch_outbox import writer_main
writer_main(Path(sys.argv[1]))
"""


def writer_main(box: Path) -> None:
    """Record answers in batches of 5 forever (until killed); print each flush's size."""
    from store.crypto import Identity
    from tracer.producer import Producer, Runtime, Signer

    signer = Signer(Identity.from_seed("producer", b"batch-crash"))
    recorder = Recorder(signer, Outbox(box, batch=5), Producer("p", "1"), Runtime("m", "t", "p"))
    n = 0
    while True:
        _record(recorder, f"ans-{n}")
        n += 1
        if n % 5 == 0:
            print(n, flush=True)


@pytest.mark.slow
def test_a_killed_batch_writer_leaves_whole_files_or_none(tmp_path: Path) -> None:
    box = tmp_path / "box"
    for _ in range(3):
        p = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(box)],
            cwd=Path(__file__).parents[2],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert p.stdout is not None
        for _ in range(3):  # let it flush a few batches, then kill it mid-batch
            p.stdout.readline()
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        files = outbox_cmds.pending(box)
        assert len(files) >= 10, len(files)  # the flushed batches are there
        for f in files:  # each one whole: the bytes were durable before the name appeared
            doc = json.loads(f.read_text())
            assert set(doc) == {"envelope", "contents"}
        assert all(n.startswith((".tmp-", "answer-")) for n in os.listdir(box))
        for f in files:  # the next run starts over with new ids
            f.unlink()
