"""C2SP tlog-tiles: the Merkle tree as static hash tiles and entry bundles.

An exported dataset carries the log's tree in the layout any tlog-tiles client reads
(`tile/<L>/<N>[.p/<W>]`, `tile/entries/<N>[.p/<W>]`, beside the signed `checkpoint`),
so a third party can check inclusion and consistency without tracer.  Tiles are 256
hashes wide (height 8); a level-L hash is the RFC 6962 MTH of 256**L consecutive
leaves, and only full tiles are hashed into the level above, as the spec requires.
Entry bundles are big-endian uint16 length-prefixed entries, so an entry longer than
65535 bytes cannot be bundled: `TileError` names it rather than writing a bundle a
client would misread.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from store.errors import StoreError
from store.merkle import node_hash

__all__ = ["TILE_WIDTH", "TileError", "bundle", "entry_tile_path", "hash_tiles", "tile_path"]

TILE_WIDTH = 256
_MAX_ENTRY = 0xFFFF


class TileError(StoreError):
    """The log cannot be written as tlog-tiles (an entry too long for a bundle)."""


def _index_path(n: int) -> str:
    """`n` as zero-padded 3-digit elements, all but the last prefixed `x` (1234067 -> x001/x234/067)."""
    parts = []
    while True:
        parts.append(f"{n % 1000:03d}")
        n //= 1000
        if n == 0:
            break
    parts.reverse()
    return "/".join([f"x{p}" for p in parts[:-1]] + [parts[-1]])


def tile_path(level: int, n: int, width: int = TILE_WIDTH) -> str:
    suffix = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/{level}/{_index_path(n)}{suffix}"


def entry_tile_path(n: int, width: int = TILE_WIDTH) -> str:
    suffix = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/entries/{_index_path(n)}{suffix}"


def _tile_root(hashes: Sequence[bytes]) -> bytes:
    """MTH of a full tile's 256 hashes (a perfect subtree of height 8)."""
    level = list(hashes)
    while len(level) > 1:
        level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def hash_tiles(leaf_hashes: Sequence[bytes]) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of every hash tile of the tree over `leaf_hashes`, full and partial,
    level by level; the tiles a checkpoint of this size needs."""
    level = 0
    hashes: Sequence[bytes] = leaf_hashes
    while hashes:
        above: list[bytes] = []
        for n in range(0, len(hashes), TILE_WIDTH):
            tile = hashes[n : n + TILE_WIDTH]
            yield tile_path(level, n // TILE_WIDTH, len(tile)), b"".join(tile)
            if len(tile) == TILE_WIDTH:
                above.append(_tile_root(tile))
        hashes = above
        level += 1


def bundle(entries: Sequence[bytes | memoryview], first_seq: int) -> bytes:
    """One entry bundle: each entry as a big-endian uint16 length and its bytes (joined
    once: the entries are most of a log's size)."""
    parts: list[bytes | memoryview] = []
    for i, data in enumerate(entries):
        if len(data) > _MAX_ENTRY:
            raise TileError(
                f"log entry {first_seq + i} is {len(data)} bytes: a tlog-tiles entry bundle holds "
                f"entries of at most {_MAX_ENTRY} bytes"
            )
        parts += (len(data).to_bytes(2, "big"), data)
    return b"".join(parts)
