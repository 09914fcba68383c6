"""An exported dataset on disk: the log as Parquet, tlog-tiles, texts, and the DuckDB reads.

Layout of an export directory (docs/formats.md, "Exported datasets"):

    log.parquet            seq, entry (exact bytes), leaf_hash, kind, signer
                           row group g holds entries g*G .. g*G+G-1 (G a power of two)
    checkpoints.parquet    every stored checkpoint note, as the vault holds them
    checkpoint             the signed note the tiles are the tree of (C2SP tlog-tiles)
    tile/...               hash tiles at every level and entry bundles (`store.tiles`)
    references.parquet     seq, answer_id, passage_id, role, digest, collection
    texts/NNNN.parquet     one file per collection: digest, collection, dk_id, state, text|ct
    data_keys.parquet      (ciphertext exports) wrapped data keys, as the vault holds them
    manifest.json          the dataset manifest: every file with its SHA-256, the checkpoint
    manifest.dsse.json     DSSE envelope over manifest.json by the exporting key

Everything is written in a fixed order with fixed Parquet options, so two exports of
the same vault by the same key differ only in `manifest.dsse.json`'s signature.  The
reader side runs in DuckDB (it reads the files as Arrow; the verifier recomputes the
leaves and picks out the statements in Python, with the one parser of signed bytes)
and hands slices of the log it read to the worker processes; nothing here decides
what a row means.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from store.errors import StoreError
from store.rows import StoredBlob
from store.rowtables import RowsTable, insert_rows, insert_table, rows_table
from store.schema import VIEW_COLUMNS
from store.vault import Vault
from store.views import Rows
from store.words import TextVerdict

if TYPE_CHECKING:
    from store.audit import DigestVerdict

__all__ = [
    "CHECKPOINTS_FILE",
    "DATA_KEYS_FILE",
    "DSSE_FILE",
    "FORMAT",
    "LOG_COLUMNS",
    "LOG_FILE",
    "MANIFEST_FILE",
    "PAYLOAD_TYPE",
    "REFERENCES_FILE",
    "TOMBSTONES_FILE",
    "DatasetError",
    "DatasetReader",
    "EntryChunk",
    "log_schema",
    "reference_rows",
    "sha256_file",
    "text_rows",
    "write_table",
]

FORMAT = "tracer-dataset/1"
PAYLOAD_TYPE = "application/vnd.tracer.dataset.v1+json"
LOG_FILE = "log.parquet"
CHECKPOINTS_FILE = "checkpoints.parquet"
REFERENCES_FILE = "references.parquet"
TOMBSTONES_FILE = "tombstones.parquet"
DATA_KEYS_FILE = "data_keys.parquet"
MANIFEST_FILE = "manifest.json"
DSSE_FILE = "manifest.dsse.json"
#: the log's columns, as the per-entry checks read them
LOG_COLUMNS = ("seq", "kind", "entry", "leaf_hash", "signer")


class DatasetError(StoreError):
    """An export directory that cannot be read as a dataset (a file missing or not Parquet)."""

    hint = "check the directory is a complete `tracer export-dataset` output"


def log_schema() -> pa.Schema:
    return pa.schema(
        [
            ("seq", pa.int64()),
            ("entry", pa.binary()),
            ("leaf_hash", pa.binary()),
            ("kind", pa.string()),
            ("signer", pa.string()),
        ]
    )


def write_table(path: Path, table: pa.Table, row_group_size: int | None = None) -> None:
    """Parquet with fixed options (no statistics that depend on the writer's clock), so
    the same table writes the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        table,
        path,
        row_group_size=row_group_size or max(table.num_rows, 1),
        compression="zstd",
        use_dictionary=False,
        write_statistics=True,
        store_schema=True,
    )


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def reference_rows(vault: Vault) -> pa.Table:
    """The references as the vault's derived views hold them (answer, passage, field,
    digest, collection), in (seq, digest, role) order.  Untrusted: `verify-dataset`
    derives them again from the log and reports any row that differs."""
    return vault.con.sql(
        """
        SELECT d.seq, a.answer_id, p.passage_id, d.role, d.digest, d.collection
        FROM v_digests d
        LEFT JOIN v_answers a ON a.seq = d.seq
        LEFT JOIN (
            SELECT seq, retrieved_sha256 AS dg, passage_id FROM v_passages
            UNION ALL
            SELECT seq, model_input_sha256 AS dg, passage_id FROM v_passages
        ) p ON p.seq = d.seq AND p.dg = d.digest
        QUALIFY row_number() OVER (PARTITION BY d.seq, d.digest, d.role ORDER BY p.passage_id) = 1
        ORDER BY d.seq, d.digest, d.role
        """
    ).to_arrow_table()


def text_rows(vault: Vault) -> Iterator[StoredBlob]:
    """Every stored blob row in (collection, digest) order."""
    reader = vault.con.sql(
        "SELECT collection, digest, dk_id, nonce, ct FROM blobs ORDER BY collection, digest"
    ).to_arrow_reader(4096)
    for batch in reader:
        cols = batch.to_pydict()
        yield from map(
            StoredBlob, cols["digest"], cols["collection"], cols["dk_id"], cols["nonce"], cols["ct"]
        )


def data_key_table(vault: Vault) -> pa.Table:
    return vault.con.sql(
        "SELECT dk_id, collection, generation, recipient, wrapped FROM data_keys ORDER BY dk_id, recipient"
    ).to_arrow_table()


@dataclass(frozen=True)
class EntryChunk:
    """One chunk of the log's entry column in place: its values buffer (Arrow's memory,
    not copied) and where each entry lies in it, so entries are hashed and bundled
    where they lie rather than copied out one `bytes` each (a log's entries are most of
    its size).  A null entry is empty, as `bytes(e or b"")` reads it."""

    values: memoryview
    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, chunk: pa.Array) -> EntryChunk:
        if not pa.types.is_binary(chunk.type) and not pa.types.is_large_binary(chunk.type):
            chunk = chunk.cast(pa.large_binary())
        n = len(chunk)
        _validity, offsets, values = chunk.buffers()
        if n == 0 or offsets is None:
            return cls(memoryview(b""), [], [])
        view = memoryview(offsets)
        ints = view.cast("i") if pa.types.is_binary(chunk.type) else view.cast("q")
        at = ints[chunk.offset : chunk.offset + n + 1].tolist()
        starts, ends = at[:-1], at[1:]
        if chunk.null_count:
            for i, null in enumerate(chunk.is_null().to_pylist()):
                if null:
                    ends[i] = starts[i]
        return cls(memoryview(values) if values is not None else memoryview(b""), starts, ends)

    def views(self) -> list[memoryview]:
        return [self.values[a:b] for a, b in zip(self.starts, self.ends, strict=True)]


class DatasetReader:
    """An export read through one in-memory DuckDB connection.

    `table` reads a file of the export as Arrow (the verifier reads the log once, and
    its bytes are parsed by Python, never by DuckDB's JSON functions); the verdict
    queries of `store.audit` then run on this connection over the rows the caller
    derived from the log.
    """

    def __init__(self, root: Path, threads: int | None = None) -> None:
        self.root = root
        log = root / "log.parquet"
        if not log.is_file():
            raise DatasetError(f"{root}: not a dataset ({LOG_FILE} is missing)")
        self._log: pa.Table | None = None
        self._entries: list[EntryChunk] | None = None
        self._references: pa.Table | None = None
        #: answer id -> its first manifest's (answer digest, collection), read in one query
        #: once the facts are kept (`end_facts`)
        self._answer_refs: dict[str, tuple[str, str]] | None = None
        self._facts_kept = False
        #: each batch's view rows as they came, inserted at `end_facts` (`add_facts`)
        self._facts: dict[str, list[RowsTable]] = {}
        #: the statement that makes each view's table (of the columns kept), or empties it
        self._fact_ddl: dict[str, str] = {}
        self.con = duckdb.connect(":memory:")
        self.con.execute("SET enable_progress_bar = false")
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        try:
            self.row_group_sizes = [
                pq.ParquetFile(log).metadata.row_group(i).num_rows
                for i in range(pq.ParquetFile(log).metadata.num_row_groups)
            ]
        except (OSError, pa.ArrowException) as exc:
            raise DatasetError(f"{log}: not a Parquet file ({exc})") from exc

    @property
    def entries(self) -> int:
        """Rows of the log, as its Parquet metadata says."""
        return sum(self.row_group_sizes)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> DatasetReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _parquet(self, name: str) -> str:
        path = self.root / name
        if not path.is_file():
            raise DatasetError(f"{self.root}: {name} is missing")
        return "read_parquet('" + str(path).replace("'", "''") + "', file_row_number = true)"

    def duplicate_answers(self) -> list[tuple[str, list[int]]]:
        from store import audit

        return audit.duplicate_answers_on(self.con)

    def unreferenced(self) -> list[str]:
        from store import audit

        return audit.blob_digests_unreferenced_on(self.con)

    def digest_verdicts(
        self, bad: Mapping[str, tuple[TextVerdict, str]], dk_ids: list[str], scopes: list[str] | None
    ) -> tuple[dict[TextVerdict, int], list[DigestVerdict]]:
        from store import audit

        return audit.digest_verdicts_on(self.con, bad, dk_ids, scopes)

    def table(self, name: str, columns: str = "*", order: str = "") -> pa.Table:
        try:
            return self.con.sql(
                f"SELECT {columns} FROM {self._parquet(name)} {('ORDER BY ' + order) if order else ''}"  # noqa: S608
            ).to_arrow_table()
        except duckdb.Error as exc:
            raise DatasetError(f"{self.root / name}: cannot be read ({exc})") from exc

    def texts(self, names: Sequence[str]) -> pa.Table:
        """Every text row of the listed text files, in file order."""
        parts = [self.table(n, "digest, collection, dk_id, state, text") for n in names]
        if not parts:
            return pa.schema(
                [
                    ("digest", pa.string()),
                    ("collection", pa.string()),
                    ("dk_id", pa.string()),
                    ("state", pa.string()),
                    ("text", pa.binary()),
                ]
            ).empty_table()
        return pa.concat_tables(parts)

    def log_table(self) -> pa.Table:
        """The log as (file_row_number, seq, kind, entry, leaf_hash, signer), in file
        order, read once per reader (the verifier and the pool's slices share it)."""
        if self._log is None:
            # a plain scan keeps file order (DuckDB preserves insertion order); sorted
            # only if it did not, rather than sorting every entry's bytes each time
            log = self.table(LOG_FILE, "file_row_number, " + ", ".join(LOG_COLUMNS))
            rows = log.column("file_row_number").to_pylist()
            if rows != sorted(rows):
                log = log.sort_by("file_row_number")
            self._log = log
        return self._log

    def log_entries(self) -> list[EntryChunk]:
        """The log's entries in place, chunk by chunk (`EntryChunk`), once per reader."""
        if self._entries is None:
            self._entries = [EntryChunk.of(c) for c in self.log_table().column("entry").chunks]
        return self._entries

    def begin_facts(self, rows: Rows, narrow: Mapping[str, Sequence[str] | None] | None = None) -> None:
        """Once per reader: temp tables for the view rows derived from the log, with the
        rows given as tuples (the statement rows) already in.  A view `narrow` names
        columns of gets a table of those columns only (the others would be NULL in every
        row: inserting 100k rows into `v_passages`' 26 columns costs five times what
        its four read ones cost)."""
        from store import audit

        narrow = narrow or {}
        for table, cols in VIEW_COLUMNS.items():
            kept = narrow.get(table)
            types = dict(cols)
            defs = ", ".join(f"{c} {types[c]}" for c in (kept if kept is not None else types))
            self._fact_ddl[table] = f"CREATE OR REPLACE TEMP TABLE r_{table} ({defs})"
        audit.run_all(self.con, list(self._fact_ddl.values()))
        audit.create_fact_tables(self.con)
        for table, items in rows.items():
            kept = narrow.get(table)
            if items and kept is None:
                insert_rows(self.con, table, items, target=f"temp.r_{table}")
            elif items and kept is not None:
                self._insert_columns(table, rows_table(table, items).table.select(list(kept)))

    def add_facts(self, tables: Mapping[str, RowsTable]) -> None:
        """View rows built as Arrow tables where a batch was checked (some of a view's
        columns, or all of them), held until `end_facts`: nothing reads them before, and
        one insert of a table's rows from every batch costs a third of one insert a
        batch (each insert has a fixed cost of a few milliseconds)."""
        for table, part in sorted(tables.items()):
            if part.num_rows:
                self._facts.setdefault(table, []).append(part)

    @property
    def held_rows(self) -> int:
        """View rows `add_facts` holds, not yet inserted."""
        return sum(part.num_rows for parts in self._facts.values() for part in parts)

    def keep_held(self) -> None:
        """The view rows held so far kept now as `store.audit` keeps them, and the view
        tables made empty again: called between batches while the engine checks the next
        ones, so that `end_facts` is left only the last batches' rows.  The facts kept are
        the same as one `keep_facts` over every row: it joins rows of one seq only, and a
        batch holds every view row of its entries (as `begin_facts` every statement's)."""
        from store import audit

        self._insert_facts()
        audit.keep_facts(self.con)
        audit.run_all(self.con, list(self._fact_ddl.values()))

    def _insert_facts(self) -> None:
        """The rows `add_facts` held, one insert per run of batches with one schema
        (Arrow may infer a column's type differently in two batches)."""
        full = {table: [c for c, _t in cols] for table, cols in VIEW_COLUMNS.items()}
        for table, parts in sorted(self._facts.items()):
            for (typed, _schema), run in groupby(parts, key=lambda p: (p.typed, p.table.schema)):
                part = RowsTable(pa.concat_tables([p.table for p in run]), typed)
                if part.table.column_names == full[table]:
                    insert_table(self.con, table, part, target=f"temp.r_{table}")
                else:
                    self._insert_columns(table, part.table)
        self._facts = {}

    def end_facts(self, stored: pa.Table) -> None:
        """The compact facts kept as `store.audit` keeps them, and the stored blob rows
        as `blobs`: what the verdict queries read."""
        from store import audit

        self._insert_facts()
        audit.keep_facts(self.con)
        self._facts_kept, self._answer_refs = True, None
        self.con.register("_stored_blobs", stored)
        self.con.execute(
            "CREATE OR REPLACE TEMP TABLE blobs AS SELECT digest, collection, dk_id FROM _stored_blobs"
        )
        self.con.unregister("_stored_blobs")

    def _insert_columns(self, table: str, rows: pa.Table) -> None:
        """Rows of some of a view's columns (the others NULL), cast to the view's types."""
        types = dict(VIEW_COLUMNS[table])
        names = rows.column_names
        casts = ", ".join(f"CAST({c} AS {types[c]})" for c in names)
        self.con.register("_new_rows", rows)
        try:
            self.con.execute(
                f"INSERT INTO temp.r_{table} ({', '.join(names)}) SELECT {casts} FROM _new_rows"  # noqa: S608
            )
        finally:
            self.con.unregister("_new_rows")

    def answer_text_ref(self, answer_id: str) -> tuple[str, str] | None:
        """(answer digest, collection) of an answer's first manifest, from the facts kept
        by `load_facts` (as `store.audit.answer_text_ref` reads a vault's).  Once they are
        kept, every answer's is read in one query (a derived passage asks per passage)."""
        if self._facts_kept:
            if self._answer_refs is None:
                self._answer_refs = {}
                for aid, digest, collection in self.con.execute(
                    "SELECT answer_id, answer_sha256, collection FROM temp.r_answer_refs "
                    "WHERE answer_id IS NOT NULL ORDER BY seq"
                ).fetchall():
                    self._answer_refs.setdefault(str(aid), (str(digest), str(collection)))
            return self._answer_refs.get(answer_id)
        rows = self.con.execute(
            "SELECT answer_sha256, collection FROM temp.r_answer_refs "
            "WHERE answer_id = ? ORDER BY seq LIMIT 1",
            [answer_id],
        ).fetchall()
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def tombstone_diff(self) -> list[tuple[Any, ...]]:
        """(seq, digest, side) of tombstones.parquet rows that differ from the first
        tombstone of each digest the log holds; side is 'file' or 'log'."""
        self.con.register("_tombstones_stored", self.table(TOMBSTONES_FILE, "seq, digest"))
        stored = "SELECT seq, digest FROM _tombstones_stored"
        derived = "SELECT min(seq) AS seq, digest FROM temp.r_tombstone_refs GROUP BY digest"
        try:
            return self.con.execute(
                f"SELECT *, 'file' FROM ({stored} EXCEPT ALL {derived}) "  # noqa: S608
                f"UNION ALL SELECT *, 'log' FROM ({derived} EXCEPT ALL {stored}) ORDER BY 1, 2, 3 LIMIT 200"
            ).fetchall()
        except duckdb.Error as exc:
            raise DatasetError(
                f"{self.root / TOMBSTONES_FILE}: cannot be compared with the log's tombstones ({exc})"
            ) from exc
        finally:
            self.con.unregister("_tombstones_stored")

    def stored_references(self) -> pa.Table:
        """references.parquet as read, once per reader: the verifier reads it while the
        engine checks, so that only the comparison is left for the end."""
        if self._references is None:
            self._references = self.table(REFERENCES_FILE, _REFERENCE_COLUMNS)
        return self._references

    def reference_diff(self, limit: int = 200) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """(rows of references.parquet the log does not imply, references the log implies
        that the file lacks), as multisets, each in (seq, digest, role) order.

        The export writes the rows unique on (seq, digest, role) and in that order, so
        an untampered file equals the derived rows sorted the same way, row for row:
        that one comparison (a sort, no hashing of either side) answers "no
        difference".  Any other file (a row dropped, added, altered or moved, or a
        column of another type) takes the exact multiset difference, so the findings
        never depend on which path ran."""
        stored = self.stored_references()
        derived = self.con.sql(
            f"SELECT f.seq, a.answer_id, f.passage_id, f.role, f.digest, f.collection FROM temp.r_refs f "  # noqa: S608
            f"LEFT JOIN temp.r_answer_refs a ON a.seq = f.seq ORDER BY {_REFERENCE_ORDER}"
        ).to_arrow_table()
        if _same_rows(stored, derived):
            return [], []
        return self._reference_multiset_diff(stored, derived, limit)

    def _reference_multiset_diff(
        self, stored: pa.Table, derived: pa.Table, limit: int
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """`reference_diff` when the two sides differ: EXCEPT ALL both ways."""
        self.con.register("_refs_stored", stored)
        self.con.register("_refs_derived", derived)
        try:
            out = []
            for a, b in (("_refs_stored", "_refs_derived"), ("_refs_derived", "_refs_stored")):
                out.append(
                    self.con.execute(
                        f"SELECT * FROM (SELECT {_REFERENCE_COLUMNS} FROM {a} "  # noqa: S608
                        f"EXCEPT ALL SELECT {_REFERENCE_COLUMNS} FROM {b}) "
                        f"ORDER BY {_REFERENCE_ORDER} LIMIT {int(limit)}"
                    ).fetchall()
                )
        finally:
            self.con.unregister("_refs_stored")
            self.con.unregister("_refs_derived")
        return out[0], out[1]


def _same_rows(stored: pa.Table, derived: pa.Table) -> bool:
    """Row for row the same values of the same types (nulls where the other has nulls)."""
    return bool(stored.equals(derived))


#: the columns of references.parquet, in the order it holds them
_REFERENCE_COLUMNS = "seq, answer_id, passage_id, role, digest, collection"
#: the order the export writes references in ((seq, digest, role), unique there), then
#: the other columns so that even a derived table with ties sorts one way only
_REFERENCE_ORDER = "seq, digest, role, answer_id, passage_id, collection"
