"""Incremental verification after +1 % entries ÷ full verification of the same vault.

    .venv/bin/python bench/incremental.py --passages 100000 --runs 3

Each run builds a fresh vault from the generator's corpus (bench/corpus.py) through the
real ingest path, holding back the last 1 % of the manifests.  A custodian session then
verifies in full (untimed), which leaves this machine a signed receipt; the held-back
manifests are ingested; and on the grown vault the target (`verify`, incremental from
the receipt) and its reference (`verify(full=True)`) are timed one after the other in
the same process.  Goal: incremental ÷ full ≤ 0.15.  Both find the same findings (the
script checks it), so the ratio compares like with like.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common


def child(args: argparse.Namespace) -> dict[str, Any]:
    from bench.corpus import Corpus
    from bench.gen import ingest_files, new_vault, write_files
    from store.vault import Vault
    from tracer.engine.session import unlock
    from tracer.engine.trust import TrustStore
    from tracer.engine.verify import VerifyReport, verify

    root = Path(tempfile.mkdtemp(prefix="tracer-incr-"))
    try:
        path = root / "vault"
        vault = new_vault(path)
        corpus = Corpus(args.passages)
        batches = list(corpus.batches())
        held = max(1, corpus.n_manifests // 100)
        last = batches[-1] if batches[-1].manifests else batches[-2]
        tail = last.manifests[-held:]
        last.manifests = last.manifests[:-held]
        for batch in batches:
            ingest_files(vault, write_files(batch, root / f"in-{batch.index}"), batch.now)
        vault.close()
        home = root / "home"

        def session_verify(full: bool) -> tuple[float, VerifyReport]:
            s = unlock(path, common.custodian(), read_only=True, trust=TrustStore(home))
            try:
                t0 = time.perf_counter()
                report = verify(s.vault, s, full=full)
                return time.perf_counter() - t0, report
            finally:
                s.close()

        first_s, first = session_verify(full=True)
        if not first.ok:
            raise SystemExit("the generated vault does not verify clean: no receipt to start from")
        with Vault.open(path) as v:
            tail_dir = root / "tail"
            tail_dir.mkdir()
            files = []
            for n, obj in enumerate(tail):
                p = tail_dir / f"tail-{n:05d}.json"
                p.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
                files.append(p)
            ingest_files(v, files, last.now)
        inc_s, inc = session_verify(full=False)
        full_s, full = session_verify(full=True)
        same = [f.to_json() for f in inc.findings] == [f.to_json() for f in full.findings]
        return {
            "ratio": round(inc_s / full_s, 3),
            "goal": "incremental / full <= 0.15",
            "incremental_s": round(inc_s, 3),
            "full_s": round(full_s, 3),
            "first_full_s": round(first_s, 3),
            "mode": inc.mode,
            "verified_from": inc.verified_from,
            "entries": full.counts.get("entries"),
            "added_manifests": len(tail),
            "same_findings": same,
            "peak_rss_mib": common.peak_rss_mib(),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description="incremental verify after +1 % ÷ full verify")
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    common.main_runner(__file__, child, args, ["--passages", str(args.passages)])


if __name__ == "__main__":
    main()
