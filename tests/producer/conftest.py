"""Producer SDK fixtures: a vault (tests.helpers), a recorder signing with its producer key."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from store.ingest import IngestReport, ingest
from tests.helpers import Case
from tracer.engine.trace import AnswerTrace, Tracer
from tracer.producer import Producer, Recorder, Runtime, Signer, SourceRevision

RETURNS = (
    "# Returns policy\n\n## Refund window\n\n"
    "Customers may request a refund within thirty days of delivery.\n\n"
    "## Exceptions\n\nGift cards are never refunded.\n"
)
SHIPPING = (
    "# Shipping\n\n## Lost parcels\n\n"
    "A parcel not delivered within ten days is treated as lost and refunded in full.\n\n"
    "## Carriers\n\nWe ship with two carriers.\nBoth track every parcel.\n"
)
INGEST_AT = "2026-06-01T00:00:00Z"


def source_revision(
    document_id: str, content: str, rev: str = "A", collection: str = "support"
) -> SourceRevision:
    return SourceRevision(
        document_id=document_id,
        revision=rev,
        content=content,
        source_system="northstar-wiki",
        source_revision=f"src-{rev}",
        path=f"policies/{document_id}.md",
        uri=f"docstore://{document_id}",
        backend="docstore",
        collection=collection,
        committed_at="2026-01-05T00:00:00Z",
        title=document_id.title(),
    )


class Ticks:
    """A clock that advances one second per reading: fixed, and never equal twice."""

    def __init__(self, start: datetime = datetime(2026, 2, 1, 10, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def recorder(case: Case, tmp_path: Path) -> Iterator[Recorder]:
    yield Recorder(
        Signer(case.producer),
        tmp_path / "outbox",
        Producer("northstar-support-assistant", "2.0.0"),
        Runtime("model-x", "support-v3", "rag-3", {"temperature": 0.0}),
        clock=Ticks(),
    )


def ingest_files(case: Case, *files: Path) -> IngestReport:
    return ingest(case.vault, list(files), case.custodian, INGEST_AT)


def trace_of(case: Case, answer_id: str) -> AnswerTrace:
    s = case.session("ines")
    return Tracer(s).trace(answer_id)


# The CLI fixtures (a keys directory, a vault with the producer key and ines granted '*').
from tests.cli.conftest import cli_template, vault_world, world  # noqa: E402

__all__ = ["cli_template", "vault_world", "world"]
