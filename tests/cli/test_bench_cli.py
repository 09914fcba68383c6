"""bench/cli.py keeps working: a tiny vault, one run, one JSON line with its ratios.

No wall-clock threshold: the ratios are read in manual runs (docs/benchmarks.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_bench_cli_prints_its_ratios(tmp_path: Path) -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "cli.py"), "--passages", "200", "--runs", "1"]
    cmd += ["--repeat", "1", "--samples", "3", "--out", str(tmp_path / "200")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stdout
    r = json.loads(lines[0])
    for key in ("help_ratio", "trace_help_ratio", "trace_ratio"):
        assert isinstance(r[key], float) and r[key] > 0, (key, r)
    assert r["first_trace_of_session_ms"] > 0 and r["floor_duckdb_open_process_s"] > 0
