"""Build a large synthetic vault through the real ingest path, and cache it.

    .venv/bin/python bench/gen.py --passages 100000 [--out DIR] [--force]

Writes real input files (DSSE-signed manifests from `store.producer.draft_to_input`,
`tracer.source_revision/v1` and `tracer.document_deletion/v1` files) one batch at a
time into DIR/inputs, ingests each batch with `store.ingest.ingest` (1,000 manifests
per call plus the revisions and deletions of that time window), deletes the files, and
finally applies retention purges with `store.admin.purge` (one tombstone each).
Memory stays bounded: only the document outlines and one batch are ever held.

The vault lands in DIR/vault (default /tmp/tracer-bench/<passages>) with DIR/meta.json
describing it; an existing vault with the same generator version is reused.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.corpus import Batch, Corpus, iso
from store import admin
from store.ingest import ingest
from store.vault import Vault

INVESTIGATORS = {"ines": ["*"], "omar": ["support"]}
SETUP_AT = "2025-10-01T00:00:00Z"


def log(msg: str) -> None:
    print(f"[gen] {msg}", file=sys.stderr, flush=True)


def write_files(batch: Batch, directory: Path, what: str = "all") -> list[Path]:
    """Write one batch as input files: revisions, then manifests, then deletions."""
    directory.mkdir(parents=True, exist_ok=True)
    groups: list[tuple[str, list[dict[str, Any]]]] = []
    if what in ("all", "sources"):
        groups.append(("rev", batch.revisions))
    if what in ("all", "manifests"):
        groups.append(("man", batch.manifests))
    if what in ("all", "sources"):
        groups.append(("del", batch.deletions))
    paths: list[Path] = []
    for prefix, items in groups:
        for n, obj in enumerate(items):
            p = directory / f"{batch.index:05d}-{prefix}-{n:05d}.json"
            p.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
            paths.append(p)
    return paths


def new_vault(path: Path) -> Vault:
    """A fresh vault: custodian, two producer keys, two investigators."""
    cust = common.custodian()
    vault = Vault.create(path, cust, SETUP_AT, origin=f"tracer.bench/{path.parent.name}")
    for system in ("support-assistant", "ops-assistant"):
        admin.add_producer_key(vault, cust, common.producer(system).public, SETUP_AT)
    for name, scopes in INVESTIGATORS.items():
        admin.grant_investigator(vault, cust, common.investigator(name).public, scopes, SETUP_AT)
    return vault


def ingest_files(vault: Vault, files: list[Path], now: str) -> None:
    if not files:
        return
    report = ingest(vault, files, common.custodian(), now)
    if not report.ok:
        raise SystemExit(f"ingest refused: {json.dumps(report.to_json()['rejected'][:3])}")


def build(passages: int, out: Path) -> dict[str, Any]:
    vault_path = out / "vault"
    inputs = out / "inputs"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    t_start = time.perf_counter()
    corpus = Corpus(passages)
    vault = new_vault(vault_path)
    cust = common.custodian()
    purge_passages: list[str] = []
    t_ingest = t_gen = 0.0
    n_batches = 0
    last = time.perf_counter()
    for batch in corpus.batches():
        t0 = time.perf_counter()
        files = write_files(batch, inputs)
        t1 = time.perf_counter()
        ingest_files(vault, files, batch.now)
        t2 = time.perf_counter()
        t_gen += t1 - t0
        t_ingest += t2 - t1
        shutil.rmtree(inputs)
        purge_passages.extend(batch.purge_passages)
        n_batches += 1
        if time.perf_counter() - last > 5 or not batch.manifests:
            last = time.perf_counter()
            log(
                f"batch {batch.index}: {corpus.stats['manifests']}/{corpus.n_manifests} manifests, "
                f"{len(batch.revisions)} revisions; generate {t_gen:.0f}s ingest {t_ingest:.0f}s"
            )
    # Retention: purge 3 % of superseded revisions and the chosen retrieved texts.
    t3 = time.perf_counter()
    purged = 0
    seen: set[str] = set()
    import hashlib

    from bench.corpus import render

    for n, (doc, rev) in enumerate(corpus.superseded_revisions()):
        if n % 33 != 7:
            continue
        digest = hashlib.sha256(render(rev).encode("utf-8")).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        admin.purge(
            vault,
            cust,
            digest,
            "retention-2y",
            f"superseded revision {doc.document_id}@{rev.label}",
            "records-office",
            iso(corpus.manifest_time(corpus.n_manifests - 1)),
        )
        purged += 1
    for digest in purge_passages:
        if digest in seen:
            continue
        seen.add(digest)
        admin.purge(
            vault,
            cust,
            digest,
            "pii-erasure",
            "data subject erasure request",
            "dpo",
            iso(corpus.manifest_time(corpus.n_manifests - 1)),
        )
        purged += 1
    t_purge = time.perf_counter() - t3
    size = vault.size()
    vault.close()
    total = time.perf_counter() - t_start
    db_bytes = sum(f.stat().st_size for f in vault_path.iterdir() if f.is_file())
    meta = {
        "gen_version": common.GEN_VERSION,
        "passages_requested": passages,
        **corpus.stats,
        "tombstones": purged,
        "log_entries": size,
        "ingest_batches": n_batches,
        "vault_bytes": db_bytes,
        "seconds": {
            "total": round(total, 1),
            "generate_and_write_inputs": round(t_gen, 1),
            "ingest": round(t_ingest, 1),
            "purge": round(t_purge, 1),
        },
        "peak_rss_mib": common.peak_rss_mib(),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    log(f"done in {total:.0f}s: {json.dumps(meta)}")
    return meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--force", action="store_true", help="rebuild even if a cached vault exists")
    args = ap.parse_args()
    out = common.vault_dir(args.passages, args.out)
    meta_path = out / "meta.json"
    if not args.force and meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if meta.get("gen_version") == common.GEN_VERSION:
            log(f"reusing {out}")
            common.emit({"bench": "gen", "cached": True, "out": str(out), **meta})
            return
    meta = build(args.passages, out)
    common.emit({"bench": "gen", "cached": False, "out": str(out), **meta})


if __name__ == "__main__":
    main()
