"""verify-dataset (DuckDB) ÷ `tracer verify --full` on the same vault; Spark per 10k entries.

The export is made once (outside the timed part) by the bench custodian, read-only.  Each
run then times `verify(..., full=True)` on the vault and `verify_dataset` on the export,
each in a fresh process of its own as the two commands run, one right after the other
(alternating which goes first), so the ratio compares them on the same machine at the
same moment.  `--same-process` times both in one process instead, as this bench did
before: there the second side finds the first one's process-wide memos filled.  Goal
(issue 24): ratio <= 0.6 on 2 cores.  `--spark` also times `--engine spark` in local[2]
(skipped with a note when pyspark is not installed).

    python bench/dataset.py                    # 100k passages = ~10k manifests
    python bench/dataset.py --passages 1000000 # ~100k manifests
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common


def _export(path: Path, out: Path, row_group: int) -> None:
    from tracer.engine.dataset_export import export_dataset
    from tracer.engine.session import unlock
    from tracer.engine.trust import TrustStore

    if (out / "manifest.json").is_file():
        return
    shutil.rmtree(out, ignore_errors=True)
    session = unlock(path, common.custodian(), read_only=True, trust=TrustStore(common.tmp_home()))
    try:
        export_dataset(session, out, "plaintext", row_group)
    finally:
        session.close()


def _export_dir(args: argparse.Namespace) -> Path:
    """Where the export is cached: beside, never inside, the cached vaults (which other
    benches share read-only)."""
    base = args.export_dir or Path(tempfile.gettempdir()) / "tracer-dataset-bench"
    return Path(base) / f"{args.passages}-{args.row_group}"


def _reap_fork_server() -> None:
    """Stop the fork server verify-dataset's workers were forked from (it outlives the
    pool, to serve the next one): its workers are its children, not this process's, so
    their CPU seconds reach `RUSAGE_CHILDREN` only once it has exited and been waited
    for.  `_stop` is multiprocessing's own (its tests stop the server so)."""
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)
    if stop is not None:
        stop()


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (the worker pools): on a
    machine shared with other work, a figure the load changes far less than wall time."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


_TIMES = ("verify_full_s", "verify_dataset_s", "verify_full_cpu_s", "verify_dataset_cpu_s")


def _findings_digest(findings: list[Any]) -> str:
    """The findings, in order, as one digest: two children compare what they found."""
    data = json.dumps([f.to_json() for f in findings], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def child(args: argparse.Namespace) -> dict[str, Any]:
    """One side (`--side verify` or `--side dataset`) timed in this fresh process, or both
    (`--side both`, the bench before this change: see `main`)."""
    from tracer.engine.dataset_verify import verify_dataset
    from tracer.engine.session import unlock
    from tracer.engine.trust import TrustStore
    from tracer.engine.verify import verify

    path = common.ensure_vault(args.passages, args.out)
    out = _export_dir(args)
    _export(path, out, args.row_group)
    load0 = os.getloadavg()[0]
    result: dict[str, Any] = {}

    def run_verify() -> None:
        session = unlock(path, common.custodian(), read_only=True, trust=TrustStore(common.tmp_home()))
        c, t = _cpu(), time.perf_counter()
        report = verify(session.vault, session, full=True)
        c, t = _cpu() - c, time.perf_counter() - t
        session.close()
        result.update(verify_full_s=round(t, 3), verify_full_cpu_s=round(c, 3))
        result["verify_findings"] = _findings_digest(report.findings)

    def run_dataset() -> None:
        c, t = _cpu(), time.perf_counter()
        ds = verify_dataset(out)
        t = time.perf_counter() - t
        _reap_fork_server()
        entries = int(ds.counts.get("entries", 0))
        result.update(verify_dataset_s=round(t, 3), verify_dataset_cpu_s=round(_cpu() - c, 3))
        result.update(entries=entries, dataset_findings=_findings_digest(ds.findings))
        result["duckdb_s_per_10k_entries"] = round(t * 10_000 / max(entries, 1), 3)
        if args.spark:
            _spark(out, entries, ds.findings, result)

    sides = {"verify": [run_verify], "dataset": [run_dataset], "both": [run_verify, run_dataset]}[args.side]
    for run in reversed(sides) if args.dataset_first else sides:
        run()
    result["load_1m_start_end"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
    result["peak_rss_mib"] = common.peak_rss_mib()
    return result


def _spark(out: Path, entries: int, found: list[Any], result: dict[str, Any]) -> None:
    from tracer.engine.dataset_verify import verify_dataset

    try:
        from tracer.engine.dataset_spark import spark_manifests
    except ImportError as exc:
        result["spark"] = f"skipped: {exc}"
        return
    t3 = time.perf_counter()
    sp = verify_dataset(out, "spark", spark_manifests("local[2]"))
    t4 = time.perf_counter()
    result["spark_s"] = round(t4 - t3, 3)
    result["spark_s_per_10k_entries"] = round((t4 - t3) * 10_000 / max(entries, 1), 3)
    result["spark_same_findings"] = _findings_digest(sp.findings) == _findings_digest(found)


def _one_run(argv: list[str], dataset_first: bool, same_process: bool) -> dict[str, Any]:
    """One measurement of both sides: each in a fresh process of its own (as `tracer verify
    --full` and `tracer verify-dataset` run), one right after the other, or both in one
    process with `same_process`.  In one process the second side finds the first one's
    process-wide memos filled (the sources' parsed structure, `tracer.engine.textnorm`),
    which made whichever ran second look cheaper."""
    first = ["--dataset-first"] if dataset_first else []
    if same_process:
        merged = common.run_children(__file__, [*argv, "--side", "both", *first], 1)[0]
    else:
        merged = {}
        for side in ("dataset", "verify") if dataset_first else ("verify", "dataset"):
            part = common.run_children(__file__, [*argv, "--side", side], 1)[0]
            load = part.pop("load_1m_start_end")
            merged.setdefault("load_1m_start_end", load)[1] = load[1]
            part["peak_rss_mib"] = max(part["peak_rss_mib"], merged.get("peak_rss_mib", 0.0))
            merged.update(part)
    row_group = int(argv[argv.index("--row-group") + 1])
    entries = int(merged["entries"])
    return {
        "ratio": round(merged["verify_dataset_s"] / merged["verify_full_s"], 3),
        "goal": "verify-dataset (duckdb) / verify --full <= 0.6 (issue 24)",
        "order": "dataset first" if dataset_first else "verify first",
        "processes": "one" if same_process else "one per side",
        "load_1m_start_end": merged["load_1m_start_end"],
        **{k: merged[k] for k in _TIMES},
        "cpu_ratio": round(merged["verify_dataset_cpu_s"] / merged["verify_full_cpu_s"], 3),
        "entries": entries,
        "row_group": row_group,
        "row_groups": -(-entries // row_group),
        "duckdb_s_per_10k_entries": merged["duckdb_s_per_10k_entries"],
        "same_findings": merged["verify_findings"] == merged["dataset_findings"],
        "peak_rss_mib": merged["peak_rss_mib"],
        **{k: v for k, v in merged.items() if k.startswith("spark")},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="verify-dataset ÷ verify --full")
    ap.add_argument("--passages", type=int, default=100_000)
    ap.add_argument("--row-group", type=int, default=1 << 12)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--spark", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="vault cache directory")
    ap.add_argument("--export-dir", type=Path, default=None, help="export cache directory")
    ap.add_argument(
        "--same-process", action="store_true", help="time both sides in one process (the bench's old way)"
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--side", choices=("verify", "dataset", "both"), default="both", help=argparse.SUPPRESS)
    ap.add_argument("--dataset-first", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    argv = ["--passages", str(args.passages), "--row-group", str(args.row_group)]
    argv += (["--out", str(args.out)] if args.out else []) + (["--spark"] if args.spark else [])
    argv += ["--export-dir", str(args.export_dir)] if args.export_dir else []
    if args.child:
        common.emit(child(args))
        return
    common.ensure_vault(args.passages, args.out)
    # runs alternate which of the two goes first, so a load that rises or falls during
    # a run does not favour one of them
    load_before = os.getloadavg()[0]
    results = [_one_run(argv, bool(i % 2), args.same_process) for i in range(args.runs)]
    head: dict[str, Any] = {
        "bench": "dataset",
        "passages": args.passages,
        "runs": args.runs,
        "stat": "median",
    }
    head.update(common.code_version())
    head["loadavg_1m_before_after"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    keys = ("order", "load_1m_start_end", "ratio", "cpu_ratio", *_TIMES)
    head["per_run"] = [{k: r[k] for k in keys} for r in results]
    head.update(common.summarize(results))
    common.emit(head)


if __name__ == "__main__":
    main()
