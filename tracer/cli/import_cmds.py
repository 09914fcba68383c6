"""`tracer import VAULT FILES… --format otlp-json`: bring in traces an observability tool exported.

An imported trace is signed by the custodian who imports it, never presented as a
producer manifest; every field says whether it is importer-computed, absent, redacted or
truncated (docs/import.md).  All files are read before anything is appended: one bad
line refuses the whole call, naming the file, the line and the JSON path.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from store.attest import IMPORTED_MARK, REDACTION_MARKERS
from store.errors import InputError
from tracer.cli.common import Sub, add_custodian, emit_json, open_vault, vault_arg
from tracer.clock import now_iso
from tracer.importers.formats import ExportFormat
from tracer.importers.mapping import ReadOptions
from tracer.secrets import load_key

if TYPE_CHECKING:
    from store.imported import ImportedItem
    from tracer.importers.run import Conflict, ImportPlan


def _one(value: object) -> str:
    """One line, inert (`tracer.cli.render_imported.one_line`, loaded when output is made)."""
    from tracer.cli.render_imported import one_line

    return one_line(value)


__all__ = ["register"]


def register(sub: Sub) -> None:
    p = sub.add_parser(
        "import", help="import OTLP trace exports (OpenInference, GenAI) as custodian-signed imported traces"
    )
    vault_arg(p)
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="export files")
    p.add_argument(
        "--format",
        required=True,
        choices=[str(f) for f in ExportFormat],
        help="otlp-json: OTLP JSON Lines (the file exporter); "
        "otlp-proto: one binary ExportTraceServiceRequest; "
        "phoenix-parquet: an Arize Phoenix spans dataframe saved as Parquet",
    )
    p.add_argument("--collection", required=True, help="collection the imported texts are stored under")
    add_custodian(p)
    p.add_argument(
        "--document-key",
        default="document_id",
        help="metadata key of a retrieved document that holds its document id (default document_id)",
    )
    p.add_argument(
        "--revision-key",
        default="revision",
        help="metadata key that holds the imported revision id (default revision)",
    )
    p.add_argument(
        "--value-length-limit",
        type=int,
        help="the exporter's attribute value length limit: texts this long are marked truncated",
    )
    p.add_argument(
        "--redaction-marker",
        action="append",
        default=[],
        help="a further text that marks redacted content (repeatable)",
    )
    p.add_argument("--dry-run", action="store_true", help="print what would be imported; append nothing")
    p.add_argument("--json", action="store_true", help="print the plan as JSON (docs/json.md)")
    p.set_defaults(handler=cmd_import)


def _print(plan: ImportPlan, dry_run: bool) -> None:
    verb = "would import" if dry_run else "imported"
    for note in plan.notes:
        print(f"note: {_one(note)}")
    for i, it in enumerate(plan.items):
        _print_item(verb, it, f" at log entry {plan.seqs[i]}" if plan.seqs else "")
    for s in plan.skipped:
        print(f"skipped trace {s.trace_id} (root span {s.root_span_id}) in {_one(s.file)}: {_one(s.reason)}")
    _print_conflicts(plan.conflicts)
    _print_outcome(plan, dry_run)


def _print_outcome(plan: ImportPlan, dry_run: bool) -> None:
    """How many were already there, and what the call appended (or would, or refuses)."""
    if plan.already:
        print(
            f"{plan.already} answer(s) already in the vault with the same content: skipped "
            f"({'would import' if dry_run else 'imported'} {len(plan.items)} new)"
        )
    if plan.conflicts:
        print(f"dry run: {len(plan.conflicts)} conflict(s): the real run would refuse the whole call")
    elif not plan.items:
        print("nothing to import")
    elif dry_run:
        print(f"dry run: nothing appended ({len(plan.items)} answer(s) would be)")


def _print_item(verb: str, it: ImportedItem, seq: str) -> None:
    """One imported answer and the attestation of each of its fields."""
    st = it.statement
    print(
        f"{verb} {st['answer_id']}{seq} from {_one(it.file)} (trace {st['trace_id']}, "
        f"{len(st['span_ids'])} span(s), {len(st['passages'])} passage(s))"
    )
    print(f"  {IMPORTED_MARK}; export sha256 {st['export']['sha256']}")
    for path, f in st["fields"].items():
        detail = f" — {_one(f['detail'])}" if f.get("detail") else ""
        print(f"  {f['state']:<17} {_one(path)}{detail}")


def _print_conflicts(conflicts: list[Conflict]) -> None:
    for c in conflicts:
        print(
            f"CONFLICT {c.answer_id} (trace {c.trace_id}, root span {c.root_span_id}) in "
            f"{_one(c.file)}: {_one(c.reason)}"
        )


def cmd_import(args: argparse.Namespace) -> int:
    if args.value_length_limit is not None and args.value_length_limit < 1:
        raise InputError("--value-length-limit", "$", "must be a positive number of characters")
    from tracer.importers.build import DocumentMapping
    from tracer.importers.run import ImportConflictError, import_files

    custodian = load_key(args.custodian_key, args.passphrase_file)
    opts = ReadOptions(args.value_length_limit, (*REDACTION_MARKERS, *args.redaction_marker))
    mapping = DocumentMapping(args.document_key, args.revision_key)
    with open_vault(args.vault) as vault:
        try:
            plan = import_files(
                vault,
                custodian,
                list(args.files),
                ExportFormat(args.format),
                args.collection,
                now_iso(),
                mapping,
                opts,
                dry_run=args.dry_run,
            )
        except InputError as exc:
            conflicts = exc.conflicts if isinstance(exc, ImportConflictError) else []
            if args.json:
                error = {"file": exc.file, "path": exc.path, "message": exc.message}
                emit_json({"ok": False, "error": error, "conflicts": [asdict(c) for c in conflicts]})
            elif conflicts:
                _print_conflicts(conflicts)
                print(f"nothing imported: {len(conflicts)} conflict(s) (all-or-nothing)")
            else:
                print(f"REJECTED {_one(exc.file)}: {_one(exc.path)}: {_one(exc.message)}")
                print("nothing imported (all-or-nothing: fix or drop the file)")
            return 1
    if args.json:
        emit_json({"ok": not plan.conflicts, "dry_run": args.dry_run, **plan.to_json()})
    else:
        _print(plan, args.dry_run)
    return 1 if plan.conflicts else 0
