"""A few Markdown documents as an import step would hold them, for the adapter pipelines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.producer.conftest import RETURNS, SHIPPING
from tracer.producer import Authorization, SourceRevision, chunks
from tracer.producer.adapters import Resolution

RUNBOOK = (
    "# Payments runbook\n\n## Restart\n\n"
    "Restart the payments service with `systemctl restart payments`.\n\n"
    "## Exceptions\n\n"
    "Do not restart the payments service in production during settlement (22:00-02:00 UTC).\n"
)
AUTH = Authorization("employee:ines@northstar.example", "acl-7", "allow")


def _revision(document_id: str, content: str) -> SourceRevision:
    return SourceRevision(
        document_id=document_id,
        revision="r1",
        content=content,
        source_system="northstar-wiki",
        source_revision=f"{document_id}@1",
        path=f"wiki/{document_id}.md",
        uri=f"docstore://{document_id}",
        backend="docstore",
        collection="support",
        committed_at="2026-01-05T00:00:00Z",
        title=document_id.title(),
    )


REVISIONS = {
    d: _revision(d, c) for d, c in (("returns", RETURNS), ("shipping", SHIPPING), ("runbook", RUNBOOK))
}


def chunk_rows() -> list[tuple[str, dict[str, Any]]]:
    """Every chunk of every document, as (text, metadata) for a framework's document type."""
    rows = []
    for rev in REVISIONS.values():
        for c in chunks(rev.content):
            rows.append(
                (c.text, {"document_id": rev.document_id, "revision": rev.revision, "chunk": c.chunk_index})
            )
    return rows


def resolve(metadata: Mapping[str, Any]) -> Resolution:
    """The pipeline's own knowledge: which imported revision a chunk's metadata points at."""
    rev = REVISIONS[metadata["document_id"]]
    assert metadata["revision"] == rev.revision
    return Resolution(rev, chunk_id=f"{rev.document_id}#{metadata['chunk']}")
