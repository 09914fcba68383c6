"""An independent tlog-tiles client, written from C2SP tlog-tiles, tlog-checkpoint and
signed-note and RFC 6962 alone (nothing of tracer's Merkle or tile code): it reads the
exported `checkpoint`, checks its Ed25519 signature, rebuilds the tree from the tiles,
gets the checkpoint's root, and proves inclusion of 100 random entries from the
entry bundles."""

from __future__ import annotations

import base64
import hashlib
import json
import random
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from tests.dataset.conftest import Exported

H = 256


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _mth(leaves: list[bytes]) -> bytes:
    """RFC 6962 2.1 MTH over leaf hashes, by its recursive definition."""
    n = len(leaves)
    if n == 1:
        return leaves[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return _sha(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:]))


def _path(m: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 6962 2.1.1 PATH(m, D[n])."""
    n = len(leaves)
    if n == 1:
        return []
    k = 1
    while k * 2 < n:
        k *= 2
    if m < k:
        return [*_path(m, leaves[:k]), _mth(leaves[k:])]
    return [*_path(m - k, leaves[k:]), _mth(leaves[:k])]


def _root_from_path(m: int, n: int, leaf: bytes, path: list[bytes]) -> bytes:
    """RFC 9162 2.1.3.2 verification algorithm."""
    fn, sn, r = m, n - 1, leaf
    for p in path:
        assert sn != 0
        if fn & 1 or fn == sn:
            r = _sha(b"\x01" + p + r)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            r = _sha(b"\x01" + r + p)
        fn >>= 1
        sn >>= 1
    assert sn == 0
    return r


def _index(n: int) -> str:
    s = f"{n:03d}"
    parts = [s[max(0, i - 3) : i] for i in range(len(s), 0, -3)][::-1]
    parts = [p.rjust(3, "0") for p in parts]
    return "/".join(["x" + p for p in parts[:-1]] + [parts[-1]])


def _tile(root: Path, level: int, n: int, width: int) -> bytes:
    name = f"tile/{level}/{_index(n)}" + ("" if width == H else f".p/{width}")
    data = (root / name).read_bytes()
    assert len(data) == 32 * width, name
    return data


def _checkpoint(root: Path, name: str, public: bytes) -> tuple[int, bytes]:
    text = (root / "checkpoint").read_text(encoding="utf-8")
    body, sigs = text.split("\n\n", 1)
    body += "\n"
    lines = body.split("\n")
    size, root_hash = int(lines[1]), base64.b64decode(lines[2])
    key_hash = _sha(name.encode() + b"\n" + b"\x01" + public)[:4]
    verified = False
    for line in sigs.splitlines():
        who, sig_b64 = line.removeprefix("\u2014 ").split(" ")
        raw = base64.b64decode(sig_b64)
        if who == name and raw[:4] == key_hash:
            Ed25519PublicKey.from_public_bytes(public).verify(raw[4:], body.encode())
            verified = True
    assert verified
    return size, root_hash


def test_a_stock_tiles_reader_checks_the_tree(exported: Exported) -> None:
    root = exported.dataset
    signer = json.loads((exported.vault / "keys" / "omar.pub").read_text())
    size, signed_root = _checkpoint(root, signer["name"], base64.b64decode(signer["ed25519"]))
    # level 0: the leaf hashes, full tiles then the partial one
    leaves: list[bytes] = []
    for n in range(size // H):
        data = _tile(root, 0, n, H)
        leaves += [data[i : i + 32] for i in range(0, len(data), 32)]
    if size % H:
        data = _tile(root, 0, size // H, size % H)
        leaves += [data[i : i + 32] for i in range(0, len(data), 32)]
    assert len(leaves) == size
    # each level-1 hash is the MTH of a full level-0 tile
    full = size // H
    if full:
        level1 = _tile(root, 1, 0, full % H if full < H else H)
        for n in range(full):
            assert level1[32 * n : 32 * n + 32] == _mth(leaves[n * H : (n + 1) * H])
    assert _mth(leaves) == signed_root
    # entry bundles: big-endian uint16 length-prefixed entries hashing to the leaves
    entries: list[bytes] = []
    for n in range((size + H - 1) // H):
        width = min(H, size - n * H)
        name = f"tile/entries/{_index(n)}" + ("" if width == H else f".p/{width}")
        data = (root / name).read_bytes()
        i = 0
        while i < len(data):
            length = int.from_bytes(data[i : i + 2], "big")
            entries.append(data[i + 2 : i + 2 + length])
            i += 2 + length
    assert len(entries) == size
    rng = random.Random(24)  # noqa: S311 - which entries to prove, not a secret
    for m in rng.sample(range(size), min(100, size)):
        leaf = _sha(b"\x00" + entries[m])
        assert leaf == leaves[m]
        assert _root_from_path(m, size, leaf, _path(m, leaves)) == signed_root
