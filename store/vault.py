"""The vault: one directory, one DuckDB file, an append-only log with signed checkpoints.

DuckDB has no triggers or grants, so append-only is enforced by this API (there is no
update, and the only delete is a blob purge that appends a tombstone in the same
transaction) and made checkable by the Merkle log: any rewrite, reordering or
truncation of entries contradicts a signed checkpoint.
"""

from __future__ import annotations

import itertools
import os
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from store import merkle
from store.canonical import canonical
from store.crypto import Identity, PublicIdentity, b64d, b64e, sha256_hex
from store.entries import ROSTER_KINDS, LogEntry, Statement, make_statement, place_of
from store.errors import (
    AccessDeniedError,
    InputError,
    SignatureError,
    VaultDamagedError,
    VaultError,
    VaultInUseError,
)
from store.guarded import (
    GUARDED_KINDS,
    commitment,
    extension_line,
    guarded_kind,
    guarded_rows,
    signed_commitment,
)
from store.note import Checkpoint, open_note
from store.roster import Roster, RosterProblem, load_roster, name_problem
from store.rowtables import RowsTable, rows_table
from store.schema import DB_FILE, FORMAT, RAW_DDL, RAW_INDEXES, VIEW_COLUMNS, VIEW_INDEXES, view_ddl
from store.viewcommit import DDL as VIEW_GROUPS_DDL
from store.viewcommit import ViewGuard
from store.viewcommit import extension_line as views_line
from store.views import Rows, derive

__all__ = ["CheckpointRow", "Vault"]

_PID = re.compile(r"\(PID (\d+)\)")
_LOCKED = re.compile(r"Could not set lock|Conflicting lock", re.IGNORECASE)
_READ_BATCH = 1_000
#: DuckDB's own limits: the buffer pool otherwise grows to 80 % of RAM on a large vault
MEMORY_LIMIT = os.environ.get("TRACER_DUCKDB_MEMORY_LIMIT", "512MB")
_WANT = itertools.count()


def _one(result: duckdb.DuckDBPyConnection) -> tuple[Any, ...] | None:
    """First row, reading the result to the end: DuckDB refuses `register` while a
    result is left open, which `fetchone` does."""
    rows = result.fetchall()
    return rows[0] if rows else None


@dataclass(frozen=True)
class CheckpointRow:
    id: int
    size: int
    signer: str
    note: str


def _damaged(db: Path, text: str) -> VaultDamagedError:
    """Name the file DuckDB failed on; a WAL it cannot replay is left exactly as it was."""
    wal = db.with_name(db.name + ".wal")
    if wal.exists() and "WAL" in text:
        return VaultDamagedError(
            f"{wal}: DuckDB cannot replay the vault's write-ahead log, so the vault was not opened "
            f"(nothing was deleted or rewritten): {text}"
        )
    return VaultDamagedError(f"{db}: DuckDB could not open the file: {text}")


def _connect(db: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        con = duckdb.connect(str(db), read_only=read_only)
    except duckdb.IOException as exc:
        text = str(exc)
        if _LOCKED.search(text):
            pid = _PID.search(text)
            who = f"PID {pid.group(1)}" if pid else "another process"
            raise VaultInUseError(f"{db.parent}: vault is in use by {who}") from exc
        raise _damaged(db, text) from exc
    except duckdb.Error as exc:
        raise _damaged(db, str(exc)) from exc
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    return con


def _expected_columns() -> dict[str, list[tuple[str, str]]]:
    """table -> (column name, type), for every raw and view table the schema defines."""
    out: dict[str, list[tuple[str, str]]] = {}
    for stmt in RAW_DDL.split(";"):
        m = re.search(r"CREATE TABLE IF NOT EXISTS (\w+) \((.*)\)", stmt, re.DOTALL)
        if m:
            defs = [c.strip().split() for c in re.split(r",(?![^(]*\))", m.group(2)) if c.strip()]
            out[m.group(1)] = [(d[0], d[1].upper()) for d in defs if d[0].upper() != "PRIMARY"]
    for table, columns in VIEW_COLUMNS.items():
        out[table] = [(c, t.upper()) for c, t in columns]
    return out


def _check_tables(con: duckdb.DuckDBPyConnection, db: Path) -> list[str]:
    """Every table the vault needs, with its columns: a dropped or altered table is named
    here, once, instead of failing later in the middle of a query.

    Returns the derived view tables a vault made by an earlier version lacks (views are
    rebuilt from the log, so those can be added); a missing raw table is damage."""
    try:
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
        ).fetchall()
    except duckdb.Error as exc:
        raise VaultDamagedError(f"{db}: cannot read the vault's tables ({exc})") from exc
    have: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        have.setdefault(str(table), []).append((str(column), str(data_type).upper()))
    added: list[str] = []
    for table, cols in _expected_columns().items():
        if table not in have and table in VIEW_COLUMNS and _views_made(have):
            added.append(table)
            continue
        if table not in have:
            raise VaultDamagedError(f"{db}: the vault's table {table!r} is missing: the file was altered")
        if have[table] != cols:
            raise VaultDamagedError(
                f"{db}: the vault's table {table!r} has columns ({_spell(have[table])}), "
                f"expected ({_spell(cols)}): the file was altered"
            )
    return added


#: view tables every tracer-vault/2 file has had; one missing is damage, not an older file
_BASE_VIEWS = ("v_answers", "v_passages", "v_digests", "v_revisions", "v_keys", "v_investigators")


def _spell(columns: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in columns)


def _views_made(have: dict[str, list[tuple[str, str]]]) -> bool:
    return all(t in have for t in _BASE_VIEWS)


def _add_views(con: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    """Create view tables added since this vault was made and derive their rows from the
    log (one pass, the same `derive` verify uses), in one transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        for table in tables:
            con.execute(view_ddl(table))
        rows: Rows = {t: [] for t in VIEW_COLUMNS}
        for seq, data in con.execute("SELECT seq, entry FROM log ORDER BY seq").fetchall():
            try:
                derive(int(seq), LogEntry.from_bytes(bytes(data)), rows)
            except (KeyError, TypeError, ValueError, AttributeError):
                continue  # a damaged entry: `verify` names it
            for t in VIEW_COLUMNS:
                if t not in tables:
                    rows[t].clear()
        for table in tables:
            if rows[table]:
                insert_rows(con, table, rows[table])
        for ddl in VIEW_INDEXES:
            if any(f" ON {table}(" in ddl for table in tables):
                con.execute(ddl)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


#: a tombstone statement's fields after its digest, in `TombstoneRow` order
_TOMB_FIELDS = ("policy", "reason", "authorizer", "effective_at")

_SELECTS: set[str] = set()


def _require_select(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    if sql in _SELECTS:
        return
    types = [st.type for st in con.extract_statements(sql)]
    if not types or any(t != duckdb.StatementType.SELECT for t in types):
        shown = ", ".join(str(t) for t in types) or "nothing"
        raise VaultError(f"Vault.query accepts SELECT statements only, got {shown}")
    if len(_SELECTS) < 4096:
        _SELECTS.add(sql)


class Vault:
    """An open vault.  Use `Vault.create` or `Vault.open`; close it when done."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, read_only: bool):
        self.path = path
        self.con = con
        self.read_only = read_only
        self._blob_index: _BlobIndex | None = None
        self._acc: merkle.RootAccumulator | None = None
        #: the roster and the (size, root) a valid checkpoint covers, as this process last
        #: checked or wrote them; DuckDB's lock keeps other writers out meanwhile
        self._roster: tuple[Roster, list[RosterProblem]] | None = None
        self._covered: tuple[int, bytes] | None = None
        self._guarded: list[tuple[int, bytes]] | None = None
        #: the kind each entry's bytes end with, by seq (`_tail_kinds`)
        self._tails: list[str] = []
        self._tombstones: dict[str, tuple[Any, ...]] | None = None
        self._meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        #: the derived tables' check against the signed commitment (`store.viewcommit`)
        self.views = ViewGuard(self)
        #: inside `batch`: the view check may not start transactions of its own
        self.in_batch = False
        #: told (size, root, signer key id) after each batch commits: the engine records
        #: there what this machine signed, so a later write over an older copy is refused
        self.on_commit: Callable[[int, bytes, str], None] | None = None

    # -- lifecycle -----------------------------------------------------------------

    @classmethod
    def create(cls, path: Path, custodian: Identity, now: str, origin: str | None = None) -> Vault:
        db = path / DB_FILE
        if db.exists():
            raise VaultError(f"{path}: a vault already exists here")
        origin = origin or f"tracer.vault/{sha256_hex(custodian.public.ed25519 + now.encode())[:16]}"
        problem = name_problem(custodian.name)
        if problem:
            raise VaultError(f"{path}: the custodian's key name cannot sign checkpoints: {problem}")
        try:
            # Refuse what cannot be signed before anything is written.
            Checkpoint(origin, 0, bytes(32)).sign(custodian)
        except ValueError as exc:
            raise VaultError(f"{path}: cannot sign checkpoints for this vault: {exc}") from exc
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise VaultError(f"{path}: cannot create the vault directory ({exc.strerror})") from exc
        con = _connect(db, read_only=False)
        # Tables, metadata, entry 0 and the first checkpoint commit together: a vault
        # either exists whole or (after a crash) holds no tables at all.
        try:
            con.execute("BEGIN")
            con.execute(RAW_DDL)
            con.execute(VIEW_GROUPS_DDL)
            for ddl in RAW_INDEXES:
                con.execute(ddl)
            for table in VIEW_COLUMNS:
                con.execute(view_ddl(table))
            for ddl in VIEW_INDEXES:
                con.execute(ddl)
            meta = {
                "format": FORMAT,
                "origin": origin,
                "custodian_name": custodian.name,
                "custodian_ed25519": b64e(custodian.public.ed25519),
                "custodian_x25519": b64e(custodian.public.x25519),
            }
            con.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
            vault = cls(path, con, read_only=False)
            with vault.batch(custodian, _in_transaction=True) as b:
                b.append(
                    Statement(
                        "vault_init",
                        {
                            "origin": origin,
                            "format": FORMAT,
                            "custodian": custodian.public.to_json(),
                            "at": now,
                        },
                        custodian,
                    )
                )
        except BaseException:
            # Nothing was committed: remove the empty file we just made so init can be retried.
            con.close()
            for leftover in (db, db.with_name(db.name + ".wal")):
                leftover.unlink(missing_ok=True)
            raise
        return vault

    @classmethod
    def open(cls, path: Path, read_only: bool | None = None) -> Vault:
        db = path / DB_FILE
        if not path.is_dir():
            raise VaultError(f"{path}: no such vault directory")
        if not db.is_file():
            raise VaultError(f"{path}: not a vault ({DB_FILE} is missing)")
        if read_only is None:
            read_only = not os.access(path, os.W_OK) or not os.access(db, os.W_OK)
        con = _connect(db, read_only=read_only)
        try:
            fmt = _one(con.execute("SELECT value FROM meta WHERE key = 'format'"))
        except duckdb.Error as exc:
            con.close()
            raise VaultDamagedError(f"{db}: not a tracer vault ({exc})") from exc
        if fmt is None or fmt[0] != FORMAT:
            con.close()
            raise VaultError(
                f"{db}: unsupported vault format {fmt[0] if fmt else None!r} (this tracer reads {FORMAT!r})"
            )
        try:
            added = _check_tables(con, db)
            if added and read_only:
                raise VaultError(
                    f"{db}: made by an earlier tracer without the view table(s) {', '.join(added)}; "
                    "open it once with write access to add them (they are derived from the log)"
                )
            if added:
                _add_views(con, added)
            if not read_only:  # a vault made before an index or table was added gets it once
                for ddl in RAW_INDEXES:
                    con.execute(ddl)
                con.execute(VIEW_GROUPS_DDL)
        except BaseException:
            con.close()
            raise
        return cls(path, con, read_only)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- identity --------------------------------------------------------------------

    @property
    def origin(self) -> str:
        return str(self._meta["origin"])

    @property
    def custodian(self) -> PublicIdentity:
        """The custodian as recorded in meta; `verify` checks it against entry 0."""
        return PublicIdentity(
            name=self._meta["custodian_name"],
            ed25519=b64d(self._meta["custodian_ed25519"]),
            x25519=b64d(self._meta["custodian_x25519"]),
        )

    # -- reading the log -------------------------------------------------------------

    def size(self) -> int:
        row = _one(self.con.execute("SELECT count(*) FROM log"))
        return int(row[0]) if row else 0

    def entry(self, seq: int) -> LogEntry:
        row = _one(self.con.execute("SELECT entry FROM log WHERE seq = ?", [seq]))
        if row is None:
            raise VaultError(f"{self.path}: no log entry {seq}")
        return LogEntry.from_bytes(bytes(row[0]))

    def raw_entries(self, start: int = 0, end: int | None = None) -> Iterator[tuple[int, str, bytes, bytes]]:
        """(seq, kind, entry bytes, stored leaf hash) in seq order, read in pages.

        Pages are seq ranges, not `seq > cursor LIMIT n`: DuckDB evaluates the latter by
        reading the entry bytes of every later row for each page (quadratic, and the
        whole log through the buffer pool), while a range is pruned by row-group zonemaps.
        """
        row = _one(self.con.execute("SELECT coalesce(max(seq), -1) FROM log"))
        top = int(row[0]) if row else -1
        if end is not None:
            top = min(top, int(end) - 1)
        lo = max(int(start), 0)
        while lo <= top:
            hi = min(lo + _READ_BATCH, top + 1)
            rows = self.con.execute(
                "SELECT seq, kind, entry, leaf_hash FROM log WHERE seq >= ? AND seq < ? ORDER BY seq",
                [lo, hi],
            ).fetchall()
            for seq, kind, data, leaf in rows:
                yield int(seq), str(kind), bytes(data), bytes(leaf)
            lo = hi

    def leaf_hashes(self, size: int | None = None) -> list[bytes]:
        """Stored leaf hashes in seq order (what proofs are built from)."""
        limit = "" if size is None else f"LIMIT {int(size)}"
        rows = self.con.execute(f"SELECT leaf_hash FROM log ORDER BY seq {limit}").fetchall()  # noqa: S608
        return [bytes(r[0]) for r in rows]

    def checkpoints(self) -> list[CheckpointRow]:
        rows = self.con.execute("SELECT id, size, signer, note FROM checkpoints ORDER BY id").fetchall()
        return [CheckpointRow(int(a), int(b), str(c), str(d)) for a, b, c, d in rows]

    def latest_checkpoint(self) -> CheckpointRow:
        row = _one(
            self.con.execute("SELECT id, size, signer, note FROM checkpoints ORDER BY id DESC LIMIT 1")
        )
        if row is None:
            raise VaultDamagedError(f"{self.path}: the vault has no checkpoint")
        return CheckpointRow(int(row[0]), int(row[1]), str(row[2]), str(row[3]))

    def inclusion_proof(self, seq: int, size: int | None = None) -> list[bytes]:
        leaves = self.leaf_hashes(size)
        return merkle.inclusion_proof(seq, len(leaves), leaves)

    def consistency_proof(self, old: int, new: int) -> list[bytes]:
        leaves = self.leaf_hashes(new)
        return merkle.consistency_proof(old, new, leaves)

    def root(self, size: int | None = None) -> bytes:
        return merkle.root(self.leaf_hashes(size))

    # -- blobs -------------------------------------------------------------------------

    def blob_rows(self, digest: str) -> list[tuple[str, str, bytes, bytes]]:
        """(collection, dk_id, nonce, ciphertext) rows held for a digest."""
        rows = self.con.execute(
            "SELECT collection, dk_id, nonce, ct FROM blobs WHERE digest = ? ORDER BY collection",
            [digest],
        ).fetchall()
        return [(str(c), str(k), bytes(n), bytes(t)) for c, k, n, t in rows]

    def blob_rows_many(self, digests: Sequence[str]) -> dict[str, list[tuple[str, str, bytes, bytes]]]:
        """`blob_rows` for many digests in one query; digests with no row are absent."""
        out: dict[str, list[tuple[str, str, bytes, bytes]]] = {}
        wanted = sorted(set(digests))
        if not wanted:
            return out
        # Two steps: find the rows by scanning the digest column only, then fetch just
        # those rows; one join would read every stored ciphertext to select a few.
        if self._blob_index is not None:
            rowids = self._blob_index.rowids(wanted)
        elif len(wanted) <= _POINT_LOOKUPS:
            # a trace asks for a few texts: one query through the digest index (RAW_INDEXES)
            for d, c, k, n, t in self.con.execute(
                "SELECT digest, collection, dk_id, nonce, ct FROM blobs WHERE digest = ANY(?) "
                "ORDER BY digest, collection",
                [wanted],
            ).fetchall():
                out.setdefault(str(d), []).append((str(c), str(k), bytes(n), bytes(t)))
            return out
        else:
            rowids = sorted(
                int(r[0])
                for r in self._join_wanted(
                    wanted, "SELECT rowid FROM blobs WHERE digest IN (SELECT digest FROM {want})"
                )
            )
        if not rowids:
            return out
        rows = self.con.execute(
            "SELECT digest, collection, dk_id, nonce, ct FROM blobs WHERE rowid = ANY(?) "
            "ORDER BY digest, collection",
            [rowids],
        ).fetchall()
        want = set(wanted)
        for d, c, k, n, t in rows:
            if d in want:  # an index prefix may be shared by another digest
                out.setdefault(str(d), []).append((str(c), str(k), bytes(n), bytes(t)))
        return out

    @contextmanager
    def blob_index(self) -> Iterator[None]:
        """Look blobs up through an in-memory digest index for the length of a read pass.

        DuckDB answers `digest IN (...)` by scanning every digest, so a pass that reads
        texts page by page (verify, revalidate) grows with pages x blobs.  The index is a
        sorted array of 64-bit digest prefixes with their rowids (16 bytes a blob); any
        write through `batch` drops it, so it never outlives the rows it describes.
        """
        self._blob_index = _BlobIndex.build(self.con)
        try:
            yield
        finally:
            self._blob_index = None

    def blob_batches(
        self, dk_ids: Sequence[str], rows_per_batch: int = 4096
    ) -> Iterator[list[tuple[str, str, str, bytes, bytes]]]:
        """Every stored (digest, collection, dk_id, nonce, ct) row under one of `dk_ids`,
        streamed in batches (unordered), so the whole blob store is never in memory."""
        if not dk_ids:
            return
        name = f"_want_{next(_WANT)}"
        self.con.register(name, pa.table({"dk_id": pa.array(sorted(set(dk_ids)), pa.string())}))
        try:
            reader = self.con.sql(
                "SELECT digest, collection, dk_id, nonce, ct FROM blobs "  # noqa: S608
                f"WHERE dk_id IN (SELECT dk_id FROM {name})"
            ).to_arrow_reader(rows_per_batch)
            for batch in reader:
                cols = batch.to_pydict()
                yield list(
                    zip(
                        cols["digest"],
                        cols["collection"],
                        cols["dk_id"],
                        cols["nonce"],
                        cols["ct"],
                        strict=True,
                    )
                )
        finally:
            reader = None  # the streaming result must be gone before the next query
            self.con.unregister(name)

    def blob_first_copies(self, dk_ids: Sequence[str]) -> dict[str, str]:
        """digest -> first collection (by name) for digests stored more than once under
        `dk_ids`: which copy `DataKeys.decrypt` would read."""
        if not dk_ids:
            return {}
        rows = self._join_wanted(
            sorted(set(dk_ids)),
            "SELECT digest, min(collection) FROM blobs WHERE dk_id IN (SELECT digest FROM {want}) "
            "GROUP BY digest HAVING count(*) > 1",
        )
        return {str(d): str(c) for d, c in rows}

    def tombstone_index(self) -> dict[str, tuple[Any, ...]]:
        """digest -> (seq, digest, policy, reason, authorizer, effective_at) of its first
        tombstone, read from the log's entry bytes, never from the editable `v_tombstones`.

        Which entries are tombstones is decided by their bytes (`store.guarded`), and the
        set is what the covering checkpoint commits to (unlock and appends refuse a
        mismatch); an entry whose bytes no longer hash to its leaf is left to `verify`.
        """
        if self._tombstones is None:
            found: dict[str, tuple[Any, ...]] = {}
            for seq, _kind, data, leaf in guarded_rows(self):
                if guarded_kind(data) != "tombstone" or merkle.leaf_hash(data) != leaf:
                    continue
                try:
                    stmt = LogEntry.from_bytes(data).payload_json()
                except (ValueError, InputError, AttributeError, TypeError):
                    continue
                if isinstance(stmt, dict) and isinstance(stmt.get("digest"), str):
                    row = (seq, stmt["digest"], *(str(stmt.get(k, "")) for k in _TOMB_FIELDS))
                    found.setdefault(stmt["digest"], row)
            self._tombstones = found
        return self._tombstones

    def tombstone_rows_many(self, digests: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """`tombstone_index` rows of the digests that have one."""
        index = self.tombstone_index()
        return {d: index[d] for d in set(digests) if d in index}

    def _join_wanted(self, wanted: list[str], sql: str) -> list[tuple[Any, ...]]:
        """Run `sql` with `{want}` bound to a registered one-column Arrow table of digests."""
        name = f"_want_{next(_WANT)}"
        self.con.register(name, pa.table({"digest": pa.array(wanted, pa.string())}))
        try:
            return self.con.execute(sql.format(want=name)).fetchall()
        finally:
            self.con.unregister(name)

    def data_key_rows(self, recipient: str) -> list[tuple[str, str, int, str]]:
        rows = self.con.execute(
            "SELECT dk_id, collection, generation, wrapped FROM data_keys WHERE recipient = ?",
            [recipient],
        ).fetchall()
        return [(str(a), str(b), int(c), str(d)) for a, b, c, d in rows]

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Read-only query for store.queries; nothing outside `store` calls this.

        Only SELECT statements are accepted, so this is no back door around the
        append-only API.
        """
        _require_select(self.con, sql)
        return self.con.execute(sql, list(params)).fetchall()

    @contextmanager
    def memory_limit(self, limit: str) -> Iterator[None]:
        """Cap DuckDB's buffer pool for one long scan (e.g. '256MB'), then restore it."""
        if not re.fullmatch(r"\d+(\.\d+)?\s*[KMGT]i?B", limit):
            raise VaultError(f"not a DuckDB memory size: {limit!r}")
        before = self.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        self.con.execute(f"SET memory_limit = '{limit}'")
        try:
            yield
        finally:
            self.con.execute(f"SET memory_limit = '{before}'")

    # -- writing -----------------------------------------------------------------------

    def adopt_accumulator(self, acc: merkle.RootAccumulator) -> None:
        """Start appends from a tree the caller has just built from this vault's stored
        leaf hashes (`leaf_hashes`), so the first append does not hash the log again
        (120k leaves at a million passages).  Ignored unless it covers the whole log and
        the log is dense, which is what `_accumulator` would check."""
        if self._acc is not None or self.read_only:
            return
        row = self.con.execute("SELECT count(*), coalesce(max(seq), -1) FROM log").fetchall()[0]
        if int(row[0]) == acc.size == int(row[1]) + 1:
            self._acc = acc.copy()

    def adopt_roster(self, roster: Roster) -> None:
        """Use a roster the caller just folded from this vault's log without problems
        (unlock), so the first append does not read the roster entries again."""
        if self._roster is None:
            self._roster = (roster.copy(), [])

    def covered_head(self) -> tuple[int, bytes] | None:
        """(size, root) of the log as a valid checkpoint covers it, once this process has
        checked that (before its first append) or signed it (after each append)."""
        return self._covered

    def _accumulator(self) -> merkle.RootAccumulator:
        if self._acc is None:
            leaves = self.leaf_hashes()
            top = int(self.con.execute("SELECT coalesce(max(seq), -1) FROM log").fetchall()[0][0])
            if top + 1 != len(leaves):
                raise VaultDamagedError(
                    f"{self.path}: the log has {len(leaves)} entries but its last is {top}: "
                    "entries are missing; refusing to append (run `tracer verify`)"
                )
            acc = merkle.RootAccumulator()
            for leaf in leaves:
                acc.append(leaf)
            self._acc = acc
        return self._acc

    def rows_claiming(self, kinds: Sequence[str]) -> list[tuple[int, str, bytes, bytes]]:
        """(seq, kind column, entry bytes, stored leaf) of every row whose kind column or
        whose own bytes (`..."kind":"K","seq":N}`) name one of `kinds`, in seq order.

        The kind column is outside the Merkle tree: selecting by it alone would miss an
        entry someone relabelled.  The bytes' tail is read in SQL (one pass, no entry
        bytes leave DuckDB but those selected); callers decide by the bytes.

        The log only grows, so a repeated call scans only the entries appended since the
        last one (a purge, an unlock and the case file each ask; at a million passages a
        scan reads ~1.3 GB of entry bytes).
        """
        wanted = sorted(kinds)
        tails = self._tail_kinds()
        chosen = {seq for seq, kind in enumerate(tails) if kind in wanted}
        by_column = self.con.execute(
            "SELECT seq FROM log WHERE kind IN (SELECT unnest(?::VARCHAR[]))", [wanted]
        )
        chosen.update(int(r[0]) for r in by_column.fetchall())
        # two queries: with an OR of both conditions DuckDB reads every entry's bytes
        rows = self.con.execute(
            "SELECT l.seq, l.kind, l.entry, l.leaf_hash FROM (SELECT unnest(?::BIGINT[]) AS seq) AS s "
            "JOIN log AS l ON l.seq = s.seq ORDER BY l.seq",
            [sorted(chosen)],
        ).fetchall()
        return [(int(a), str(b), bytes(c), bytes(d)) for a, b, c, d in rows]

    def _tail_kinds(self) -> list[str]:
        """The kind each entry's own bytes end with (`""` when none), by seq.

        The log only grows, so only entries appended since the last call are read: a
        purge, an unlock and the case file each ask, and at a million passages one pass
        reads ~1.3 GB of entry bytes.
        """
        tails = self._tails
        size = self.size()
        if len(tails) > size:  # the log shrank under us: nothing remembered holds
            tails = self._tails = []
        if len(tails) < size:
            rows = self.con.execute(_TAIL_KINDS, [len(tails)]).fetchall()
            for seq, kind in rows:
                if int(seq) != len(tails):  # a gap or a duplicate seq: read it all again
                    tails = self._tails = [
                        str(k or "") for _s, k in self.con.execute(_TAIL_KINDS, [0]).fetchall()
                    ]
                    break
                tails.append(str(kind or ""))
        return tails

    def roster_rows(self) -> list[tuple[int, str, bytes, bytes]]:
        """(seq, kind column, entry bytes, stored leaf) of the entries that change the roster,
        selected by column or by bytes (`rows_claiming`): a relabelled one is a problem."""
        return self.rows_claiming(sorted(ROSTER_KINDS))

    def guarded_pairs(self) -> list[tuple[int, bytes]]:
        """(seq, stored leaf) of every entry whose bytes say a guarded kind
        (`store.guarded`): what each checkpoint's `tracer-guarded` line commits to."""
        if self._guarded is None:
            self._guarded = [
                (seq, leaf) for seq, _k, data, leaf in guarded_rows(self) if guarded_kind(data) is not None
            ]
        return self._guarded

    def roster(self) -> Roster:
        """The roster folded from the log (`store.roster.load_roster`); refuses a damaged one.

        Cached for this open vault: only this process can append while it holds the file.
        """
        roster, problems = self.folded_roster()
        if problems:
            p = problems[0]
            raise VaultDamagedError(
                f"{self.path}: log entry {p.seq} ({p.kind}) does not hold: {p.code}: {p.detail}; "
                "the roster of keys and investigators cannot be trusted (run `tracer verify`)"
            )
        return roster

    def folded_roster(self) -> tuple[Roster, list[RosterProblem]]:
        """`load_roster` of this open vault, cached until this process appends a roster
        entry: readers that only name keys (traces, reports) need not re-read the log."""
        if self._roster is None:
            self._roster = load_roster(self)
        return self._roster

    def covering_checkpoint(self, size: int, root: bytes) -> Checkpoint | None:
        """A checkpoint row of exactly `size` entries, signed by a (name, key) pair the
        roster allows, whose origin and root are this log's; None when there is none."""
        verifiers = self.roster().note_verifiers()
        guard = commitment(self.guarded_pairs())
        rows = self.con.execute("SELECT note FROM checkpoints WHERE size = ? ORDER BY id DESC", [size])
        for (note,) in rows.fetchall():
            try:
                cp = Checkpoint.parse(open_note(str(note), verifiers)[0])
            except (SignatureError, InputError, ValueError):
                continue
            if (
                cp.origin == self.origin
                and cp.size == size
                and cp.root == root
                and signed_commitment(cp.extensions) == guard
            ):
                return cp
        return None

    def require_custodian(self, key: Identity, doing: str = "") -> None:
        """Refuse `key` unless it is this vault's custodian (entry 0 and metadata name it).

        Investigators may sign checkpoints over their own access entries and case
        statements, so the batch alone does not tell who may append producer evidence,
        keys or purges: the custodian, by key."""
        if key.public.ed25519 != self.custodian.ed25519:
            what = f"{doing} needs the custodian's key; " if doing else ""
            raise AccessDeniedError(
                f"{self.path}: {what}key {key.key_id[:16]} ({key.name}) is not this vault's custodian "
                f"({self.custodian.name}, {self.custodian.key_id[:16]})"
            )

    def forget_tree(self) -> None:
        """Drop what this process remembers of the log: the recovery cut it back."""
        self._acc = None
        self._roster = None
        self._covered = None
        self._guarded = None
        self._tombstones = None
        self._tails = []
        self.views.reset()

    def _signed_size_above(self, size: int) -> int | None:
        """The size of a validly signed checkpoint of this origin larger than `size`, if any
        (rows nobody could have signed are passed by: they lock nobody out)."""
        verifiers = self.roster().note_verifiers()
        rows = self.con.execute(
            "SELECT size, note FROM checkpoints WHERE size > ? ORDER BY size DESC", [size]
        ).fetchall()
        for row_size, note in rows:
            try:
                cp = Checkpoint.parse(open_note(str(note), verifiers)[0])
            except (SignatureError, InputError, ValueError):
                continue
            if cp.origin == self.origin and cp.size == int(row_size):
                return cp.size
        return None

    def _require_covered(self, acc: merkle.RootAccumulator) -> None:
        """Never sign a checkpoint over entries no valid checkpoint covers.

        The entries an honest writer appends are covered by the checkpoint it signs in
        the same transaction, so an uncovered tail was written by someone without a key.
        """
        here = (acc.size, acc.root())
        if self._covered == here:
            return
        longer = self._signed_size_above(acc.size)
        if longer is not None:
            raise VaultDamagedError(
                f"{self.path}: log_truncated: a signed checkpoint covers {longer} entries but the log "
                f"holds {acc.size}: entries were removed; refusing to sign over the shorter log"
            )
        if self.covering_checkpoint(*here) is None:
            raise VaultDamagedError(
                f"{self.path}: entry_not_checkpointed: no valid signed checkpoint covers the log's "
                f"{acc.size} entries, so they were not all appended by a key holder; refusing to sign "
                "over them (run `tracer verify` to pin the uncovered entries)"
            )
        self._covered = here

    def cover_checked_tail(self, custodian: Identity, size: int, root: bytes) -> int:
        """Sign, as the custodian, a checkpoint over a log whose tail no checkpoint covers,
        once the caller has checked every entry of it (`tracer checkpoint --cover-checked-tail`
        runs the structural verification first). `size` and `root` are the tree that was
        checked: anything appended since is refused, so only checked entries are covered.

        For a log whose last checkpoint row was deleted: its newest entries are then
        uncovered although each is a validly signed, correctly placed statement, and
        without this every open is refused for good."""
        if self.read_only:
            raise VaultError(f"{self.path}: vault is open read-only")
        if custodian.public.ed25519 != self.custodian.ed25519:
            raise AccessDeniedError(f"{self.path}: only the custodian may cover a checked tail")
        acc = self._accumulator()
        if (acc.size, acc.root()) != (size, root):
            raise VaultError(f"{self.path}: the log changed since it was checked; check it again")
        if self.covering_checkpoint(size, root) is not None:
            raise VaultError(f"{self.path}: a valid checkpoint already covers all {size} entries")
        # no signed commitment covers the tail's view rows: derive them all from the log
        views = self.views.before_append(size)
        cp = Checkpoint(self.origin, size, root, (extension_line(self.guarded_pairs()), views_line(views)))
        note = cp.sign_as(custodian, self.custodian.name)
        self.con.execute("BEGIN TRANSACTION")
        try:
            cid = _one(self.con.execute("SELECT coalesce(max(id), -1) + 1 FROM checkpoints"))
            self.con.execute(
                "INSERT INTO checkpoints VALUES (?, ?, ?, ?)",
                [int(cid[0]) if cid else 0, size, custodian.key_id, note],
            )
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self._covered = (size, root)
        return size

    @contextmanager
    def batch(self, signer: Identity, *, _in_transaction: bool = False) -> Iterator[Batch]:
        """One all-or-nothing append: entries, view rows, blobs and a signed checkpoint.

        The checkpoint is signed under the name the roster gives `signer`'s key, and only
        after checking that a valid checkpoint covers every entry already in the log.
        `_in_transaction` is for `create` only, which has already begun the transaction.
        """
        if self.read_only:
            raise VaultError(f"{self.path}: vault is open read-only")
        self._blob_index = None
        acc = self._accumulator()
        if _in_transaction:
            name = signer.name
        else:
            self._require_covered(acc)
            roster_name = self.roster().signer_name(signer.key_id)
            if roster_name is None:
                raise AccessDeniedError(
                    f"{self.path}: key {signer.key_id[:16]} is neither the custodian's nor an active "
                    "investigator's: it cannot sign this vault's checkpoints"
                )
            name = roster_name
        # the guarded entries already there, read before this batch's rows are inserted
        guarded = list(self.guarded_pairs())
        # the view digests it may sign over, checked before anything is added
        trusted = {} if _in_transaction else self.views.before_append(acc.size)
        b = Batch(self, acc.copy())
        if not _in_transaction:
            self.con.execute("BEGIN TRANSACTION")
        self.in_batch = True
        try:
            yield b
            if b.entries:
                b.flush()
                new = [(b.start + i, e.leaf) for i, e in enumerate(b.entries) if e.kind in GUARDED_KINDS]
                pairs = [*guarded, *new]
                views = self.views.after_append(
                    trusted, b.start, b.acc.size, [t for t, r in b.rows.items() if r]
                )
                lines = (extension_line(pairs), views_line(views))
                cp = Checkpoint(self.origin, b.acc.size, b.acc.root(), lines)
                note = cp.sign_as(signer, name)
                cid = _one(self.con.execute("SELECT coalesce(max(id), -1) + 1 FROM checkpoints"))
                self.con.execute(
                    "INSERT INTO checkpoints VALUES (?, ?, ?, ?)",
                    [int(cid[0]) if cid else 0, b.acc.size, signer.key_id, note],
                )
            self.con.execute("COMMIT")
        except BaseException:
            self.in_batch = False
            self.con.execute("ROLLBACK")
            self.views.reset()
            self._acc = None
            self._roster = None
            self._covered = None
            self._guarded = None
            self._tombstones = None
            self._tails = []
            raise
        self.in_batch = False
        if b.entries:
            self._acc = b.acc
            self.views.committed(views, b.acc.size, b.acc.root())
            if self.on_commit is not None:
                self.on_commit(b.acc.size, b.acc.root(), signer.key_id)
            self._guarded = pairs
            if new:
                self._tombstones = None
            self._covered = (b.acc.size, b.acc.root())
            if any(e.kind in ROSTER_KINDS for e in b.entries):
                self._roster = None


#: up to this many digests are looked up through the digest index, more by one join
_POINT_LOOKUPS = 1024

#: the tail of canonical entry bytes, `"kind":"K","seq":N}`, as DuckDB writes a BLOB cast to
#: VARCHAR (every byte outside printable ASCII, and `"` and `\`, as `\xNN`). Read from
#: the last 96 bytes only: decoding whole entries to text cost ~1.6 s per call at a
#: million passages (a purge and an open each paid it), the tail 0.4 s, and an entry
#: that is not UTF-8 no longer escapes the check
_KIND_TAIL = r"\\x22kind\\x22:\\x22([a-z_]+)\\x22,\\x22seq\\x22:[0-9]+\}$"
_TAIL_KINDS = (
    f"SELECT seq, regexp_extract(CAST(entry[-96:] AS VARCHAR), '{_KIND_TAIL}', 1) FROM log "  # noqa: S608 - constants
    "WHERE seq >= ? ORDER BY seq"
)


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


class Batch:
    """Collects one append's rows; `Vault.batch` flushes and checkpoints it."""

    def __init__(self, vault: Vault, acc: merkle.RootAccumulator):
        self.vault = vault
        self.start = acc.size
        #: the tree including every entry appended so far: statements are bound to it
        self.acc = acc
        self.entries: list[LogEntry] = []
        self.rows: Rows = {t: [] for t in VIEW_COLUMNS}
        self.blobs: list[tuple[str, str, str, bytes, bytes]] = []
        self.wraps: list[tuple[str, str, int, str, str]] = []

    @property
    def next_seq(self) -> int:
        return self.start + len(self.entries)

    def append(self, item: LogEntry | Statement) -> int:
        """Stamp the entry with its position, so a moved or swapped entry names itself.

        A `Statement` is signed here, bound to its seq and the root of the log before it.
        """
        seq = self.next_seq
        if isinstance(item, Statement):
            place = place_of(self.vault.origin, seq, self.acc.root())
            item = make_statement(item.kind, item.body, item.signer, place)
        entry = item.at(seq)
        self.entries.append(entry)
        self.acc.append(entry.leaf)
        derive(seq, entry, self.rows)
        return seq

    def put_blob(self, digest: str, collection: str, dk_id: str, nonce: bytes, ct: bytes) -> None:
        self.blobs.append((digest, collection, dk_id, nonce, ct))

    def put_wrap(
        self, dk_id: str, collection: str, generation: int, recipient: str, wrapped: dict[str, str]
    ) -> None:
        self.wraps.append((dk_id, collection, generation, recipient, canonical(wrapped).decode()))

    def delete_blobs(self, digest: str) -> None:
        """Only reachable from store.purge, after its tombstone entry is in this batch."""
        self.vault.con.execute("DELETE FROM blobs WHERE digest = ?", [digest])

    def flush(self) -> None:
        con = self.vault.con
        log = pa.table(
            {
                "seq": pa.array([self.start + i for i in range(len(self.entries))], pa.int64()),
                "kind": pa.array([e.kind for e in self.entries], pa.string()),
                "entry": pa.array([e.data for e in self.entries], pa.binary()),
                "leaf_hash": pa.array([e.leaf for e in self.entries], pa.binary()),
            }
        )
        con.register("_new_log", log)
        con.execute("INSERT INTO log SELECT * FROM _new_log")
        con.unregister("_new_log")
        for table, rows in self.rows.items():
            if rows:
                insert_rows(con, table, rows)
        if self.blobs:
            blobs = pa.table(
                {
                    "digest": [b[0] for b in self.blobs],
                    "collection": [b[1] for b in self.blobs],
                    "dk_id": [b[2] for b in self.blobs],
                    "nonce": pa.array([b[3] for b in self.blobs], pa.binary()),
                    "ct": pa.array([b[4] for b in self.blobs], pa.binary()),
                }
            )
            con.register("_new_blobs", blobs)
            con.execute(
                "INSERT INTO blobs SELECT DISTINCT ON (digest, collection) * FROM _new_blobs n "
                "WHERE NOT EXISTS (SELECT 1 FROM blobs b "
                "WHERE b.digest = n.digest AND b.collection = n.collection)"
            )
            con.unregister("_new_blobs")
        if self.wraps:
            con.executemany("INSERT OR IGNORE INTO data_keys VALUES (?, ?, ?, ?, ?)", self.wraps)


#: Arrow types that DuckDB reads as exactly the column's type, so no CAST is needed
_INSERTS: dict[tuple[str, str], tuple[str, str]] = {}


def _insert_sql(table: str, target: str) -> tuple[str, str]:
    """(typed INSERT, INSERT with CASTs) for `table`'s rows into `target`, built once."""
    sql = _INSERTS.get((table, target))
    if sql is None:
        cols = VIEW_COLUMNS[table]
        names = ", ".join(c for c, _t in cols)
        casts = ", ".join(f"CAST({c} AS {t})" for c, t in cols)
        sql = (
            f"INSERT INTO {target} ({names}) SELECT * FROM _new_rows",  # noqa: S608
            f"INSERT INTO {target} ({names}) SELECT {casts} FROM _new_rows",  # noqa: S608
        )
        if len(_INSERTS) < 256:  # targets are fixed names; bound it anyway
            _INSERTS[(table, target)] = sql
    return sql


def insert_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: list[tuple[Any, ...]],
    target: str | None = None,
) -> None:
    """Bulk insert through Arrow: per-row INSERTs are far too slow at a million passages."""
    insert_table(con, table, rows_table(table, rows), target)


def insert_table(
    con: duckdb.DuckDBPyConnection, table: str, rows: RowsTable, target: str | None = None
) -> None:
    """Insert rows built by `rows_table` (possibly in another process)."""
    typed_sql, cast_sql = _insert_sql(table, target or table)
    con.register("_new_rows", rows.table)
    try:
        con.execute(typed_sql if rows.typed else cast_sql)
    finally:
        con.unregister("_new_rows")
