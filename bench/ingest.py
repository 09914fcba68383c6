"""Manifests per second through ingest, and ÷ the signature + hashing floor of the same manifests.

    .venv/bin/python bench/ingest.py --passages 100000 --runs 3

Each run builds a fresh vault (custodian, two producer keys, two investigators) in a
temporary directory and feeds it the generator's batches (bench/corpus.py): per batch,
the source revisions and deletions of that time window are written and ingested
untimed, then the batch's 1,000 signed manifest files (10 passages each) are written
(untimed) and ingested with `store.ingest.ingest` (timed) — the same call `tracer
ingest FILE...` makes, without the process start.

Floor for the same manifests, measured in the same run right after each batch (inputs
prepared outside the timers): Ed25519 verification of each envelope's signature over
its PAE, SHA-256 of every supplied text in `contents`, and the RFC 6962 leaf hash of
every log entry the batch appended.  AES-GCM encryption of the texts is reported
beside it (`aes_gcm_encrypt_s`) but is not part of the floor the goal refers to.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common


def _workers_cpu() -> float:
    """CPU seconds the shared ingest pool's live workers have used so far."""
    from store import ingestpool

    pool = ingestpool.running_pool()
    total = 0.0
    for pid in pool.pids() if pool is not None else []:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def child(args: argparse.Namespace) -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from bench.corpus import Corpus
    from bench.gen import ingest_files, new_vault, write_files
    from store import ingestpool
    from store.dsse import pae
    from store.ingest import ingest

    work = Path(tempfile.mkdtemp(prefix="tracer-bench-ingest-"))
    try:
        vault = new_vault(work / "vault")
        pubs = {
            common.producer(s).key_id: Ed25519PublicKey.from_public_bytes(common.producer(s).public.ed25519)
            for s in ("support-assistant", "ops-assistant")
        }
        aes = AESGCM(AESGCM.generate_key(bit_length=256))
        nonce = os.urandom(12)
        custodian = common.custodian()
        corpus = Corpus(args.passages)
        t_ingest, t_ed, t_sha, t_leaf, t_aes = (common.Timer() for _ in range(5))
        n_man = n_texts = n_bytes = 0
        last_rate = cpu_main = 0.0
        for batch in corpus.batches():
            inputs = work / "inputs"
            # in this process, so the timed calls are the ones that start the worker pool
            sources = write_files(batch, inputs, "sources")
            if sources and not ingest(vault, sources, custodian, batch.now, workers=0).ok:
                raise SystemExit("ingest of the batch's sources refused")
            shutil.rmtree(inputs, ignore_errors=True)
            if not batch.manifests:
                continue
            files = write_files(batch, inputs, "manifests")
            start = vault.size()
            t0 = time.perf_counter()
            c0 = time.process_time()
            with t_ingest:
                ingest_files(vault, files, batch.now)
            last_rate = len(files) / (time.perf_counter() - t0)
            cpu_main += time.process_time() - c0
            shutil.rmtree(inputs, ignore_errors=True)
            # the floor for exactly these manifests
            sigs = []
            texts: list[bytes] = []
            for m in batch.manifests:
                env = m["envelope"]
                msg = pae(env["payloadType"], base64.b64decode(env["payload"]))
                for s in env["signatures"]:
                    sigs.append((pubs[s["keyid"]], base64.b64decode(s["sig"]), msg))
                texts.extend(t.encode("utf-8") for t in m["contents"].values())
            entries = [
                bytes(r[0])
                for r in vault.con.execute(
                    "SELECT entry FROM log WHERE seq >= ? ORDER BY seq", [start]
                ).fetchall()
            ]
            with t_ed:
                for pub, sig, msg in sigs:
                    pub.verify(sig, msg)
            with t_sha:
                for t in texts:
                    hashlib.sha256(t).digest()
            with t_leaf:
                for e in entries:
                    hashlib.sha256(b"\x00" + e).digest()
            with t_aes:
                for t in texts:
                    aes.encrypt(nonce, t, None)
            n_man += len(batch.manifests)
            n_texts += len(texts)
            n_bytes += sum(len(t) for t in texts)
            print(f"[ingest] {n_man}/{corpus.n_manifests} manifests", file=sys.stderr, flush=True)
        vault.close()
        rss = common.peak_rss_mib()
        cpu_workers = _workers_cpu()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floor = t_ed.total + t_sha.total + t_leaf.total
    return {
        "manifests_per_s": round(n_man / t_ingest.total, 1),
        "goal": "ingest / floor <= 2.5 (issue 13)",
        "ratio": round(t_ingest.total / floor, 1),
        "ingest_s": round(t_ingest.total, 3),
        "last_batch_manifests_per_s": round(last_rate, 1),
        # CPU of the timed calls in this process, and all the workers' CPU (they did
        # nothing else); workers: the shared pool's size (TRACER_INGEST_WORKERS)
        "cpu_main_s": round(cpu_main, 3),
        "cpu_workers_s": round(cpu_workers, 3),
        "workers": ingestpool.worker_count(),
        "floor": {
            "floor_s": round(floor, 4),
            "floor_manifests_per_s": round(n_man / floor, 1),
            "ed25519_s": round(t_ed.total, 4),
            "sha256_texts_s": round(t_sha.total, 4),
            "merkle_leaves_s": round(t_leaf.total, 4),
            "aes_gcm_encrypt_s": round(t_aes.total, 4),
        },
        "manifests": n_man,
        "texts": n_texts,
        "text_bytes": n_bytes,
        "peak_rss_mib": rss,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="ingest throughput ÷ signature + hashing floor")
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    common.main_runner(__file__, child, args, ["--passages", str(args.passages)])


if __name__ == "__main__":
    main()
