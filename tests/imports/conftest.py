"""Import fixtures: a vault holding the source revisions the pipelines retrieve from, and
real OpenInference exports made once per session (tests/imports/exports.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Case, case_copy, revision
from tests.producer.pipelines import REVISIONS
from tracer.engine.trace import AnswerTrace, Tracer
from tracer.importers.build import DocumentMapping
from tracer.importers.mapping import ReadOptions
from tracer.importers.run import ExportFormat, ImportPlan, import_files

NOW = "2026-06-02T00:00:00Z"
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def lc_export() -> bytes:
    pytest.importorskip("openinference.instrumentation.langchain")
    from tests.imports.exports import langchain_export

    return langchain_export()


@pytest.fixture(scope="session")
def li_export() -> bytes:
    pytest.importorskip("openinference.instrumentation.llama_index")
    from tests.imports.exports import llamaindex_export

    return llamaindex_export()


def with_sources(case: Case) -> Case:
    """The pipelines' documents, ingested as the source revisions they were chunked from."""
    report = case.ingest(
        *[revision(r.document_id, r.revision, r.content, r.committed_at) for r in REVISIONS.values()]
    )
    assert report.ok, report
    return case


@pytest.fixture
def sourced(tmp_path: Path) -> Iterator[Case]:
    """`with_sources` of a new case: ingested once per process, copied per test."""
    c = case_copy("imports-sourced", with_sources, tmp_path)
    yield c
    c.close()


def write(case: Case, name: str, data: bytes) -> Path:
    path = case.path.parent / "exports" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def run_import(
    case: Case, *files: Path, dry_run: bool = False, fmt: ExportFormat = ExportFormat.OTLP_JSON, **opts: Any
) -> ImportPlan:
    return import_files(
        case.vault,
        case.custodian,
        list(files),
        fmt,
        "support",
        NOW,
        DocumentMapping(),
        ReadOptions(**opts),
        dry_run=dry_run,
    )


def trace(case: Case, answer_id: str) -> AnswerTrace:
    s = case.session("ines")  # the session's vault is the case's from now on
    return Tracer(s).trace(answer_id, record=False)


def lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(x) for x in data.splitlines() if x.strip()]


def dump(docs: list[dict[str, Any]]) -> bytes:
    return ("\n".join(json.dumps(d, ensure_ascii=False) for d in docs) + "\n").encode()


def spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def attr(span: dict[str, Any], key: str) -> dict[str, Any] | None:
    for a in span.get("attributes", []):
        if a["key"] == key:
            return a  # type: ignore[no-any-return]
    return None


# The CLI fixtures (keys, a vault through the real CLI).
from tests.cli.conftest import cli_template, vault_world, world  # noqa: E402

__all__ = ["cli_template", "vault_world", "world"]
