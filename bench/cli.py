"""The CLI's own cost: `tracer --help`, and one `tracer trace`, each ÷ a floor of the same run.

    .venv/bin/python bench/cli.py --passages 10000 --runs 3 [--repeat 9]

help: the whole process `tracer --help` (and `tracer trace --help`), against the floor
`python -c pass` from the same interpreter and environment: what Python's own start
costs, the editable install's path hook included.  Goal: ≤ 0.15 s, and the ratio says
what tracer adds.

trace: the whole process `tracer trace VAULT ANSWER --key K` on a copy of the cached
vault (a trace records its access, and the cache must stay unchanged), as investigator
`ines` (every scope), against the floor of the work no trace can skip: a process that
imports DuckDB and opens the vault file, plus one in-process `Tracer(session).trace`
(median of the same answers in a warm session).  The key's passphrase derivation and
the unlock (signed access entry, checkpoint) are the CLI's own work on top: each is
reported beside the ratio, not hidden in the floor.  Goal: within 2x.  The same ratio
over CPU seconds (the child's user + system time; the in-process trace's process time)
is printed beside it: on a loaded machine wall time is mostly waiting for a core.

Each measured process runs with bytecode caching on (into a temporary
PYTHONPYCACHEPREFIX, warmed once): an installed tracer has its .pyc files.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

PASSPHRASE = "bench-cli"  # noqa: S105 - a throwaway key made for this run
TRACER = Path(sys.executable).parent / "tracer"


def _env(home: Path, pycache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(TRACER_HOME=str(home), PYTHONPYCACHEPREFIX=str(pycache), TRACER_PASSPHRASE=PASSPHRASE)
    # the checkout this script is in, not whichever one the venv's editable install maps
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(common.ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """(wall, CPU of the child: user + system) of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def _seconds(cmd: list[str], env: dict[str, str], repeat: int, cpu: list[float] | None = None) -> float:
    """Median wall time of `repeat` runs of `cmd` (after one warm-up run); their CPU
    times are appended to `cpu` when given."""
    times = []
    for i in range(repeat + 1):
        elapsed, used, proc = _timed(cmd, env)
        if proc.returncode != 0:
            raise SystemExit(f"{cmd}: exit {proc.returncode}: {proc.stderr.decode()[-2000:]}")
        if i:
            times.append(elapsed)
            if cpu is not None:
                cpu.append(used)
    return statistics.median(times)


def _answers(vault: Path, n: int) -> list[str]:
    from store.vault import Vault

    with Vault.open(vault, read_only=True) as v:
        ids = [str(r[0]) for r in v.con.execute("SELECT answer_id FROM v_answers ORDER BY seq").fetchall()]
    step = max(1, len(ids) // n)
    return ids[step // 2 :: step][:n]


def _in_process_trace(vault: Path, ids: list[str], home: Path) -> tuple[float, float, float]:
    """(median Tracer.trace in a warm session, the first trace of that session, the
    median CPU of the warm ones)."""
    from tracer.engine.session import unlock
    from tracer.engine.trace import Tracer
    from tracer.engine.trust import TrustStore

    session = unlock(vault, common.investigator("ines"), read_only=True, trust=TrustStore(home))
    lat, cpu = [], []
    for aid in ids:
        t0, c0 = time.perf_counter(), time.process_time()
        Tracer(session).trace(aid)
        lat.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    session.close()
    return statistics.median(lat[1:] or lat), lat[0], statistics.median(cpu[1:] or cpu)


def _key_load(key: Path) -> float:
    from tracer.secrets import load_key

    t0 = time.perf_counter()
    load_key(key, None)
    return time.perf_counter() - t0


def child(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="tracer-bench-cli-"))
    try:
        return _measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    home, pycache = work / "home", work / "pycache"
    home.mkdir()
    env = _env(home, pycache)
    os.environ["TRACER_PASSPHRASE"] = PASSPHRASE
    py = [sys.executable]
    floor = _seconds([*py, "-c", "pass"], env, args.repeat)
    help_s = _seconds([str(TRACER), "--help"], env, args.repeat)
    trace_help_s = _seconds([str(TRACER), "trace", "--help"], env, args.repeat)
    out: dict[str, Any] = {
        "python_pass_s": round(floor, 4),
        "help_s": round(help_s, 4),
        "help_ratio": round(help_s / floor, 2),
        "trace_help_s": round(trace_help_s, 4),
        "trace_help_ratio": round(trace_help_s / floor, 2),
    }
    cached = common.ensure_vault(args.passages, args.out)
    vault = work / "vault"
    shutil.copytree(cached, vault)
    key, _ = common.investigator("ines").save(work / "keys", PASSPHRASE.encode())
    ids = _answers(vault, args.samples)
    warm, first, warm_cpu = _in_process_trace(vault, ids, work / "home-in-process")
    open_cpu: list[float] = []
    duckdb_open = _seconds(
        [
            *py,
            "-c",
            f"import duckdb; duckdb.connect({str(vault / 'vault.duckdb')!r}, read_only=True).close()",
        ],
        env,
        args.repeat,
        open_cpu,
    )
    cli, cli_cpu = [], []
    for aid in ids[: args.repeat + 1]:
        elapsed, used, proc = _timed([str(TRACER), "trace", str(vault), aid, "--key", str(key)], env)
        cli.append(elapsed)
        cli_cpu.append(used)
        if proc.returncode != 0:
            raise SystemExit(f"tracer trace {aid}: exit {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    cli_s = statistics.median(cli[1:])  # the first run also pins the vault (first use)
    trace_floor = duckdb_open + warm
    # CPU beside wall: under a load of several processes per core, wall is mostly waiting
    cpu_s, floor_cpu = statistics.median(cli_cpu[1:]), statistics.median(open_cpu) + warm_cpu
    out.update(
        {
            "trace_cli_s": round(cli_s, 4),
            "trace_floor_s": round(trace_floor, 4),
            "trace_ratio": round(cli_s / trace_floor, 2),
            "trace_cli_cpu_s": round(cpu_s, 4),
            "trace_floor_cpu_s": round(floor_cpu, 4),
            "trace_cpu_ratio": round(cpu_s / floor_cpu, 2),
            "floor_duckdb_open_process_s": round(duckdb_open, 4),
            "floor_tracer_trace_warm_ms": round(1000 * warm, 2),
            "first_trace_of_session_ms": round(1000 * first, 2),
            "key_passphrase_load_ms": round(1000 * _key_load(key), 2),
            "peak_rss_mib": common.peak_rss_mib(),
        }
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="tracer --help and tracer trace, each ÷ a floor")
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=7, help="processes timed per measurement (median)")
    ap.add_argument("--samples", type=int, default=15, help="answers traced in process")
    ap.add_argument("--out", type=Path, default=None, help="vault cache directory")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    argv = ["--passages", str(args.passages), "--repeat", str(args.repeat), "--samples", str(args.samples)]
    argv += ["--out", str(args.out)] if args.out else []
    if not args.child:
        common.ensure_vault(args.passages, args.out)
    common.main_runner(__file__, child, args, argv)


if __name__ == "__main__":
    main()
