"""Shared plumbing for the benchmark scripts: identities, vault cache, runs, JSON out.

Every script measures one thing and prints ONE JSON line.  Each timed run happens in a
fresh child process (``--child``), which measures the target and its floor in the same
process and reports its own peak RSS, so runs do not share caches or heap growth.  The
parent reports medians over the runs and the maximum peak RSS.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from store.crypto import Identity  # noqa: E402
from store.schema import FORMAT  # noqa: E402

#: a cached vault is rebuilt when the generator or the vault format changes
GEN_VERSION = f"tracer-bench-gen/1+{FORMAT}"
DEFAULT_ROOT = Path(os.environ.get("TRACER_BENCH_DIR", "/tmp/tracer-bench"))  # noqa: S108


def custodian() -> Identity:
    return Identity.from_seed("custodian", b"tracer-bench/custodian")


def producer(system: str) -> Identity:
    return Identity.from_seed(system, f"tracer-bench/producer/{system}".encode())


def investigator(name: str) -> Identity:
    return Identity.from_seed(name, f"tracer-bench/investigator/{name}".encode())


def vault_dir(passages: int, out: Path | None = None) -> Path:
    return out if out is not None else DEFAULT_ROOT / str(passages)


def ensure_vault(passages: int, out: Path | None = None) -> Path:
    """The cached vault for `passages`, built by bench/gen.py in a child process if absent."""
    base = vault_dir(passages, out)
    meta = base / "meta.json"
    if meta.is_file() and json.loads(meta.read_text()).get("gen_version") == GEN_VERSION:
        from store.errors import VaultInUseError
        from store.vault import Vault

        # a view table added since the cache was built is derived on a writable open; a
        # bench in another process may hold the file for a moment doing the same
        for _ in range(120):
            try:
                Vault.open(base / "vault").close()
                break
            except VaultInUseError:
                time.sleep(0.5)
        return base / "vault"
    cmd = [sys.executable, str(ROOT / "bench" / "gen.py"), "--passages", str(passages), "--out", str(base)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return base / "vault"


def gen_meta(passages: int, out: Path | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((vault_dir(passages, out) / "meta.json").read_text())
    return meta


def peak_rss_mib() -> float:
    """Peak resident set of this process so far (ru_maxrss is KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def tmp_home() -> Path:
    return Path(tempfile.mkdtemp(prefix="tracer-bench-home-"))


class Timer:
    """Accumulates the time of several timed sections under one name."""

    def __init__(self) -> None:
        self.total = 0.0
        self._t = 0.0

    def __enter__(self) -> Timer:
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.total += time.perf_counter() - self._t


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, sort_keys=False) + "\n")
    sys.stdout.flush()


def run_children(
    script: str, argv: list[str], runs: int, timeout: float | None = None
) -> list[dict[str, Any]]:
    """Run `script --child argv` `runs` times; each child prints one JSON line."""
    out: list[dict[str, Any]] = []
    for i in range(runs):
        print(f"[{Path(script).stem}] run {i + 1}/{runs}", file=sys.stderr, flush=True)
        proc = subprocess.run(
            [sys.executable, script, "--child", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"{script}: child run {i + 1} failed with exit code {proc.returncode}")
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        out.append(json.loads(lines[-1]))
    return out


def _median(values: list[Any]) -> Any:
    nums = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(nums) != len(values):
        return values[0]
    m = statistics.median(nums)
    return round(m, 6) if isinstance(m, float) else m


def summarize(results: list[dict[str, Any]], rss_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    """Medians of every numeric field (recursively), max for peak-RSS and `*_max_ms` fields."""
    first = results[0]
    out: dict[str, Any] = {}
    for key, value in first.items():
        values = [r.get(key) for r in results]
        if isinstance(value, dict):
            out[key] = summarize([v if isinstance(v, dict) else {} for v in values], rss_keys)
        elif key in rss_keys or key.startswith("peak_rss") or key.endswith("_max_ms"):
            out[key] = max(v for v in values if isinstance(v, int | float))
        else:
            out[key] = _median(values)
    return out


def code_version() -> dict[str, Any]:
    """Which code was measured: HEAD and whether store/ or tracer/ had uncommitted edits."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "store", "tracer"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None}
    return {"commit": head, "uncommitted_store_tracer_files": len(dirty.splitlines())}


def main_runner(
    script: str,
    child: Callable[[Any], dict[str, Any]],
    args: Any,
    child_argv: list[str],
    extra: dict[str, Any] | None = None,
) -> None:
    """Parent/child dispatch shared by the scripts."""
    if args.child:
        emit(child(args))
        return
    load_before = os.getloadavg()[0]
    results = run_children(script, child_argv, args.runs)
    summary = summarize(results)
    head: dict[str, Any] = {
        "bench": Path(script).stem,
        "passages": args.passages,
        "runs": args.runs,
        "stat": "median",
        **code_version(),
    }
    # other processes on the machine distort timings: say how busy it was
    head["loadavg_1m_before_after"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    head.update(extra or {})
    head.update(summary)
    emit(head)
