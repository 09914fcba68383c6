"""`tracer export-dataset`: a vault as a self-describing dataset for engines past one laptop.

The export is made by an unlocked session (custodian or investigator), read-only, so
exporting appends nothing and two exports of one vault see the same log.  It carries
the findings `tracer verify` makes on the vault at that moment in its signed manifest,
so a damaged vault exports as damaged, never as a clean bill.  Texts leave the vault as
the exporter chooses (`plaintext` only for what the exporting key may read, `ciphertext`
with the wrapped data keys, or `digests` only); purged texts appear as their tombstones.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from store import dataset as ds
from store.canonical import canonical
from store.crypto import b64e
from store.dsse import sign_envelope
from store.entries import LogEntry
from store.errors import StoreError, UnwrapError
from store.rows import StoredBlob
from store.tiles import TILE_WIDTH, bundle, entry_tile_path, hash_tiles
from store.vault import Vault
from tracer.engine.jsonshapes import FindingJSON
from tracer.engine.session import Session
from tracer.engine.verify import verify

__all__ = ["TEXT_MODES", "ExportError", "ExportResult", "export_dataset"]

TEXT_MODES = ("plaintext", "ciphertext", "digests")
#: 4096 entries (16 level-0 tiles): small enough that DuckDB's threads, which split
#: work by row group, have several each on a laptop-sized log; docs/scale.md says why
DEFAULT_ROW_GROUP = 1 << 12


class ExportError(StoreError):
    hint = "choose an empty or new output directory and a row-group size that is a power of two"


@dataclass(frozen=True)
class ExportResult:
    path: Path
    entries: int
    files: int
    findings: int


def _dump(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=True, sort_keys=True) + "\n").encode("ascii")


def export_dataset(
    session: Session, out: Path, texts: str = "plaintext", row_group: int = DEFAULT_ROW_GROUP
) -> ExportResult:
    _check_options(out, texts, row_group)
    vault = session.vault
    report = verify(vault, session, full=True)
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        count = _write(session, tmp, texts, row_group, [f.to_json() for f in report.findings])
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    files = sum(1 for p in out.rglob("*") if p.is_file())
    return ExportResult(out, count, files, len(report.findings))


def _check_options(out: Path, texts: str, row_group: int) -> None:
    if texts not in TEXT_MODES:
        raise ExportError(f"--texts: {texts!r} is not one of {', '.join(TEXT_MODES)}")
    if row_group < 1 or row_group & (row_group - 1):
        raise ExportError(f"--row-group: {row_group} is not a power of two")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out}: already exists and is not an empty directory")


def _write(session: Session, root: Path, texts: str, row_group: int, findings: list[FindingJSON]) -> int:
    vault = session.vault
    entries, leaves = _write_log(vault, root, row_group)
    cps = vault.checkpoints()
    ds.write_table(
        root / ds.CHECKPOINTS_FILE,
        pa.table(
            {
                "id": pa.array([c.id for c in cps], pa.int64()),
                "size": pa.array([c.size for c in cps], pa.int64()),
                "signer": pa.array([c.signer for c in cps], pa.string()),
                "note": pa.array([c.note for c in cps], pa.string()),
            }
        ),
    )
    head = vault.latest_checkpoint()
    (root / "checkpoint").write_text(head.note, encoding="utf-8")
    _write_tiles(root, entries, leaves, min(head.size, len(leaves)))
    ds.write_table(root / ds.REFERENCES_FILE, ds.reference_rows(vault))
    text_files = _texts(session, root, texts)
    _write_tombstones(vault, root)
    if texts == "ciphertext":
        ds.write_table(root / ds.DATA_KEYS_FILE, ds.data_key_table(vault))
    cust = vault.custodian
    listed = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    manifest = {
        "format": ds.FORMAT,
        "origin": vault.origin,
        "custodian": {
            "name": cust.name,
            "ed25519": b64e(cust.ed25519),
            "x25519": b64e(cust.x25519),
        },
        "checkpoint": {"size": head.size, "id": head.id, "signer": head.signer, "log_size": len(leaves)},
        "row_group": row_group,
        "texts": texts,
        "text_files": text_files,
        "exporter": {
            "key_id": session.identity.key_id,
            "name": session.name,
            "role": session.role,
            "scopes": list(session.scopes),
            # the data keys whose texts are in plaintext here: what the verdicts treat as held
            "data_keys": sorted(session.keys.keys) if texts == "plaintext" else [],
        },
        "findings": findings,
        "files": [{"path": p, "sha256": ds.sha256_file(root / p)} for p in listed],
    }
    payload = canonical(manifest)
    (root / ds.MANIFEST_FILE).write_bytes(payload)
    envelope = sign_envelope(payload, ds.PAYLOAD_TYPE, session.identity)
    (root / ds.DSSE_FILE).write_bytes(_dump(envelope.to_json()))
    return len(entries)


def _write_log(vault: Vault, root: Path, row_group: int) -> tuple[list[bytes], list[bytes]]:
    """log.parquet in row groups of `row_group`; (entries, stored leaves) in log order."""
    seqs: list[int] = []
    entries: list[bytes] = []
    leaves: list[bytes] = []
    kinds: list[str] = []
    signers: list[str | None] = []
    for seq, kind, data, leaf in vault.raw_entries():
        seqs.append(seq)
        entries.append(data)
        leaves.append(leaf)
        kinds.append(kind)
        try:
            signers.append(LogEntry.from_bytes(data).signer)
        except ValueError:
            signers.append(None)
    log = pa.Table.from_arrays(
        [
            pa.array(seqs, pa.int64()),
            pa.array(entries, pa.binary()),
            pa.array(leaves, pa.binary()),
            pa.array(kinds, pa.string()),
            pa.array(signers, pa.string()),
        ],
        schema=ds.log_schema(),
    )
    ds.write_table(root / ds.LOG_FILE, log, row_group)
    return entries, leaves


def _write_tiles(root: Path, entries: list[bytes], leaves: list[bytes], size: int) -> None:
    """The hash tiles of the first `size` leaves, and their entry bundles."""
    for path, data in hash_tiles(leaves[:size]):
        _put(root / path, data)
    for n in range(0, size, TILE_WIDTH):
        chunk = entries[n : min(n + TILE_WIDTH, size)]
        _put(root / entry_tile_path(n // TILE_WIDTH, len(chunk)), bundle(chunk, n))


def _write_tombstones(vault: Vault, root: Path) -> None:
    tombs = sorted(vault.index.tombstone_index().values(), key=lambda r: (r.seq, r.digest))
    ds.write_table(
        root / ds.TOMBSTONES_FILE,
        pa.table(
            {
                "seq": pa.array([r.seq for r in tombs], pa.int64()),
                "digest": pa.array([r.digest for r in tombs], pa.string()),
                "policy": pa.array([r.policy for r in tombs], pa.string()),
                "reason": pa.array([r.reason for r in tombs], pa.string()),
                "authorizer": pa.array([r.authorizer for r in tombs], pa.string()),
                "effective_at": pa.array([r.effective_at for r in tombs], pa.string()),
            }
        ),
    )


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _texts(session: Session, root: Path, mode: str) -> list[str]:
    """One Parquet file per collection (texts/NNNN.parquet, collections in name order)."""
    by_collection: dict[str, list[StoredBlob]] = {}
    for row in ds.text_rows(session.vault):
        by_collection.setdefault(row.collection, []).append(row)
    names = []
    keys = session.keys
    for i, collection in enumerate(sorted(by_collection)):
        digests, dk_ids, states, texts, nonces, cts = [], [], [], [], [], []
        for digest, _c, dk_id, nonce, ct in by_collection[collection]:
            state, text = "digest", None
            n: bytes | None = None
            c: bytes | None = None
            if mode == "plaintext" and session.can_read(collection) and dk_id in keys.keys:
                try:
                    text = keys.open_row(digest, collection, dk_id, nonce, ct)
                    state = "plaintext"
                except UnwrapError:
                    state = "unreadable"
            elif mode == "plaintext":
                state = "withheld"
            elif mode == "ciphertext":
                state, n, c = "ciphertext", nonce, ct
            digests.append(digest)
            dk_ids.append(dk_id)
            states.append(state)
            texts.append(text)
            nonces.append(n)
            cts.append(c)
        name = f"texts/{i:04d}.parquet"
        ds.write_table(
            root / name,
            pa.table(
                {
                    "digest": pa.array(digests, pa.string()),
                    "collection": pa.array([collection] * len(digests), pa.string()),
                    "dk_id": pa.array(dk_ids, pa.string()),
                    "state": pa.array(states, pa.string()),
                    "text": pa.array(texts, pa.binary()),
                    "nonce": pa.array(nonces, pa.binary()),
                    "ct": pa.array(cts, pa.binary()),
                }
            ),
        )
        names.append(name)
    return names
