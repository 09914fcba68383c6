"""RFC 6962 / RFC 9162 Merkle hashing, pinned to the transparency-dev/merkle vectors.

The vectors come from transparency-dev/merkle `testonly/constants.go` and
`proof/verify_test.go`; matching them byte for byte is what makes our checkpoints
checkable by stock transparency-log tooling. The property tests compare against a
literal transcription of the RFC recursions, kept deliberately naive.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from functools import cache
from typing import overload

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.errors import StoreError
from store.merkle import (
    EMPTY_ROOT,
    LEAF_PREFIX,
    NODE_PREFIX,
    ProofError,
    ProofTree,
    RootAccumulator,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root,
    verify_consistency,
    verify_inclusion,
)


def h(hexstr: str) -> bytes:
    return bytes.fromhex(hexstr)


LEAF_INPUTS = [
    h(""),
    h("00"),
    h("10"),
    h("2021"),
    h("3031"),
    h("40414243"),
    h("5051525354555657"),
    h("606162636465666768696a6b6c6d6e6f"),
]
LEAVES = [leaf_hash(d) for d in LEAF_INPUTS]

NODE_HASHES = [
    [
        h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
        h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
        h("0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7"),
        h("07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7"),
        h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
        h("4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658"),
        h("b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f"),
        h("46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1"),
    ],
    [
        h("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"),
        h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
        h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
        h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
    ],
    [
        h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
        h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
    ],
    [
        h("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"),
    ],
]

EMPTY_TREE_HASH = h("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
SOME_HASH = h("abacaba000000000000000000000000000000000000000000060061e00123456")

# Indexed by tree size.
ROOTS = [
    EMPTY_TREE_HASH,
    h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
    h("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"),
    h("aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77"),
    h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
    h("4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4"),
    h("76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef"),
    h("ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c"),
    h("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"),
]

# verify_test.go numbers leaves from 1; these are 0-based indices.
INCLUSION_VECTORS: list[tuple[int, int, list[bytes]]] = [
    (0, 1, []),
    (
        0,
        8,
        [
            h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
        ],
    ),
    (
        5,
        8,
        [
            h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
            h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
        ],
    ),
    (
        2,
        3,
        [h("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125")],
    ),
    (
        1,
        5,
        [
            h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
        ],
    ),
]

CONSISTENCY_VECTORS: list[tuple[int, int, list[bytes]]] = [
    (1, 1, []),
    (
        1,
        8,
        [
            h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
        ],
    ),
    (
        6,
        8,
        [
            h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
            h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
        ],
    ),
    (
        2,
        5,
        [
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
        ],
    ),
    (
        6,
        7,
        [
            h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
            h("b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
        ],
    ),
]


def flip(value: bytes, bit: int = 3) -> bytes:
    return bytes([value[0] ^ (1 << bit)]) + value[1:]


# --- Naive RFC 9162 transcriptions, used only as an oracle ----------------------------


def ref_split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def ref_mth(d: Sequence[bytes]) -> bytes:
    n = len(d)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return d[0]
    k = ref_split(n)
    return hashlib.sha256(b"\x01" + ref_mth(d[:k]) + ref_mth(d[k:])).digest()


def ref_path(m: int, d: Sequence[bytes]) -> list[bytes]:
    n = len(d)
    if n == 1:
        return []
    k = ref_split(n)
    if m < k:
        return [*ref_path(m, d[:k]), ref_mth(d[k:])]
    return [*ref_path(m - k, d[k:]), ref_mth(d[:k])]


def ref_subproof(m: int, d: Sequence[bytes], b: bool) -> list[bytes]:
    n = len(d)
    if m == n:
        return [] if b else [ref_mth(d)]
    k = ref_split(n)
    if m <= k:
        return [*ref_subproof(m, d[:k], b), ref_mth(d[k:])]
    return [*ref_subproof(m - k, d[k:], False), ref_mth(d[:k])]


MAX_SIZE = 300
BIG_LEAVES = [leaf_hash(b"entry %d" % i) for i in range(MAX_SIZE)]


@cache
def prefix_root(size: int) -> bytes:
    return ref_mth(BIG_LEAVES[:size])


class NoSlices(Sequence[bytes]):
    """A Sequence that refuses slicing, to prove proofs are built without list copies."""

    def __init__(self, items: list[bytes]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._items)

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | Sequence[bytes]:
        if isinstance(i, slice):
            raise AssertionError("merkle code sliced the leaf sequence")
        return self._items[i]


# --- Hashing and roots ---------------------------------------------------------------


def test_constants() -> None:
    assert LEAF_PREFIX == b"\x00"
    assert NODE_PREFIX == b"\x01"
    assert EMPTY_ROOT == EMPTY_TREE_HASH == hashlib.sha256(b"").digest()
    assert issubclass(ProofError, StoreError)


def test_leaf_hashes_match_vectors() -> None:
    assert LEAVES == NODE_HASHES[0]


def test_node_hash_is_prefixed_and_ordered() -> None:
    a, b = LEAVES[0], LEAVES[1]
    assert node_hash(a, b) == hashlib.sha256(b"\x01" + a + b).digest()
    assert node_hash(a, b) == NODE_HASHES[1][0]
    assert node_hash(a, b) != node_hash(b, a)
    assert leaf_hash(b"") != EMPTY_ROOT


@pytest.mark.parametrize("level", range(1, 4))
def test_complete_subtree_hashes_match_vectors(level: int) -> None:
    width = 1 << level
    got = [root(LEAVES[i : i + width]) for i in range(0, 8, width)]
    assert got == NODE_HASHES[level]


@pytest.mark.parametrize("size", range(9))
def test_roots_match_vectors(size: int) -> None:
    assert root(LEAVES[:size]) == ROOTS[size]


def test_root_at_eight_leaves() -> None:
    assert root(LEAVES).hex() == "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"


def test_accumulator_matches_vectors_while_streaming() -> None:
    acc = RootAccumulator()
    assert acc.size == 0
    assert acc.root() == EMPTY_ROOT
    for i, leaf in enumerate(LEAVES):
        acc.append(leaf)
        assert acc.size == i + 1
        assert acc.root() == ROOTS[i + 1]
        assert acc.root() == ROOTS[i + 1]


def test_root_accepts_any_sequence_without_slicing() -> None:
    leaves = NoSlices(BIG_LEAVES[:77])
    assert root(leaves) == prefix_root(77)
    assert inclusion_proof(40, 77, leaves) == ref_path(40, BIG_LEAVES[:77])
    assert consistency_proof(13, 77, leaves) == ref_subproof(13, BIG_LEAVES[:77], True)


# --- RFC 9162 section 2.1.5 worked example (7 leaves) --------------------------------


def test_rfc9162_example_tree() -> None:
    a, b, c, d, e, f, j = LEAVES[:7]
    g, hh, i = node_hash(a, b), node_hash(c, d), node_hash(e, f)
    k, l_ = node_hash(g, hh), node_hash(i, j)
    assert node_hash(k, l_) == root(LEAVES[:7])

    assert inclusion_proof(0, 7, LEAVES) == [b, hh, l_]
    assert inclusion_proof(3, 7, LEAVES) == [c, g, l_]
    assert inclusion_proof(4, 7, LEAVES) == [f, j, k]
    assert inclusion_proof(6, 7, LEAVES) == [i, k]

    assert consistency_proof(3, 7, LEAVES) == [c, d, g, l_]
    assert consistency_proof(4, 7, LEAVES) == [l_]
    assert consistency_proof(6, 7, LEAVES) == [i, j, k]


# --- transparency-dev inclusion vectors ----------------------------------------------


def inclusion_probes(
    index: int, size: int, proof: list[bytes], root_: bytes, leaf: bytes
) -> list[tuple[str, int, int, bytes, list[bytes], bytes]]:
    """The corruptions from verify_test.go's corruptInclusionProof."""
    probes = [
        ("index - 1", index - 1, size, leaf, proof, root_),
        ("index + 1", index + 1, size, leaf, proof, root_),
        ("index ^ 2", index ^ 2, size, leaf, proof, root_),
        ("size * 2", index, size * 2, leaf, proof, root_),
        ("size // 2", index, size // 2, leaf, proof, root_),
        ("wrong leaf", index, size, b"WrongLeaf", proof, root_),
        ("wrong-size leaf", index, size, leaf[:-1], proof, root_),
        ("empty root", index, size, leaf, proof, EMPTY_TREE_HASH),
        ("random root", index, size, leaf, proof, SOME_HASH),
        ("trailing garbage", index, size, leaf, [*proof, b""], root_),
        ("trailing root", index, size, leaf, [*proof, root_], root_),
        ("preceding garbage", index, size, leaf, [b"", *proof], root_),
        ("preceding root", index, size, leaf, [root_, *proof], root_),
    ]
    for n in range(len(proof)):
        bad = list(proof)
        bad[n] = flip(bad[n])
        probes.append((f"proof[{n}] bit flipped", index, size, leaf, bad, root_))
    if proof:
        probes.append(("removed component", index, size, leaf, proof[:-1], root_))
    if len(proof) > 1:
        bad = [proof[0], SOME_HASH, *proof[1:]]
        probes.append(("inserted component", index, size, leaf, bad, root_))
    return probes


@pytest.mark.parametrize(("index", "size", "expected"), INCLUSION_VECTORS)
def test_inclusion_vectors(index: int, size: int, expected: list[bytes]) -> None:
    assert inclusion_proof(index, size, LEAVES) == expected
    verify_inclusion(index, size, LEAVES[index], expected, ROOTS[size])
    for desc, i, n, leaf, proof, root_ in inclusion_probes(index, size, expected, ROOTS[size], LEAVES[index]):
        with pytest.raises(ProofError):
            verify_inclusion(i, n, leaf, proof, root_)
            pytest.fail(f"verified despite {desc}")


def test_inclusion_single_entry() -> None:
    leaf = leaf_hash(b"data")
    verify_inclusion(0, 1, leaf, [], leaf)
    for bad_leaf, bad_root in [(leaf, b""), (b"", leaf), (b"", b"")]:
        with pytest.raises(ProofError):
            verify_inclusion(0, 1, bad_leaf, [], bad_root)


@pytest.mark.parametrize(("index", "size"), [(0, 0), (1, 1), (2, 1), (-1, 4), (4, 4)])
def test_inclusion_index_out_of_range(index: int, size: int) -> None:
    with pytest.raises(ProofError):
        verify_inclusion(index, size, SOME_HASH, [], EMPTY_TREE_HASH)
    with pytest.raises(ProofError):
        inclusion_proof(index, size, LEAVES)


def test_inclusion_proof_size_beyond_leaves() -> None:
    with pytest.raises(ProofError):
        inclusion_proof(0, 9, LEAVES)


# --- transparency-dev consistency vectors --------------------------------------------


def consistency_probes(
    size1: int, size2: int, root1: bytes, root2: bytes, proof: list[bytes]
) -> list[tuple[str, int, int, bytes, bytes, list[bytes]]]:
    """The corruptions from verify_test.go's corruptConsistencyProof."""
    probes = [
        ("size1 - 1", size1 - 1, size2, root1, root2, proof),
        ("size1 + 1", size1 + 1, size2, root1, root2, proof),
        ("size1 ^ 2", size1 ^ 2, size2, root1, root2, proof),
        ("size2 * 2", size1, size2 * 2, root1, root2, proof),
        ("size2 // 2", size1, size2 // 2, root1, root2, proof),
        ("wrong root1", size1, size2, b"WrongRoot", root2, proof),
        ("wrong root2", size1, size2, root1, b"WrongRoot", proof),
        ("flipped root1", size1, size2, flip(root1), root2, proof),
        ("flipped root2", size1, size2, root1, flip(root2), proof),
        ("swapped roots", size1, size2, root2, root1, proof),
        ("empty proof", size1, size2, root1, root2, []),
        ("trailing garbage", size1, size2, root1, root2, [*proof, b""]),
        ("trailing root1", size1, size2, root1, root2, [*proof, root1]),
        ("trailing root2", size1, size2, root1, root2, [*proof, root2]),
        ("preceding garbage", size1, size2, root1, root2, [b"", *proof]),
        ("preceding root1", size1, size2, root1, root2, [root1, *proof]),
        ("preceding root2", size1, size2, root1, root2, [root2, *proof]),
        ("preceding proof[0]", size1, size2, root1, root2, [proof[0], *proof]),
        ("truncated proof", size1, size2, root1, root2, proof[:-1]),
    ]
    for n in range(len(proof)):
        bad = list(proof)
        bad[n] = flip(bad[n], 4)
        probes.append((f"proof[{n}] bit flipped", size1, size2, root1, root2, bad))
    return probes


@pytest.mark.parametrize(("size1", "size2", "expected"), CONSISTENCY_VECTORS)
def test_consistency_vectors(size1: int, size2: int, expected: list[bytes]) -> None:
    assert consistency_proof(size1, size2, LEAVES) == expected
    verify_consistency(size1, size2, ROOTS[size1], ROOTS[size2], expected)
    if not expected:
        return
    for desc, s1, s2, r1, r2, proof in consistency_probes(size1, size2, ROOTS[size1], ROOTS[size2], expected):
        with pytest.raises(ProofError):
            verify_consistency(s1, s2, r1, r2, proof)
            pytest.fail(f"verified despite {desc}")


R1 = ROOTS[3]
R2 = ROOTS[5]


@pytest.mark.parametrize(
    ("size1", "size2", "root1", "root2", "proof"),
    [
        (0, 0, R1, R2, []),
        (1, 1, R1, R2, []),
        (2, 1, R1, R2, []),
        (1, 0, R1, R2, []),
        (1, 2, R1, R2, []),
        (0, 0, EMPTY_TREE_HASH, R2, []),
        (1, 1, EMPTY_TREE_HASH, R2, []),
        (0, 0, EMPTY_TREE_HASH, EMPTY_TREE_HASH, [EMPTY_TREE_HASH]),
        (0, 1, EMPTY_TREE_HASH, EMPTY_TREE_HASH, [EMPTY_TREE_HASH]),
        (1, 1, EMPTY_TREE_HASH, EMPTY_TREE_HASH, [EMPTY_TREE_HASH]),
        (0, 5, R1, R2, []),
        (-1, 5, R1, R2, []),
        (3, 5, b"short", R2, [R1]),
    ],
)
def test_consistency_rejects(size1: int, size2: int, root1: bytes, root2: bytes, proof: list[bytes]) -> None:
    with pytest.raises(ProofError):
        verify_consistency(size1, size2, root1, root2, proof)


def test_consistency_trivial_cases() -> None:
    verify_consistency(0, 0, EMPTY_TREE_HASH, EMPTY_TREE_HASH, [])
    verify_consistency(0, 5, EMPTY_TREE_HASH, R2, [])
    verify_consistency(1, 1, R2, R2, [])
    assert consistency_proof(5, 5, LEAVES) == []


@pytest.mark.parametrize(("old", "new"), [(0, 5), (-1, 5), (6, 5), (3, 9)])
def test_consistency_proof_bad_sizes(old: int, new: int) -> None:
    with pytest.raises(ProofError):
        consistency_proof(old, new, LEAVES)


# --- Properties over random trees ----------------------------------------------------

sizes = st.integers(min_value=1, max_value=MAX_SIZE)
fast = settings(max_examples=60, deadline=None)


@fast
@given(size=sizes)
def test_accumulator_equals_root_at_every_prefix(size: int) -> None:
    acc = RootAccumulator()
    for n, leaf in enumerate(BIG_LEAVES[:size], start=1):
        acc.append(leaf)
        assert acc.size == n
        assert acc.root() == prefix_root(n)
    assert root(BIG_LEAVES[:size]) == prefix_root(size)


@fast
@given(data=st.data(), size=sizes)
def test_inclusion_proofs_verify_and_resist_tampering(data: st.DataObject, size: int) -> None:
    indices = data.draw(
        st.lists(st.integers(0, size - 1), min_size=1, max_size=12, unique=True), label="indices"
    )
    root_ = prefix_root(size)
    for index in indices:
        leaf = BIG_LEAVES[index]
        proof = inclusion_proof(index, size, BIG_LEAVES)
        assert proof == ref_path(index, BIG_LEAVES[:size])
        verify_inclusion(index, size, leaf, proof, root_)

        for n in range(len(proof)):
            bad = list(proof)
            bad[n] = flip(bad[n])
            with pytest.raises(ProofError):
                verify_inclusion(index, size, leaf, bad, root_)
        with pytest.raises(ProofError):
            verify_inclusion(index, size, flip(leaf), proof, root_)
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaf, proof, flip(root_))
        other = data.draw(st.integers(-1, size).filter(index.__ne__), label="other")
        with pytest.raises(ProofError):
            verify_inclusion(other, size, leaf, proof, root_)
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaf, [*proof, SOME_HASH], root_)
        if proof:
            with pytest.raises(ProofError):
                verify_inclusion(index, size, leaf, proof[:-1], root_)


@fast
@given(data=st.data(), new=sizes)
def test_consistency_proofs_verify_and_resist_tampering(data: st.DataObject, new: int) -> None:
    old = data.draw(st.integers(1, new), label="old")
    old_root, new_root = prefix_root(old), prefix_root(new)
    proof = consistency_proof(old, new, BIG_LEAVES)
    assert proof == ref_subproof(old, BIG_LEAVES[:new], True)
    verify_consistency(old, new, old_root, new_root, proof)

    for n in range(len(proof)):
        bad = list(proof)
        bad[n] = flip(bad[n], 4)
        with pytest.raises(ProofError):
            verify_consistency(old, new, old_root, new_root, bad)
    with pytest.raises(ProofError):
        verify_consistency(old, new, flip(old_root), new_root, proof)
    with pytest.raises(ProofError):
        verify_consistency(old, new, old_root, flip(new_root), proof)
    with pytest.raises(ProofError):
        verify_consistency(old, new, old_root, new_root, [*proof, SOME_HASH])
    if old != new:
        with pytest.raises(ProofError):
            verify_consistency(old, new, new_root, old_root, proof)
        with pytest.raises(ProofError):
            verify_consistency(old, new, old_root, new_root, proof[:-1])


@fast
@given(data=st.data(), new=st.integers(2, MAX_SIZE))
def test_consistency_rejects_a_rewritten_history(data: st.DataObject, new: int) -> None:
    """A log that changed an old entry must not prove consistent with its old checkpoint."""
    old = data.draw(st.integers(1, new - 1), label="old")
    victim = data.draw(st.integers(0, old - 1), label="victim")
    forged = list(BIG_LEAVES[:new])
    forged[victim] = leaf_hash(b"forged")
    proof = consistency_proof(old, new, forged)
    with pytest.raises(ProofError):
        verify_consistency(old, new, prefix_root(old), root(forged), proof)


def test_large_tree_streaming_checkpoints() -> None:
    size = (1 << 14) + 5
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(size)]
    checkpoints = {1, 2, 3, 1 << 10, (1 << 13) + 1, 1 << 14, size}
    acc = RootAccumulator()
    seen: dict[int, bytes] = {}
    for leaf in leaves:
        acc.append(leaf)
        if acc.size in checkpoints:
            seen[acc.size] = acc.root()
    for n, r in seen.items():
        assert r == root(leaves[:n])
    full = seen[size]
    assert full == node_hash(root(leaves[: 1 << 14]), root(leaves[1 << 14 :]))
    for n in sorted(seen):
        verify_consistency(n, size, seen[n], full, consistency_proof(n, size, leaves))
    for index in (0, 4095, (1 << 14) - 1, 1 << 14, size - 1):
        verify_inclusion(index, size, leaves[index], inclusion_proof(index, size, leaves), full)


@fast
@given(data=st.data(), size=sizes)
def test_proof_tree_gives_the_same_proofs_and_root(data: st.DataObject, size: int) -> None:
    tree = ProofTree(BIG_LEAVES, size)
    assert tree.root() == prefix_root(size)
    indices = data.draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=20), label="indices")
    for index in indices:  # repeated indices read the remembered subtrees
        proof = tree.inclusion_proof(index)
        assert proof == inclusion_proof(index, size, BIG_LEAVES)
        verify_inclusion(index, size, BIG_LEAVES[index], proof, prefix_root(size))


def test_proof_tree_refuses_what_inclusion_proof_refuses() -> None:
    with pytest.raises(ProofError):
        ProofTree(LEAVES, len(LEAVES) + 1)
    tree = ProofTree(LEAVES, 5)
    for bad in (-1, 5, 8):
        with pytest.raises(ProofError):
            tree.inclusion_proof(bad)
    assert ProofTree([], 0).root() == EMPTY_ROOT


def test_proof_tree_hashes_each_large_subtree_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proofs for every leaf of a 4,000-leaf tree: one pass over the tree plus a bounded
    walk per proof, where `inclusion_proof` rehashes the whole tree for each."""
    import store.merkle as merkle_mod

    size = 4000
    leaves = [leaf_hash(b"big %d" % i) for i in range(size)]
    calls = 0
    real = merkle_mod._sha256

    def counting(data: bytes = b"") -> hashlib._Hash:
        nonlocal calls
        calls += 1
        return real(data)

    monkeypatch.setattr(merkle_mod, "_sha256", counting)
    tree = ProofTree(leaves, size)
    for index in range(0, size, 10):
        tree.inclusion_proof(index)
    proofs = size // 10
    assert calls <= 2 * size + proofs * 2 * 64
    calls = 0
    inclusion_proof(0, size, leaves)
    assert calls >= size - 64  # one proof alone hashes nearly every interior node
