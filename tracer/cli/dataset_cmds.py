"""CLI for datasets: `tracer export-dataset` writes one, `tracer verify-dataset` re-verifies it.

verify-dataset needs no vault and no key: only the export directory.  Exit codes follow
`tracer verify`: 0 clean, 1 findings, 2 usage errors or an unreadable dataset.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tracer.cli.common import Sub, add_investigator, emit_json, vault_arg
from tracer.inert import inert

#: `tracer.engine.dataset_export.TEXT_MODES`, spelled here so `--help` loads no engine
#: (tests/dataset/test_cli_modes.py keeps the two equal)
TEXT_MODES = ("plaintext", "ciphertext", "digests")


__all__ = ["register"]


def register(sub: Sub) -> None:
    p = sub.add_parser("export-dataset")
    vault_arg(p)
    p.add_argument("out", type=Path, metavar="OUT", help="new or empty directory")
    p.add_argument(
        "--texts",
        choices=TEXT_MODES,
        default="plaintext",
        help="plaintext (only collections your key may read), ciphertext (with the wrapped data keys) "
        "or digests only",
    )
    p.add_argument(
        "--row-group",
        type=int,
        default=None,
        metavar="N",
        help="log entries per Parquet row group, a power of two (default 4096, see docs/scale.md)",
    )
    add_investigator(p)
    p.set_defaults(handler=cmd_export_dataset)

    p = sub.add_parser("verify-dataset")
    p.add_argument("dataset", type=Path, metavar="DIR", help="a directory export-dataset wrote")
    p.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        default="duckdb",
        help="what runs the checks (default duckdb)",
    )
    p.add_argument(
        "--master", default="local[2]", help="with --engine spark: the Spark master (default local[2])"
    )
    p.add_argument("--json", action="store_true", help="the report as JSON (docs/json.md)")
    p.set_defaults(handler=cmd_verify_dataset)


def cmd_export_dataset(args: argparse.Namespace) -> int:
    from tracer.cli.engine_cmds import open_session
    from tracer.engine.dataset_export import DEFAULT_ROW_GROUP, export_dataset

    row_group = DEFAULT_ROW_GROUP if args.row_group is None else args.row_group
    with open_session(args, read_only=True) as session:
        result = export_dataset(session, args.out, args.texts, row_group)
    print(
        f"exported {result.entries} entries, {result.files} files, {result.findings} findings "
        f"to {inert(str(result.path))}"
    )
    return 0


def cmd_verify_dataset(args: argparse.Namespace) -> int:
    from tracer.engine.dataset_verify import verify_dataset

    if args.engine == "spark":
        from tracer.engine.dataset_spark import spark_manifests

        master = None if args.master == "from-submit" else args.master
        report = verify_dataset(args.dataset, "spark", spark_manifests(master))
    else:
        report = verify_dataset(args.dataset)
    if args.json:
        emit_json(report.to_json())
    else:
        for f in report.findings:
            where = f"entry {f.seq}" if f.seq is not None else "dataset"
            print(f"{f.kind:<28} {where:<12} {inert(f.detail)}")
        state = "OK" if report.ok else "FINDINGS"
        entries = report.counts.get("entries", 0)
        print(f"{state}: {entries} entries, {len(report.findings)} findings ({report.engine})")
    return 0 if report.ok else 1
