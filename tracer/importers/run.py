"""One import call: read every file, build every statement, then append all or nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from store import queries
from store.crypto import Identity, sha256_hex
from store.errors import InputError
from store.imported import ImportedItem, append_imported, imported_answer_seqs
from store.ingest import read_input_file
from store.keyring import DataKeys
from store.queries import RevisionRow
from store.vault import Vault
from tracer.importers.attest import Attestation
from tracer.importers.build import DocumentMapping, build_item
from tracer.importers.formats import ExportFormat
from tracer.importers.mapping import ReadOptions, Skipped, answers_of
from tracer.importers.otlp import Span, read_otlp_json_lines, read_otlp_proto

__all__ = ["ExportFormat", "ImportPlan", "import_files", "plan_import"]


_READERS: dict[ExportFormat, Callable[[bytes, str], list[Span]]] = {
    ExportFormat.OTLP_JSON: read_otlp_json_lines,
    ExportFormat.OTLP_PROTO: read_otlp_proto,
}


@dataclass
class ImportPlan:
    """What an import would append: one statement per answer, and what was skipped."""

    items: list[ImportedItem] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "appended": bool(self.seqs),
            "answers": [
                _item_json(it, self.seqs[i] if self.seqs else None) for i, it in enumerate(self.items)
            ],
            "skipped": [asdict(s) for s in self.skipped],
        }


def _item_json(it: ImportedItem, seq: int | None) -> dict[str, Any]:
    st = it.statement
    fields = st["fields"]
    unattested = {path: f for path, f in fields.items() if f["state"] != Attestation.ATTESTED}
    counts: dict[str, int] = {}
    for f in fields.values():
        counts[f["state"]] = counts.get(f["state"], 0) + 1
    return {
        "file": it.file,
        "seq": seq,
        "answer_id": st["answer_id"],
        "trace_id": st["trace_id"],
        "span_ids": st["span_ids"],
        "export_sha256": st["export"]["sha256"],
        "passages": len(st["passages"]),
        "located": sum(1 for p in st["passages"] if p["chain"] is not None),
        "attestation_counts": dict(sorted(counts.items())),
        "unattested": unattested,
    }


def _lookup(vault: Vault, custodian: Identity) -> Callable[[str, str], tuple[RevisionRow, str] | None]:
    keys = DataKeys(vault, custodian)
    cache: dict[str, list[RevisionRow]] = {}

    def find(document_id: str, revision: str) -> tuple[RevisionRow, str] | None:
        if document_id not in cache:
            cache[document_id] = queries.revisions_of(vault, document_id)
        for rev in cache[document_id]:
            if rev.revision != revision:
                continue
            found = keys.decrypt(rev.content_sha256)
            if found is None or sha256_hex(found[1]) != rev.content_sha256:
                return None  # purged, out of reach or altered: never located against it
            return rev, found[1].decode("utf-8")
        return None

    return find


def plan_import(
    vault: Vault,
    custodian: Identity,
    files: list[Path],
    fmt: ExportFormat,
    collection: str,
    now: str,
    mapping: DocumentMapping,
    opts: ReadOptions,
) -> ImportPlan:
    """Read and build everything; raises InputError (file, line, JSON path) on the first bad file."""
    plan = ImportPlan()
    lookup = _lookup(vault, custodian)
    for path in files:
        data = read_input_file(path)
        spans = _READERS[fmt](data, str(path))
        answers, skipped = answers_of(spans, opts)
        plan.skipped += skipped
        plan.items += [build_item(a, data, str(fmt), collection, now, mapping, lookup) for a in answers]
    _refuse_doubles(plan.items)
    return plan


def _refuse_doubles(items: list[ImportedItem]) -> None:
    """One answer twice in one call (the same export given twice, or two exports sharing a
    trace): refused in the dry run as in the real one, naming both places."""
    first: dict[str, ImportedItem] = {}
    for it in items:
        seen = first.setdefault(it.answer_id, it)
        if seen is not it:
            lines = it.statement["export"]["lines"]
            raise InputError(
                f"{it.file}:{lines[0]}" if lines else it.file,
                "$",
                f"answer {it.answer_id} (trace {it.statement['trace_id']}, root span "
                f"{it.statement['root_span_id']}) appears twice in this import: first in {seen.file} "
                f"line {seen.statement['export']['lines'][0]}; give each export once",
            )


def import_files(
    vault: Vault,
    custodian: Identity,
    files: list[Path],
    fmt: ExportFormat,
    collection: str,
    now: str,
    mapping: DocumentMapping,
    opts: ReadOptions,
    dry_run: bool = False,
) -> ImportPlan:
    plan = plan_import(vault, custodian, files, fmt, collection, now, mapping, opts)
    if dry_run:
        # the same refusals as `append_imported`, so a dry run and the real one agree
        taken = imported_answer_seqs(vault, [it.answer_id for it in plan.items])
        for it in plan.items:
            if it.answer_id in taken:
                raise InputError(
                    it.file,
                    "$",
                    f"answer {it.answer_id} already in the vault (log entry {taken[it.answer_id]})",
                )
        return plan
    if plan.items:
        plan.seqs = append_imported(vault, custodian, plan.items)
    return plan
