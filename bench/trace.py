"""One answer's trace latency, and revalidating every answer ÷ a floor, in the same run.

    .venv/bin/python bench/trace.py --passages 100000 --runs 3 [--samples 25]

Session: `unlock(path, custodian, read_only=True, trust=TrustStore(tmp))` — the custodian
reads every collection, and read-only keeps the cached vault unchanged (access entries
go to the local journal, as on write-protected media).

trace: `Tracer(session).trace(answer_id)` for `--samples` answers spread evenly over the
log, each with a fresh Tracer (as `tracer trace` does): median and p95 latency, wall and
process CPU, and the session's first trace beside the median of the rest.

revalidate: `tracer.engine.catalog.revalidate(session)` over all answers.

Floor for revalidate — the work no implementation can skip to state both axes for
every answer, each part timed on its own (reading rows and ciphertext from DuckDB is
outside the timers):
  * ed25519: verify every manifest's DSSE signature (a trace trusts only signed manifests);
  * aes_gcm + sha256: decrypt and hash every distinct retained text the answers refer to
    (question, answer, retrieved, model input) and every cited or latest revision, once;
  * normalize: `tracer-norm/1` of every cited or latest revision once, and of every
    distinct retrieved text once (the quote);
  * find: one exact substring search of each passage's quote in its document's latest
    normalized revision (what `verified`/`moved`/`stale` all start from).
Relocation beyond the exact search (fuzzy/structural matching for stale and ambiguous)
is deliberately left out: it is the engine's own algorithmic cost, which the ratio
should expose rather than hide.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common


def measure_floor(vault_path: Path) -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from store.dsse import pae
    from store.keyring import DataKeys
    from store.vault import Vault
    from tracer.engine.textnorm import normalize, normalize_quote

    vault = Vault.open(vault_path, read_only=True)
    con = vault.con
    keys = DataKeys(vault, common.custodian())
    aes = {dk: AESGCM(k) for dk, k in keys.keys.items()}
    pubs = {
        common.producer(s).key_id: Ed25519PublicKey.from_public_bytes(common.producer(s).public.ed25519)
        for s in ("support-assistant", "ops-assistant")
    }
    t_ed, t_aes, t_sha, t_norm, t_find = (common.Timer() for _ in range(5))
    # 1. manifest signatures, paged
    seq = -1
    n_sigs = 0
    while True:
        rows = con.execute(
            "SELECT seq, entry FROM log WHERE kind = 'manifest' AND seq > ? ORDER BY seq LIMIT 5000", [seq]
        ).fetchall()
        if not rows:
            break
        seq = int(rows[-1][0])
        work = []
        for _s, data in rows:
            env = json.loads(bytes(data))["envelope"]
            msg = pae(env["payloadType"], base64.b64decode(env["payload"]))
            sig = env["signatures"][0]
            work.append((pubs[sig["keyid"]], base64.b64decode(sig["sig"]), msg))
        with t_ed:
            for pub, sig, msg in work:
                pub.verify(sig, msg)
        n_sigs += len(work)

    # 2. every distinct referenced text (answers' digests + revisions), decrypted and hashed once
    quotes: dict[str, str] = {}
    revtext: dict[str, str] = {}
    wanted_quotes = {r[0] for r in con.execute("SELECT DISTINCT retrieved_sha256 FROM v_passages").fetchall()}
    wanted_revs = {r[0] for r in con.execute("SELECT DISTINCT content_sha256 FROM v_revisions").fetchall()}
    needed = con.cursor().execute(
        "SELECT DISTINCT b.digest, b.collection, b.dk_id, b.nonce, b.ct FROM blobs b WHERE b.digest IN ("
        " SELECT question_sha256 FROM v_answers UNION SELECT answer_sha256 FROM v_answers"
        " UNION SELECT retrieved_sha256 FROM v_passages UNION SELECT model_input_sha256 FROM v_passages"
        " UNION SELECT content_sha256 FROM v_revisions) ORDER BY b.digest"
    )
    n_texts = 0
    while True:
        rows = needed.fetchmany(5000)
        if not rows:
            break
        work2 = [(d, aes[dk], bytes(n), bytes(ct), f"{d}\n{c}".encode()) for d, c, dk, n, ct in rows]
        with t_aes:
            plain = [(d, a.decrypt(n, ct, aad)) for d, a, n, ct, aad in work2]
        with t_sha:
            for _d, p in plain:
                hashlib.sha256(p).digest()
        for d, p in plain:
            if d in wanted_quotes:
                quotes[d] = p.decode("utf-8")
            if d in wanted_revs:
                revtext[d] = p.decode("utf-8")
        n_texts += len(plain)

    # 3. normalize cited and latest revisions once, quotes once; one find per passage
    latest = dict(
        con.execute(
            "SELECT document_id, arg_max(content_sha256, committed_at) FROM v_revisions GROUP BY document_id"
        ).fetchall()
    )
    cited = {
        r[0]
        for r in con.execute(
            "SELECT DISTINCT r.content_sha256 FROM v_passages p JOIN v_revisions r "
            "ON r.document_id = p.document_id AND r.revision = p.doc_revision"
        ).fetchall()
    }
    norm: dict[str, str] = {}
    for d in sorted((cited | set(latest.values())) & revtext.keys()):
        text = revtext[d]
        with t_norm:
            norm[d] = normalize(text)
    nquote: dict[str, str] = {}
    with t_norm:
        for d, text in quotes.items():
            nquote[d] = normalize_quote(text)
    pairs = con.execute(
        "SELECT document_id, retrieved_sha256 FROM v_passages WHERE derived_from IS NULL"
    ).fetchall()
    n_find = 0
    with t_find:
        for doc, dg in pairs:
            lat = latest.get(doc)
            q = nquote.get(dg)
            if lat in norm and q is not None:
                norm[lat].find(q)
                n_find += 1
    vault.close()
    parts = {
        "ed25519_s": t_ed.total,
        "aes_gcm_s": t_aes.total,
        "sha256_s": t_sha.total,
        "normalize_s": t_norm.total,
        "find_s": t_find.total,
    }
    return {
        "floor_s": round(sum(parts.values()), 4),
        **{k: round(v, 4) for k, v in parts.items()},
        "manifest_signatures": n_sigs,
        "distinct_texts": n_texts,
        "normalized_revisions": len(norm),
        "distinct_quotes": len(nquote),
        "quote_searches": n_find,
    }


def _p95_ms(values: list[float]) -> float:
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2)


def child(args: argparse.Namespace) -> dict[str, Any]:
    from tracer.engine.catalog import revalidate
    from tracer.engine.session import unlock
    from tracer.engine.trace import Tracer
    from tracer.engine.trust import TrustStore

    path = common.ensure_vault(args.passages, args.out)
    session = unlock(path, common.custodian(), read_only=True, trust=TrustStore(common.tmp_home()))
    ids = [
        str(r[0])
        for r in session.vault.con.execute("SELECT answer_id FROM v_answers ORDER BY seq").fetchall()
    ]
    step = max(1, len(ids) // args.samples)
    sample = ids[step // 2 :: step][: args.samples]
    lat: list[float] = []
    cpu: list[float] = []
    for aid in sample:
        t0, c0 = time.perf_counter(), time.process_time()
        Tracer(session).trace(aid)
        lat.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    # the same first answer once more, warm: the sample's first answer may be heavier than
    # the median one (a lineage answer), so "first ÷ rest" alone mixes the cold start with
    # the answer's own size
    t0, c0 = time.perf_counter(), time.process_time()
    Tracer(session).trace(sample[0])
    again, again_cpu = time.perf_counter() - t0, time.process_time() - c0
    head = {
        "trace_median_ms": round(1000 * statistics.median(lat), 2),
        "trace_p95_ms": _p95_ms(lat),
        "trace_samples": len(lat),
        # process CPU (DuckDB's threads included): what the load of other processes does not inflate
        "trace_cpu_median_ms": round(1000 * statistics.median(cpu), 2),
        "trace_cpu_p95_ms": _p95_ms(cpu),
        # the first trace of the session against the rest (issue 23: no slower than the rest)
        "first_trace_ms": round(1000 * lat[0], 2),
        "first_trace_cpu_ms": round(1000 * cpu[0], 2),
        "first_answer_again_ms": round(1000 * again, 2),
        "first_answer_again_cpu_ms": round(1000 * again_cpu, 2),
        "rest_median_ms": round(1000 * statistics.median(lat[1:] or lat), 2),
        "rest_cpu_median_ms": round(1000 * statistics.median(cpu[1:] or cpu), 2),
    }
    if args.no_revalidate:
        session.close()
        return {**head, "revalidate": "skipped (--no-revalidate)", "peak_rss_mib": common.peak_rss_mib()}
    t0 = time.perf_counter()
    result = revalidate(session)
    revalidate_s = time.perf_counter() - t0
    counts = result.counts
    session.close()
    rss = common.peak_rss_mib()
    floor = measure_floor(path)
    return {
        **head,
        "revalidate_s": round(revalidate_s, 3),
        "revalidate_answers": len(result.answers),
        "revalidate_ratio": round(revalidate_s / floor["floor_s"], 2),
        "floor": floor,
        "states": counts,
        "peak_rss_mib": rss,
        "peak_rss_with_floor_mib": common.peak_rss_mib(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="trace latency and revalidate ÷ floor")
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--samples", type=int, default=25, help="answers traced one by one")
    ap.add_argument("--out", type=Path, default=None, help="vault cache directory")
    ap.add_argument("--no-revalidate", action="store_true", help="trace latency only (for 1M runs)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    argv = ["--passages", str(args.passages), "--samples", str(args.samples)]
    argv += ["--no-revalidate"] if args.no_revalidate else []
    argv += ["--out", str(args.out)] if args.out else []
    if not args.child:
        common.ensure_vault(args.passages, args.out)
    common.main_runner(__file__, child, args, argv)


if __name__ == "__main__":
    main()
