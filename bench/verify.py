"""Full verification time ÷ the cryptographic floor of the same vault, in the same run.

    .venv/bin/python bench/verify.py --passages 100000 --runs 3

Target: `tracer.engine.verify.verify` with a custodian Session opened by
`tracer.engine.session.unlock(path, custodian, read_only=True, trust=TrustStore(tmp))`
(read-only so the cached vault is not changed by the access entry; the unlock is timed
separately and not part of the ratio).

Floor, measured afterwards in the same process, each part timed on its own:
  * sha256: hashlib.sha256 over exactly the retained plaintexts, one call per blob row;
  * aes_gcm: AES-GCM decryption of exactly the stored blob rows (AESGCM objects built
    once per data key, outside the timer);
  * ed25519: verification of exactly the stored signatures: every log entry's DSSE
    signature over its PAE, and every checkpoint note's signature over its text
    (public-key objects built once, outside the timer);
  * merkle: RFC 6962 leaf hash of every entry plus the interior nodes of the tree.
Reading bytes from DuckDB, base64-decoding and building PAE messages happen outside
the timers, page by page, so the floor never holds the whole vault in memory.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

PAGE = 5_000


def measure_floor(vault_path: Path) -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from store.dsse import pae
    from store.keyring import DataKeys
    from store.note import _parse_note
    from store.vault import Vault

    vault = Vault.open(vault_path, read_only=True)
    keys = DataKeys(vault, common.custodian())
    aes = {dk: AESGCM(k) for dk, k in keys.keys.items()}
    t_sha, t_aes, t_ed, t_leaf, t_node = (common.Timer() for _ in range(5))
    n_blobs = n_bytes = 0
    last = ""
    while True:
        rows = vault.con.execute(
            "SELECT digest, collection, dk_id, nonce, ct FROM blobs WHERE digest || collection > ? "
            "ORDER BY digest || collection LIMIT ?",
            [last, PAGE],
        ).fetchall()
        if not rows:
            break
        last = rows[-1][0] + rows[-1][1]
        work = [(aes[dk], bytes(n), bytes(ct), f"{d}\n{c}".encode()) for d, c, dk, n, ct in rows]
        with t_aes:
            plain = [a.decrypt(n, ct, aad) for a, n, ct, aad in work]
        with t_sha:
            for p in plain:
                hashlib.sha256(p).digest()
        n_blobs += len(plain)
        n_bytes += sum(len(p) for p in plain)
    # signatures: DSSE over PAE for every entry, then checkpoint notes
    pubs: dict[str, Ed25519PublicKey] = {}
    for (data,) in vault.con.execute(
        "SELECT entry FROM log WHERE kind IN ('vault_init','key_add','investigator_grant')"
    ).fetchall():
        body = json.loads(bytes(data))
        st = json.loads(base64.b64decode(body["envelope"]["payload"]))["statement"]
        if "custodian" in st:
            pubs[st["custodian"]["key_id"]] = Ed25519PublicKey.from_public_bytes(
                base64.b64decode(st["custodian"]["ed25519"])
            )
        if "ed25519" in st:
            pubs[st["key_id"]] = Ed25519PublicKey.from_public_bytes(base64.b64decode(st["ed25519"]))
    names = {"custodian": pubs[common.custodian().key_id]}
    for name in ("ines", "omar"):
        names[name] = pubs.get(common.investigator(name).key_id, names["custodian"])
    n_sigs = n_entries = 0
    seq = -1
    stack: list[bytes] = []
    size = 0
    while True:
        rows = vault.con.execute(
            "SELECT seq, entry FROM log WHERE seq > ? ORDER BY seq LIMIT ?", [seq, PAGE]
        ).fetchall()
        if not rows:
            break
        seq = int(rows[-1][0])
        datas = [bytes(r[1]) for r in rows]
        sigs = []
        for data in datas:
            env = json.loads(data)["envelope"]
            msg = pae(env["payloadType"], base64.b64decode(env["payload"]))
            for s in env["signatures"]:
                sigs.append((pubs[s["keyid"]], base64.b64decode(s["sig"]), msg))
        with t_ed:
            for pub, sig, msg in sigs:
                pub.verify(sig, msg)
        with t_leaf:
            leaves = [hashlib.sha256(b"\x00" + d).digest() for d in datas]
        with t_node:
            sha = hashlib.sha256
            for h in leaves:
                size += 1
                m = size
                while not m & 1:
                    h = sha(b"\x01" + stack.pop() + h).digest()
                    m >>= 1
                stack.append(h)
            # (folding the final stack costs log2(n) hashes; negligible)
        n_sigs += len(sigs)
        n_entries += len(datas)
    notes = [str(r[0]) for r in vault.con.execute("SELECT note FROM checkpoints ORDER BY id").fetchall()]
    note_work = []
    for note in notes:
        text, lines = _parse_note(note, "checkpoint")
        for line in lines:
            note_work.append((names.get(line.name, names["custodian"]), line.sig, text.encode()))
    with t_ed:
        for pub, sig, msg in note_work:
            pub.verify(sig, msg)
    vault.close()
    parts = {
        "sha256_s": t_sha.total,
        "aes_gcm_s": t_aes.total,
        "ed25519_s": t_ed.total,
        "merkle_leaves_s": t_leaf.total,
        "merkle_nodes_s": t_node.total,
    }
    return {
        "floor_s": sum(parts.values()),
        **{k: round(v, 4) for k, v in parts.items()},
        "blobs": n_blobs,
        "plaintext_bytes": n_bytes,
        "signatures": n_sigs + len(note_work),
        "checkpoint_signatures": len(note_work),
        "entries": n_entries,
    }


def child(args: argparse.Namespace) -> dict[str, Any]:
    from tracer.engine.session import unlock
    from tracer.engine.trust import TrustStore
    from tracer.engine.verify import verify

    path = common.ensure_vault(args.passages, args.out)
    t0 = time.perf_counter()
    session = unlock(path, common.custodian(), read_only=True, trust=TrustStore(common.tmp_home()))
    t1 = time.perf_counter()
    report = verify(session.vault, session)
    t2 = time.perf_counter()
    session.close()
    rss_target = common.peak_rss_mib()
    floor = measure_floor(path)
    verify_s = t2 - t1
    return {
        "ratio": round(verify_s / floor["floor_s"], 2),
        "goal": "verify / floor <= 2.0 (issue 13)",
        "verify_s": round(verify_s, 3),
        "unlock_s": round(t1 - t0, 3),
        "floor": {**floor, "floor_s": round(floor["floor_s"], 4)},
        "verify_ok": report.ok,
        "findings": len(report.findings),
        "counts": report.counts,
        "peak_rss_mib": rss_target,
        "peak_rss_with_floor_mib": common.peak_rss_mib(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="verify time ÷ crypto floor")
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="vault cache directory")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    argv = ["--passages", str(args.passages)] + (["--out", str(args.out)] if args.out else [])
    if not args.child:
        common.ensure_vault(args.passages, args.out)
    common.main_runner(__file__, child, args, argv)


if __name__ == "__main__":
    main()
