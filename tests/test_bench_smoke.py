"""The benchmark scripts keep working: each runs at a tiny size and prints one JSON line.

No wall-clock thresholds here: speed is judged by the ratios the scripts print, in
manual runs at 10k-1M passages (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: whole processes, real terminals or kill loops: `-m 'not slow'` skips them
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
PASSAGES = "200"


def _run(script: str, *args: str, timeout: float = 60) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), "--passages", PASSAGES, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stdout
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


@pytest.fixture(scope="module")
def vault_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / PASSAGES
    meta = _run("gen.py", "--out", str(out))
    assert meta["passages"] == int(PASSAGES)
    assert meta["tombstones"] and meta["log_entries"]
    assert _run("gen.py", "--out", str(out))["cached"] is True
    return out


def test_verify(vault_cache: Path) -> None:
    r = _run("verify.py", "--runs", "1", "--out", str(vault_cache))
    assert r["verify_ok"] is True
    assert isinstance(r["ratio"], float) and r["peak_rss_mib"]


def test_ingest() -> None:
    r = _run("ingest.py", "--runs", "1")
    assert r["manifests"] == int(PASSAGES) // 10
    assert r["manifests_per_s"] and r["ratio"]


def test_trace(vault_cache: Path) -> None:
    r = _run("trace.py", "--runs", "1", "--samples", "3", "--out", str(vault_cache))
    assert r["revalidate_answers"] == int(PASSAGES) // 10
    assert r["trace_samples"] == 3


def test_open(vault_cache: Path) -> None:
    r = _run("open.py", "--runs", "1", "--out", str(vault_cache))
    assert "skipped" in r or (r["open_s"] and r["bare_textual_s"] and "keys_p95_ms" in r)


def test_incremental() -> None:
    r = _run("incremental.py", "--runs", "1", timeout=120)
    assert r["mode"] == "incremental" and r["same_findings"] is True
    assert isinstance(r["ratio"], float) and r["added_manifests"]


def test_sql_views(vault_cache: Path) -> None:
    r = _run("sql_views.py", "--runs", "1", "--out", str(vault_cache))
    assert r["identical"] is True and r["escape_rule_differs"] is True
