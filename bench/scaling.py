"""Per-item cost of every batch path at two vault sizes 10x apart, and the ratio.

    .venv/bin/python bench/scaling.py                       # 10k and 100k passages
    .venv/bin/python bench/scaling.py --small 1000          # 1k and 10k (a minute)
    .venv/bin/python bench/scaling.py --small 100000        # 100k and 1M (build the 1M vault first)
    .venv/bin/python bench/scaling.py --with-benches        # also bench/outbox.py and bench/import.py
    .venv/bin/python bench/scaling.py --only holds,export   # just these paths (and what they need)

For each size, a child process copies the cached vault of `bench/gen.py`
(`TRACER_BENCH_DIR`, as every bench does) into a temporary directory and times, on that
copy, in this order:

* `require`: a fresh read-only open, then `vault.views.trusted()` (the signed group
  digests checked against the `view_groups` cache) and `require` of each large derived
  table (`v_answers`, `v_passages`, `v_digests`, `v_citations`): item = log entry;
* `verify_full`: `verify(full=True)` in a read-only custodian session (leaves the
  receipt incremental verification starts from): item = log entry;
* `ingest`: `store.ingest.ingest` of 2 % new manifests (`Corpus.manifest` past the
  corpus's end, so ids are new and documents exist): item = manifest. The time spent
  in the view commitment's `before_append` / `after_append` (the per-batch re-hash) is
  reported inside it;
* `verify_incremental`: `verify()` from the receipt after that ingest: item = added entry;
* `revalidate`: `tracer.engine.catalog.revalidate` of every answer: item = answer;
* `hold`: `CaseDesk.hold` on 1 % of the answers, one command each: item = hold;
* `holds`: `CaseDesk.holds()` listing them: item = hold listed;
* `purge`: `store.admin.purge` of 5 retrieved texts no hold covers, one command each:
  item = purge;
* `export`: `export_pack` of 1 % of the answers (json and md): item = answer exported.

The batch is proportional to the vault for every path but `purge` (a command purges
one digest), so a flat per-item cost (ratio ≤ 1.3) means no fixed per-call cost grows
faster than the vault either. `--with-benches` runs the outbox and import benches,
which measure their own two sizes, and copies their ratios in.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

BIG_TABLES = ("v_answers", "v_passages", "v_digests", "v_citations")
PATHS = (
    "require", "verify_full", "ingest", "verify_incremental", "revalidate",
    "hold", "holds", "purge", "export",
)  # fmt: skip
LIMIT = 1.3
NOW = "2026-07-10T00:00:00Z"


class _Timed:
    """Wraps a method of a class to accumulate its wall time (the view re-hash)."""

    def __init__(self, cls: Any, name: str) -> None:
        self.cls, self.name, self.orig = cls, name, getattr(cls, name)
        self.total, self.calls = 0.0, 0
        orig = self.orig

        def wrapper(inner_self: Any, *a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return orig(inner_self, *a, **k)
            finally:
                self.total += time.perf_counter() - t0
                self.calls += 1

        setattr(cls, name, wrapper)

    def restore(self) -> None:
        setattr(self.cls, self.name, self.orig)


def _cpu() -> float:
    """CPU seconds of this process and its reaped children (verify's workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class _Clock:
    """Wall and CPU time since it was made: on a shared machine the CPU time is the steadier
    measure, so the ratio is taken over it; the wall time is printed beside it."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), _cpu()

    def per(self, items: int) -> dict[str, Any]:
        wall, cpu = time.perf_counter() - self.wall, _cpu() - self.cpu
        n = max(items, 1)
        return {
            "wall_s": round(wall, 4),
            "cpu_s": round(cpu, 4),
            "items": items,
            "cpu_us_per_item": round(cpu / n * 1e6, 1),
            "wall_us_per_item": round(wall / n * 1e6, 1),
        }


def child(args: argparse.Namespace) -> dict[str, Any]:
    from bench.corpus import Corpus
    from store.vault import Vault
    from tracer.engine.catalog import revalidate
    from tracer.engine.session import unlock
    from tracer.engine.trust import TrustStore
    from tracer.engine.verify import verify

    src = common.ensure_vault(args.passages)
    root = Path(tempfile.mkdtemp(prefix="tracer-scaling-"))
    out: dict[str, Any] = {}
    only = set(args.only.split(",")) if args.only else set(PATHS)

    def wanted(*names: str) -> bool:
        return bool(only & set(names))

    try:
        path = root / "vault"
        shutil.copytree(src, path)
        home = root / "home"
        cust = common.custodian()

        # -- the derived-table check a reader pays before its first decision -------------
        t0 = time.perf_counter()
        vault = Vault.open(path, read_only=True)
        t1 = time.perf_counter()
        entries = vault.size()
        if wanted("require"):
            c = _Clock()
            vault.views.trusted()
            t2 = time.perf_counter()
            per_table: dict[str, float] = {}
            for table in BIG_TABLES:
                ta = time.perf_counter()
                vault.views.require(table)
                per_table[table] = round(time.perf_counter() - ta, 4)
            out["require"] = {
                **c.per(entries),
                "open_s": round(t1 - t0, 4),
                "trusted_s": round(t2 - t1, 4),
                "tables_s": per_table,
            }
        vault.close()

        # -- full verify, leaving the receipt ---------------------------------------------
        if wanted("verify_full", "verify_incremental"):
            s = unlock(path, cust, read_only=True, trust=TrustStore(home))
            c = _Clock()
            full = verify(s.vault, s, full=True)
            out["verify_full"] = {**c.per(entries), "ok": full.ok}
            s.close()

        corpus = Corpus(args.passages)
        if wanted("ingest", "verify_incremental"):
            _ingest_and_incremental(out, root, path, home, corpus)
        if wanted("revalidate"):
            s = unlock(path, cust, read_only=True, trust=TrustStore(home))
            c = _Clock()
            rv = revalidate(s)
            out["revalidate"] = c.per(len(rv.answers))
            s.close()
        if wanted("hold", "holds", "purge", "export"):
            _case_paths(out, root, path, home, corpus, wanted)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"passages": args.passages, "paths": out, "peak_rss_mib": common.peak_rss_mib()}


def _ingest_and_incremental(out: dict[str, Any], root: Path, path: Path, home: Path, corpus: Any) -> None:
    """ingest 2 % new manifests, then verify incrementally what was added."""
    from store.ingest import ingest
    from store.vault import Vault
    from store.viewguard import ViewGuard
    from tracer.engine.session import unlock
    from tracer.engine.trust import TrustStore
    from tracer.engine.verify import verify

    cust = common.custodian()
    k = max(10, corpus.n_manifests // 50)
    files = []
    (root / "in").mkdir()
    for n in range(k):
        obj = corpus.manifest(corpus.n_manifests + n, [])
        p = root / "in" / f"m-{n:05d}.json"
        p.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
        files.append(p)
    before = _Timed(ViewGuard, "before_append")
    after = _Timed(ViewGuard, "after_append")
    try:
        with Vault.open(path) as v:
            c = _Clock()
            rep = ingest(v, files, cust, NOW)
            ing = c.per(k)
    finally:
        before.restore()
        after.restore()
    if not rep.ok:
        raise SystemExit(f"ingest refused: {rep.to_json()['rejected'][:2]}")
    out["ingest"] = {
        **ing,
        "views_before_append_s": round(before.total, 4),
        "views_after_append_s": round(after.total, 4),
    }
    s = unlock(path, cust, read_only=True, trust=TrustStore(home))
    c = _Clock()
    inc = verify(s.vault, s)
    out["verify_incremental"] = {**c.per(k), "mode": inc.mode, "ok": inc.ok}
    s.close()


def _case_paths(
    out: dict[str, Any], root: Path, path: Path, home: Path, corpus: Any, wanted: Callable[..., bool]
) -> None:
    """holds, purges, export in one writable custodian session."""
    from tracer.engine.case import CaseDesk
    from tracer.engine.session import unlock
    from tracer.engine.trust import TrustStore
    from tracer.report import export_pack

    cust = common.custodian()
    s = unlock(path, cust, trust=TrustStore(home))
    try:
        answers = [
            str(r[0])
            for r in s.vault.query("SELECT answer_id FROM v_answers ORDER BY seq")
            if str(r[0]).startswith("ans-")
        ]
        step = max(1, len(answers) // max(1, corpus.n_manifests // 100))
        held = answers[::step][: max(5, corpus.n_manifests // 100)]
        held_set = set(held)
        free = [a for a in answers if a not in held_set]
        if wanted("hold", "holds", "purge"):
            desk = CaseDesk(s)
            c = _Clock()
            for aid in held:
                desk.hold("answer", aid, "scaling bench")
            out["hold"] = c.per(len(held))
            c = _Clock()
            listed = CaseDesk(s).holds()
            out["holds"] = c.per(len(listed))
        if wanted("purge"):
            _purges(out, s, free)
        if wanted("export"):
            exported = free[:: max(1, len(free) // max(1, corpus.n_manifests // 100))][
                : max(5, corpus.n_manifests // 100)
            ]
            c = _Clock()
            export_pack(s, exported, root / "pack", {"json", "md"})
            out["export"] = c.per(len(exported))
    finally:
        s.close()


def _purges(out: dict[str, Any], s: Any, free: list[str]) -> None:
    """5 single-digest purges of retrieved texts no hold covers."""
    from store import admin
    from store.errors import StoreError

    cust = common.custodian()
    digests: list[str] = []
    seen: set[str] = set()
    for aid in free[1::97]:
        rows = s.vault.query(
            "SELECT p.retrieved_sha256 FROM v_passages p JOIN v_answers a USING (seq) "
            "WHERE a.answer_id = ? ORDER BY p.retrieved_sha256 LIMIT 1",
            [aid],
        )
        for (d,) in rows:
            if d is not None and str(d) not in seen:
                seen.add(str(d))
                digests.append(str(d))
        if len(digests) >= 40:
            break
    done = 0
    refused: list[str] = []
    c = _Clock()
    for d in digests:
        try:
            admin.purge(s.vault, cust, d, "retention-2y", "scaling bench", "records-office", NOW)
        except StoreError as exc:  # a held digest is refused: count it apart
            refused.append(str(exc)[:120])
            continue
        done += 1
        if done == 5:
            break
    out["purge"] = {**c.per(done), "refused": refused}


def _run_child(passages: int, only: str) -> dict[str, Any]:
    print(f"[scaling] {passages} passages", file=sys.stderr, flush=True)
    common.ensure_vault(passages)
    proc = subprocess.run(
        [sys.executable, __file__, "--child", "--passages", str(passages), "--only", only],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"scaling child at {passages} failed with exit code {proc.returncode}")
    result: dict[str, Any] = json.loads([ln for ln in proc.stdout.splitlines() if ln.strip()][-1])
    return result


def _bench(script: str, argv: list[str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(common.ROOT / "bench" / script), *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}", "stderr": proc.stderr[-400:]}
    result: dict[str, Any] = json.loads([ln for ln in proc.stdout.splitlines() if ln.strip()][-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description="per-item cost of every batch path at two sizes 10x apart")
    ap.add_argument("--small", type=int, default=10_000, help="passages of the smaller vault")
    ap.add_argument("--factor", type=int, default=10)
    ap.add_argument(
        "--with-benches", action="store_true", help="also run bench/outbox.py and bench/import.py"
    )
    ap.add_argument("--only", default="", help=f"comma-separated paths to run, of: {', '.join(PATHS)}")
    ap.add_argument("--passages", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        common.emit(child(args))
        return
    load_before = os.getloadavg()[0]
    small, large = _run_child(args.small, args.only), _run_child(args.small * args.factor, args.only)
    ratios: dict[str, float] = {}
    for name, a in small["paths"].items():
        b = large["paths"].get(name)
        if b is None:
            continue
        ratios[name] = round(b["cpu_us_per_item"] / max(a["cpu_us_per_item"], 1e-9), 2)
    head: dict[str, Any] = {
        "bench": "scaling",
        "sizes": [args.small, args.small * args.factor],
        **common.code_version(),
        "loadavg_1m_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "goal": f"per-item cost ratio <= {LIMIT} on every path (issue 23)",
        "per_item_cpu_ratio": ratios,
        "over_limit": sorted(n for n, r in ratios.items() if r > LIMIT),
        "small": small,
        "large": large,
    }
    if args.with_benches:
        sizes = f"{args.small // 10},{args.small * args.factor // 10}"
        head["outbox"] = _bench("outbox.py", ["--sizes", sizes])
        head["import"] = _bench("import.py", [])
    common.emit(head)


if __name__ == "__main__":
    main()
