"""The vault: one directory, one DuckDB file, an append-only log with signed checkpoints.

DuckDB has no triggers or grants, so append-only is enforced by this API (there is no
update, and the only delete is a blob purge that appends a tombstone in the same
transaction) and made checkable by the Merkle log: any rewrite, reordering or
truncation of entries contradicts a signed checkpoint.

`Vault` is the open file and its log; each other concern is one object it holds, which
owns its own cache: `blobs` (texts and data keys, `store.blobstore`), `index` (entries
selected by the kind their bytes say, `store.logindex`), `rosters` (the folded roster,
`store.rostercache`), `tree` (the accumulator and checkpoints, `store.treehead`) and
`views` (the derived tables' check, `store.viewcommit`). Appends go through `batch`
(`store.batch`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from store import merkle
from store.batch import Batch, append_batch
from store.blobstore import BlobStore
from store.casecache import CaseCache
from store.crypto import Identity, PublicIdentity, b64d, b64e, sha256_hex
from store.entries import EntryKind, LogEntry, Statement
from store.errors import AccessDeniedError, VaultDamagedError, VaultError
from store.logindex import LogIndex
from store.note import Checkpoint
from store.roster import Roster, name_problem
from store.rostercache import RosterCache
from store.rows import EntryRow
from store.rowtables import insert_values
from store.schema import DB_FILE, FORMAT, RAW_DDL, RAW_INDEXES, VIEW_COLUMNS, VIEW_INDEXES, view_ddl
from store.treehead import TreeHead
from store.vaultfile import INDEX_CHUNK, add_views, check_tables, connect, one
from store.viewcommit import DDL as VIEW_GROUPS_DDL
from store.viewguard import ViewGuard

__all__ = ["Batch", "CheckpointRow", "Vault"]

_READ_BATCH = 1_000


@dataclass(frozen=True)
class CheckpointRow:
    id: int
    size: int
    signer: str
    note: str


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


#: beyond this many seqs `Vault.rows_at` joins the list to the log in one query
_JOIN_ABOVE = 480


class Vault:
    """An open vault.  Use `Vault.create` or `Vault.open`; close it when done."""

    def __init__(
        self,
        path: Path,
        con: duckdb.DuckDBPyConnection,
        read_only: bool,
        meta: dict[str, Any] | None = None,
    ):
        self.path = path
        self.con = con
        self.read_only = read_only
        #: the meta rows (`open` has read them already, to check the format)
        self._meta = meta if meta is not None else dict(con.execute("SELECT key, value FROM meta").fetchall())
        self.blobs = BlobStore(con)
        self.index = LogIndex(con)
        self.rosters = RosterCache(self)
        #: the case file folded so far (`store.casecache`)
        self.cases = CaseCache(self)
        self.tree = TreeHead(self)
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
        con = connect(db, read_only=False)
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
            insert_values(con, "INSERT INTO meta", "(?, ?)", list(meta.items()))
            vault = cls(path, con, read_only=False)
            with vault.batch(custodian, _in_transaction=True) as b:
                b.append(
                    Statement(
                        EntryKind.VAULT_INIT,
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
        con = connect(db, read_only=read_only)
        try:
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        except duckdb.Error as exc:
            con.close()
            raise VaultDamagedError(f"{db}: not a tracer vault ({exc})") from exc
        fmt = meta.get("format")
        if fmt != FORMAT:
            con.close()
            raise VaultError(f"{db}: unsupported vault format {fmt!r} (this tracer reads {FORMAT!r})")
        try:
            added = check_tables(con, db)
            if added and read_only:
                raise VaultError(
                    f"{db}: made by an earlier tracer without the view table(s) {', '.join(added)}; "
                    "open it once with write access to add them (they are derived from the log)"
                )
            if added:
                add_views(con, added)
            if not read_only:  # a vault made before an index or table was added gets it once
                for ddl in RAW_INDEXES:
                    con.execute(ddl)
                con.execute(VIEW_GROUPS_DDL)
        except BaseException:
            con.close()
            raise
        return cls(path, con, read_only, meta)

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
        row = one(self.con.execute("SELECT count(*) FROM log"))
        return int(row[0]) if row else 0

    def entry(self, seq: int) -> LogEntry:
        row = one(self.con.execute("SELECT entry FROM log WHERE seq = ?", [seq]))
        if row is None:
            raise VaultError(f"{self.path}: no log entry {seq}")
        return LogEntry.from_bytes(bytes(row[0]))

    def rows_at(self, seqs: Sequence[int]) -> dict[int, tuple[bytes, bytes]]:
        """(entry bytes, stored leaf) of each of `seqs` the log holds, by seq.

        Point look-ups on the log's key, a chunk at a time: joining a view to the log
        instead builds a hash table over the whole log, which a trace paid on every
        answer (see docs/benchmarks.md); a long list is still one join."""
        wanted = sorted(set(seqs))
        out: dict[int, tuple[bytes, bytes]] = {}
        if len(wanted) > _JOIN_ABOVE:  # so many that one pass over the log costs less
            rows = self.con.execute(
                "SELECT l.seq, l.entry, l.leaf_hash FROM (SELECT unnest(?::BIGINT[]) AS seq) AS s "
                "JOIN log AS l ON l.seq = s.seq",
                [wanted],
            ).fetchall()
            return {int(q): (bytes(d), bytes(h)) for q, d, h in rows}
        for i in range(0, len(wanted), INDEX_CHUNK):
            part = wanted[i : i + INDEX_CHUNK]
            marks = ", ".join("?" * len(part))
            rows = self.con.execute(
                f"SELECT seq, entry, leaf_hash FROM log WHERE seq IN ({marks})",  # noqa: S608 - placeholders only
                part,
            ).fetchall()
            for seq, data, leaf in rows:
                out[int(seq)] = (bytes(data), bytes(leaf))
        return out

    def raw_entries(self, start: int = 0, end: int | None = None) -> Iterator[EntryRow]:
        """The log's rows in seq order, read in pages.

        Pages are seq ranges, not `seq > cursor LIMIT n`: DuckDB evaluates the latter by
        reading the entry bytes of every later row for each page (quadratic, and the
        whole log through the buffer pool), while a range is pruned by row-group zonemaps.
        """
        row = one(self.con.execute("SELECT coalesce(max(seq), -1) FROM log"))
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
                yield EntryRow(int(seq), str(kind), bytes(data), bytes(leaf))
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
        row = one(self.con.execute("SELECT id, size, signer, note FROM checkpoints ORDER BY id DESC LIMIT 1"))
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

    # -- the roster and who may write --------------------------------------------------

    def roster(self) -> Roster:
        """The roster folded from the log (`store.roster.load_roster`); refuses a damaged one."""
        return self.rosters.roster()

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

    # -- writing -----------------------------------------------------------------------

    def forget_tree(self) -> None:
        """Drop what this process remembers of the log: a batch failed or the recovery cut
        the log back."""
        self.tree.reset()
        self.rosters.reset()
        self.cases.reset()
        self.index.reset()
        self.views.reset()

    def batch(self, signer: Identity, *, _in_transaction: bool = False) -> AbstractContextManager[Batch]:
        """One all-or-nothing append: entries, view rows, blobs and a signed checkpoint
        (`store.batch.append_batch`).

        The checkpoint is signed under the name the roster gives `signer`'s key, and only
        after checking that a valid checkpoint covers every entry already in the log.
        `_in_transaction` is for `create` only, which has already begun the transaction.
        """
        return append_batch(self, signer, in_transaction=_in_transaction)
