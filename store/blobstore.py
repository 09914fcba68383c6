"""The vault's encrypted texts (`blobs`) and their wrapped data keys (`data_keys`).

Reads only. Rows are added by `store.batch.Batch` and removed only by a purge, which
appends its tombstone in the same transaction. This object owns the one cache over
those rows, the in-memory digest index a read pass may build; every write drops it.
"""

from __future__ import annotations

import itertools
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import duckdb

from store.rows import BlobRow, DataKeyRow, StoredBlob
from store.vaultfile import INDEX_CHUNK, join_wanted

__all__ = ["BlobStore"]

_WANT = itertools.count()
#: up to this many digests are looked up through the digest index, more by one join
_POINT_LOOKUPS = 1024
#: up to this many digests are looked up a chunk at a time; a longer list is one query
_CHUNKED = 480


class BlobStore:
    """Encrypted texts by digest and collection, and the data keys that open them."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self._index: _BlobIndex | None = None

    def drop_index(self) -> None:
        """Forget the digest index: the rows it describes are about to change."""
        self._index = None

    def rows(self, digest: str) -> list[BlobRow]:
        """The copies held for a digest, by collection."""
        rows = self._con.execute(
            "SELECT collection, dk_id, nonce, ct FROM blobs WHERE digest = ? ORDER BY collection",
            [digest],
        ).fetchall()
        return [BlobRow(str(c), str(k), bytes(n), bytes(t)) for c, k, n, t in rows]

    def rows_many(self, digests: Sequence[str]) -> dict[str, list[BlobRow]]:
        """`rows` for many digests in a few queries; digests with no row are absent."""
        out: dict[str, list[BlobRow]] = {}
        wanted = sorted(set(digests))
        if not wanted:
            return out
        # Two steps: find the rows by scanning the digest column only, then fetch just
        # those rows; one join would read every stored ciphertext to select a few.
        if self._index is not None:
            rowids = self._index.rowids(wanted)
        elif len(wanted) <= _POINT_LOOKUPS:
            return self._looked_up(wanted)
        else:
            rowids = sorted(
                int(r[0])
                for r in join_wanted(
                    self._con, wanted, "SELECT rowid FROM blobs WHERE digest IN (SELECT digest FROM {want})"
                )
            )
        if not rowids:
            return out
        rows = self._con.execute(
            "SELECT digest, collection, dk_id, nonce, ct FROM blobs WHERE rowid = ANY(?) "
            "ORDER BY digest, collection",
            [rowids],
        ).fetchall()
        want = set(wanted)
        for d, c, k, n, t in rows:
            if d in want:  # an index prefix may be shared by another digest
                out.setdefault(str(d), []).append(BlobRow(str(c), str(k), bytes(n), bytes(t)))
        return out

    def _looked_up(self, wanted: list[str]) -> dict[str, list[BlobRow]]:
        """`rows_many` for a few digests (a trace's texts), through the digest index (RAW_INDEXES)."""
        step = INDEX_CHUNK if len(wanted) <= _CHUNKED else len(wanted)
        found: list[tuple[str, str, str, bytes, bytes]] = []
        for i in range(0, len(wanted), step):
            found += self._con.execute(
                "SELECT digest, collection, dk_id, nonce, ct FROM blobs WHERE digest = ANY(?)",
                [wanted[i : i + step]],
            ).fetchall()
        out: dict[str, list[BlobRow]] = {}
        # sorted here, not in SQL: an ORDER BY costs this index lookup more than the rows it sorts
        for d, c, k, n, t in sorted(found, key=lambda r: (str(r[0]), str(r[1]))):
            out.setdefault(str(d), []).append(BlobRow(str(c), str(k), bytes(n), bytes(t)))
        return out

    @contextmanager
    def index(self) -> Iterator[None]:
        """Look blobs up through an in-memory digest index for the length of a read pass.

        DuckDB answers `digest IN (...)` by scanning every digest, so a pass that reads
        texts page by page (verify, revalidate) grows with pages x blobs.  The index is a
        sorted array of 64-bit digest prefixes with their rowids (16 bytes a blob); any
        write through `Vault.batch` drops it, so it never outlives the rows it describes.
        """
        self._index = _BlobIndex.build(self._con)
        try:
            yield
        finally:
            self._index = None

    @property
    def indexed(self) -> bool:
        """Whether a read pass's digest index is in force (tests check a write drops it)."""
        return self._index is not None

    def batches(self, dk_ids: Sequence[str], rows_per_batch: int = 4096) -> Iterator[list[StoredBlob]]:
        """Every stored copy under one of `dk_ids`,
        streamed in batches (unordered), so the whole blob store is never in memory."""
        if not dk_ids:
            return
        import pyarrow as pa  # a bulk read only: a trace never loads Arrow

        name = f"_want_{next(_WANT)}"
        self._con.register(name, pa.table({"dk_id": pa.array(sorted(set(dk_ids)), pa.string())}))
        try:
            reader = self._con.sql(
                "SELECT digest, collection, dk_id, nonce, ct FROM blobs "  # noqa: S608
                f"WHERE dk_id IN (SELECT dk_id FROM {name})"
            ).to_arrow_reader(rows_per_batch)
            for batch in reader:
                cols = batch.to_pydict()
                yield list(
                    map(
                        StoredBlob,
                        cols["digest"],
                        cols["collection"],
                        cols["dk_id"],
                        cols["nonce"],
                        cols["ct"],
                    )
                )
        finally:
            reader = None  # the streaming result must be gone before the next query
            self._con.unregister(name)

    def first_copies(self, dk_ids: Sequence[str]) -> dict[str, str]:
        """digest -> first collection (by name) for digests stored more than once under
        `dk_ids`: which copy `DataKeys.decrypt` would read."""
        if not dk_ids:
            return {}
        rows = join_wanted(
            self._con,
            sorted(set(dk_ids)),
            "SELECT digest, min(collection) FROM blobs WHERE dk_id IN (SELECT digest FROM {want}) "
            "GROUP BY digest HAVING count(*) > 1",
        )
        return {str(d): str(c) for d, c in rows}

    def data_key_rows(self, recipient: str) -> list[DataKeyRow]:
        """The data keys wrapped to `recipient`."""
        rows = self._con.execute(
            "SELECT dk_id, collection, generation, wrapped FROM data_keys WHERE recipient = ?",
            [recipient],
        ).fetchall()
        return [DataKeyRow(str(a), str(b), int(c), str(d)) for a, b, c, d in rows]


class _BlobIndex:
    """Sorted 64-bit digest prefixes and the rowids of their blobs."""

    def __init__(self, prefixes: array[int], rowids: array[int]) -> None:
        self.prefixes = prefixes
        self.rowids_ = rowids

    @classmethod
    def build(cls, con: duckdb.DuckDBPyConnection) -> _BlobIndex:
        prefixes: array[int] = array("Q")
        rowids: array[int] = array("q")
        reader = con.sql("SELECT digest, rowid FROM blobs ORDER BY digest, rowid").to_arrow_reader(65536)
        try:
            for batch in reader:
                digests, ids = batch.column(0).to_pylist(), batch.column(1).to_pylist()
                for d, r in zip(digests, ids, strict=True):
                    prefixes.append(_prefix(d))
                    rowids.append(int(r))
        finally:
            reader = None
        return cls(prefixes, rowids)

    def rowids(self, digests: Sequence[str]) -> list[int]:
        out: list[int] = []
        prefixes, ids = self.prefixes, self.rowids_
        for d in digests:
            p = _prefix(d)
            i = bisect_left(prefixes, p)
            while i < len(prefixes) and prefixes[i] == p:
                out.append(ids[i])
                i += 1
        out.sort()
        return out


def _prefix(digest: str) -> int:
    """The first 64 bits of a hex digest; anything else (never stored) maps to 0."""
    try:
        return int(digest[:16], 16) if len(digest) >= 16 else 0
    except ValueError:
        return 0
