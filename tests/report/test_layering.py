"""The report layer reads the vault only through store functions and Vault methods: no SQL."""

from __future__ import annotations

import re
from pathlib import Path

import tracer.report

SQL = re.compile(r"\.query\(|\.con\b|\.execute\(|import duckdb|\bSELECT\b", re.I)


def test_report_layer_runs_no_sql() -> None:
    root = Path(tracer.report.__file__).parent
    files = [*root.glob("*.py"), root.parent / "cli" / "export_cmds.py"]
    offenders = [
        f"{p.name}:{n}"
        for p in files
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if SQL.search(line)
    ]
    assert offenders == []
