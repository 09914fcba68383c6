"""`write_revision`: written once, and a reused revision id with other text is refused."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.producer.conftest import RETURNS, source_revision
from tracer.producer import Outbox, Recorder, RecordError
from tracer.producer.outbox import INGESTED, REJECTED


def _files(outbox: Path) -> list[str]:
    return sorted(str(p.relative_to(outbox)) for p in outbox.rglob("*.json"))


def test_a_revision_is_written_once_across_pipeline_starts(recorder: Recorder) -> None:
    rev = source_revision("returns", RETURNS)
    first = recorder.write_revision(rev)
    mtime = os.stat(first).st_mtime_ns
    assert recorder.write_revision(rev) == first and os.stat(first).st_mtime_ns == mtime
    # `tracer ingest-outbox` moved it aside; the next pipeline start must not write it again
    box = recorder.outbox.directory
    (box / INGESTED).mkdir()
    shutil.move(first, box / INGESTED / first.name)
    again = Recorder(recorder.signer, Outbox(box), recorder.producer, recorder.runtime)
    assert again.write_revision(rev) == box / INGESTED / first.name
    assert _files(box) == [f"{INGESTED}/{first.name}"]


@pytest.mark.parametrize("where", ["", INGESTED])
def test_a_reused_revision_id_with_other_content_says_bump_the_revision(
    recorder: Recorder, where: str
) -> None:
    rev = source_revision("returns", RETURNS)
    path = recorder.write_revision(rev)
    box = recorder.outbox.directory
    if where:
        (box / where).mkdir()
        shutil.move(path, box / where / path.name)
    before = _files(box)
    edited = replace(rev, content=RETURNS.replace("thirty", "fourteen"))
    with pytest.raises(
        RecordError, match=r"'A' of 'returns' was already written with other content.*bump the revision"
    ):
        recorder.write_revision(edited)
    with pytest.raises(RecordError, match="other title; bump the revision"):
        recorder.write_revision(replace(rev, title="Refunds"))
    assert _files(box) == before
    recorder.write_revision(replace(edited, revision="B"))  # the fix the message names
    assert len(_files(box)) == 2


def test_a_revision_the_vault_refused_is_not_silently_written_again(recorder: Recorder) -> None:
    rev = source_revision("returns", RETURNS)
    path = recorder.write_revision(rev)
    box = recorder.outbox.directory
    (box / REJECTED).mkdir()
    shutil.move(path, box / REJECTED / path.name)
    with pytest.raises(RecordError, match="the vault refused it"):
        recorder.write_revision(rev)
    assert _files(box) == [f"{REJECTED}/{path.name}"]
