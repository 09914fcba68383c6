"""Merkle tree hashing, inclusion and consistency proofs: RFC 6962 section 2.1, as restated
by RFC 9162 section 2.1 (Certificate Transparency 2.0), with SHA-256.

The evidence log is only worth anything if a third party can check it with a stock
transparency-log verifier, so the tree shape, the 0x00/0x01 domain separation and the proof
encodings follow the RFCs exactly rather than anything convenient here. The domain
separation is what stops a leaf from being passed off as an interior node (a second
preimage of the tree).

Construction functions take leaf hashes (already `leaf_hash`ed), not raw entries, so the
store can keep and stream a column of 32-byte hashes without rereading entry bodies.
Verification fails closed: every failure raises `ProofError`, so a forgotten return value
can never read as "verified".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from store.errors import StoreError

__all__ = [
    "EMPTY_ROOT",
    "LEAF_PREFIX",
    "NODE_PREFIX",
    "ProofError",
    "ProofTree",
    "RootAccumulator",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root",
    "verify_consistency",
    "verify_inclusion",
]

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
_HASH_SIZE = 32

EMPTY_ROOT = hashlib.sha256(b"").digest()

_sha256 = hashlib.sha256


class ProofError(StoreError):
    """A proof, root or tree size that does not check out.

    Raised both for malformed input and for a proof that simply fails, because to the
    caller both mean the same thing: the log cannot be shown to contain what it claims.
    """

    hint = "the log does not match the checkpoint; keep both files unchanged for inspection"


def leaf_hash(data: bytes | memoryview) -> bytes:
    """RFC 9162 MTH of a one-entry list; the prefix keeps leaves apart from interior nodes."""
    return _sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """Interior node hash; order matters, which is how proofs encode position."""
    return _sha256(NODE_PREFIX + left + right).digest()


def _fold_stack(stack: Sequence[bytes]) -> bytes:
    """Join the perfect subtrees of a compact range, smallest (rightmost) first.

    An RFC tree splits at the largest power of two below its size, so its perfect left
    subtrees are exactly the binary digits of the size and hashing them right to left
    reproduces MTH without holding the leaves.
    """
    if not stack:
        return EMPTY_ROOT
    acc = stack[-1]
    for i in range(len(stack) - 2, -1, -1):
        acc = _sha256(NODE_PREFIX + stack[i] + acc).digest()
    return acc


def _range_root(hashes: Iterable[bytes]) -> bytes:
    """MTH over an iterable of leaf hashes in one pass with O(log n) memory."""
    stack: list[bytes] = []
    count = 0
    sha256 = _sha256
    prefix = NODE_PREFIX
    for h in hashes:
        count += 1
        merges = count
        while not merges & 1:
            h = sha256(prefix + stack.pop() + h).digest()
            merges >>= 1
        stack.append(h)
    return _fold_stack(stack)


def _subtree(leaf_hashes: Sequence[bytes], start: int, end: int) -> bytes:
    return _range_root(map(leaf_hashes.__getitem__, range(start, end)))


def root(leaf_hashes: Sequence[bytes]) -> bytes:
    """RFC 9162 MTH(D[n]) over leaf hashes, streaming so a million leaves stay cheap."""
    return _range_root(leaf_hashes)


class RootAccumulator:
    """Streaming MTH: one pass over the log can check every historical checkpoint.

    Only the perfect subtrees of the current size are kept (one per set bit of `size`),
    so memory stays O(log n) and `root()` costs O(log n) at any point without disturbing
    later appends.
    """

    __slots__ = ("_size", "_stack")

    def __init__(self) -> None:
        self._stack: list[bytes] = []
        self._size = 0

    @property
    def size(self) -> int:
        return self._size

    def append(self, leaf_hash: bytes) -> None:
        self._size += 1
        merges = self._size
        stack = self._stack
        h = leaf_hash
        while not merges & 1:
            h = _sha256(NODE_PREFIX + stack.pop() + h).digest()
            merges >>= 1
        stack.append(h)

    def root(self) -> bytes:
        return _fold_stack(self._stack)

    def copy(self) -> RootAccumulator:
        """An independent accumulator at the same size (a write batch may still fail)."""
        other = RootAccumulator()
        other._stack = list(self._stack)
        other._size = self._size
        return other


def _split(n: int) -> int:
    """RFC 9162 k: the largest power of two strictly less than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _check_sizes(size: int, available: int) -> None:
    if size > available:
        raise ProofError(f"tree size {size} exceeds the {available} leaf hashes supplied")


def inclusion_proof(index: int, size: int, leaf_hashes: Sequence[bytes]) -> list[bytes]:
    """RFC 9162 2.1.3.1 PATH(index, D[size]), leaf-side sibling first.

    Walks down from the root and hashes each sibling subtree once; the siblings partition
    the tree, so the whole proof costs O(size) hashing and no list copies.
    """
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    _check_sizes(size, len(leaf_hashes))
    path: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        mid = lo + _split(hi - lo)
        if index < mid:
            path.append(_subtree(leaf_hashes, mid, hi))
            hi = mid
        else:
            path.append(_subtree(leaf_hashes, lo, mid))
            lo = mid
    path.reverse()
    return path


#: subtrees of fewer leaves are hashed afresh: remembering them would hold ~2 hashes per
#: leaf for little gain, while bigger ones are shared by the proofs of every leaf below them
_MEMO_MIN = 64


class ProofTree:
    """Many inclusion proofs against one tree of `size` leaves.

    `inclusion_proof` hashes every sibling subtree from its leaves, O(size) per proof, so
    a pack citing a share of the log paid O(size) per record. Here each subtree of at
    least `_MEMO_MIN` leaves is hashed once and remembered (RFC 9162 splits a subtree at
    the same point whichever proof asks), so k proofs cost O(size + k * (log size +
    _MEMO_MIN)) hashes, with the same bytes as `inclusion_proof`.
    """

    __slots__ = ("_leaves", "_memo", "size")

    def __init__(self, leaf_hashes: Sequence[bytes], size: int) -> None:
        _check_sizes(size, len(leaf_hashes))
        self._leaves = leaf_hashes
        self._memo: dict[tuple[int, int], bytes] = {}
        self.size = size

    def _node(self, lo: int, hi: int) -> bytes:
        if hi - lo < _MEMO_MIN:
            return _subtree(self._leaves, lo, hi)
        key = (lo, hi)
        found = self._memo.get(key)
        if found is None:
            mid = lo + _split(hi - lo)
            found = node_hash(self._node(lo, mid), self._node(mid, hi))
            self._memo[key] = found
        return found

    def root(self) -> bytes:
        return self._node(0, self.size) if self.size else EMPTY_ROOT

    def inclusion_proof(self, index: int) -> list[bytes]:
        """RFC 9162 PATH(index, D[size]), as `inclusion_proof` computes it."""
        if not 0 <= index < self.size:
            raise ProofError(f"leaf index {index} is outside a tree of size {self.size}")
        path: list[bytes] = []
        lo, hi = 0, self.size
        while hi - lo > 1:
            mid = lo + _split(hi - lo)
            if index < mid:
                path.append(self._node(mid, hi))
                hi = mid
            else:
                path.append(self._node(lo, mid))
                lo = mid
        path.reverse()
        return path


def consistency_proof(old_size: int, new_size: int, leaf_hashes: Sequence[bytes]) -> list[bytes]:
    """RFC 9162 2.1.4.1 PROOF(old_size, D[new_size]); empty when the sizes are equal.

    SUBPROOF is unrolled into a loop over index bounds, so like `inclusion_proof` it
    hashes each leaf at most twice and never copies the leaf list.
    """
    if not 0 < old_size <= new_size:
        raise ProofError(f"consistency proof needs 0 < old size <= new size, got {old_size} and {new_size}")
    _check_sizes(new_size, len(leaf_hashes))
    path: list[bytes] = []
    lo, hi = 0, new_size
    m = old_size
    old_is_whole_subtree = True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            path.append(_subtree(leaf_hashes, lo + k, hi))
            hi = lo + k
        else:
            path.append(_subtree(leaf_hashes, lo, lo + k))
            lo += k
            m -= k
            old_is_whole_subtree = False
    if not old_is_whole_subtree:
        path.append(_subtree(leaf_hashes, lo, hi))
    path.reverse()
    return path


def _check_hash(name: str, value: bytes) -> None:
    if len(value) != _HASH_SIZE:
        raise ProofError(f"{name} is {len(value)} bytes, expected a {_HASH_SIZE}-byte SHA-256")


def verify_inclusion(index: int, size: int, leaf_hash: bytes, proof: Sequence[bytes], root: bytes) -> None:
    """RFC 9162 2.1.3.2: prove `leaf_hash` sits at `index` in the tree of `size` with `root`.

    Raises ProofError on any mismatch, including wrong sizes or trailing proof elements.
    """
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    _check_hash("leaf hash", leaf_hash)
    _check_hash("root", root)
    fn, sn = index, size - 1
    r = leaf_hash
    for i, p in enumerate(proof):
        _check_hash(f"inclusion proof[{i}]", p)
        if sn == 0:
            raise ProofError(f"inclusion proof has {len(proof)} hashes, more than size {size}")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"inclusion proof has {len(proof)} hashes, too few for size {size}")
    if r != root:
        raise ProofError(f"inclusion proof for leaf {index} of {size} does not reproduce the root")


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """RFC 9162 2.1.4.2: prove the tree of `new_size` extends the tree of `old_size`.

    Equal sizes need equal roots and an empty proof; an empty old tree is a prefix of
    every tree, so it needs an empty proof and the empty root. Raises ProofError otherwise.
    """
    if not 0 <= old_size <= new_size:
        raise ProofError(f"sizes must satisfy 0 <= old <= new, got {old_size} and {new_size}")
    _check_hash("old root", old_root)
    _check_hash("new root", new_root)
    if old_size == new_size:
        _verify_equal_sizes(old_size, old_root, new_root, proof)
        return
    if old_size == 0:
        _verify_from_empty(old_root, proof)
        return
    if not proof:
        raise ProofError(f"empty consistency proof from size {old_size} to {new_size}")
    for i, p in enumerate(proof):
        _check_hash(f"consistency proof[{i}]", p)
    # step 2: when the old size is a power of two, the old root is the path's first node
    path: Sequence[bytes] = [old_root, *proof] if old_size & (old_size - 1) == 0 else proof
    fr, sr = _consistency_roots(old_size, new_size, path)
    # step 7: both recomputed roots must be the claimed ones
    if fr != old_root:
        raise ProofError(f"consistency proof does not reproduce the root of size {old_size}")
    if sr != new_root:
        raise ProofError(f"consistency proof does not reproduce the root of size {new_size}")


def _verify_equal_sizes(size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]) -> None:
    """A tree is consistent with itself only through an empty proof and one root."""
    if proof:
        raise ProofError("consistency proof between equal sizes must be empty")
    if old_root != new_root:
        raise ProofError(f"two different roots claimed for tree size {size}")


def _verify_from_empty(old_root: bytes, proof: Sequence[bytes]) -> None:
    """The empty tree is a prefix of every tree: no proof, and the empty-tree hash as its root."""
    if proof:
        raise ProofError("consistency proof from the empty tree must be empty")
    if old_root != EMPTY_ROOT:
        raise ProofError("old root for tree size 0 is not the empty-tree hash")


def _consistency_roots(old_size: int, new_size: int, path: Sequence[bytes]) -> tuple[bytes, bytes]:
    """RFC 9162 2.1.4.2 steps 3-6 and step 7's `sn == 0`: the roots (fr, sr) `path` recomputes.

    Raises ProofError when the path has more or fewer hashes than the two sizes need.
    """
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError(f"consistency proof {old_size}->{new_size} has too many hashes")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"consistency proof {old_size}->{new_size} has too few hashes")
    return fr, sr
