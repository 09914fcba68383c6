"""One all-or-nothing append: entries, view rows, blobs and a signed checkpoint.

`Vault.batch` is the only way anything is added to a vault. The order is the point:
check that a valid checkpoint covers the log as it is, check the derived tables against
the commitment that checkpoint signed, insert, then sign a checkpoint that commits to the
new tree, the guarded entries and the derived tables, in the same transaction. A writer
never signs over rows it has not checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from store import merkle
from store.canonical import canonical
from store.crypto import Identity
from store.entries import ROSTER_KINDS, LogEntry, Statement, make_statement, place_of
from store.errors import AccessDeniedError, VaultError
from store.guarded import GUARDED_KINDS, extension_line
from store.rowtables import insert_rows, insert_values
from store.schema import VIEW_COLUMNS
from store.viewcommit import extension_line as views_line
from store.views import Rows, derive

if TYPE_CHECKING:
    import duckdb

    from store.vault import Vault

__all__ = ["Batch", "append_batch"]

#: up to this many rows in every table (and no text), a batch is inserted with plain
#: parameters: building Arrow tables for one access entry costs more than its rows, and
#: makes pyarrow import pandas wherever pandas is installed
SMALL_BATCH = 16


class Batch:
    """Collects one append's rows; `append_batch` flushes and checkpoints it."""

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

    def is_small(self) -> bool:
        """Few enough rows for `_flush_small` (an unlock's or a look's access entry)."""
        return (
            not self.blobs
            and len(self.entries) <= SMALL_BATCH
            and all(len(rows) <= SMALL_BATCH for rows in self.rows.values())
        )

    def flush(self) -> None:
        con = self.vault.con
        if self.is_small():
            self._flush_small(con)
            return
        self._flush_log(con)
        for table, rows in self.rows.items():
            if rows:
                insert_rows(con, table, rows)
        if self.blobs:
            self._flush_blobs(con)
        if self.wraps:
            insert_values(con, "INSERT OR IGNORE INTO data_keys", "(?, ?, ?, ?, ?)", self.wraps)

    def _flush_log(self, con: duckdb.DuckDBPyConnection) -> None:
        import pyarrow as pa

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

    def _flush_blobs(self, con: duckdb.DuckDBPyConnection) -> None:
        import pyarrow as pa

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

    def _flush_small(self, con: duckdb.DuckDBPyConnection) -> None:
        """`flush` without Arrow: the same rows, the same casts as `rowtables.insert_rows`."""
        insert_values(
            con,
            "INSERT INTO log (seq, kind, entry, leaf_hash)",
            "(?, ?, ?, ?)",
            [(self.start + i, e.kind, e.data, e.leaf) for i, e in enumerate(self.entries)],
        )
        for table, rows in self.rows.items():
            if rows:
                cols = VIEW_COLUMNS[table]
                names = ", ".join(c for c, _t in cols)
                casts = ", ".join(f"CAST(? AS {t})" for _c, t in cols)
                insert_values(con, f"INSERT INTO {table} ({names})", f"({casts})", rows)
        if self.wraps:
            insert_values(con, "INSERT OR IGNORE INTO data_keys", "(?, ?, ?, ?, ?)", self.wraps)


def _signer_name(vault: Vault, signer: Identity) -> str:
    """The name the roster gives `signer`'s key: checkpoints are signed under it."""
    name = vault.roster().signer_name(signer.key_id)
    if name is None:
        raise AccessDeniedError(
            f"{vault.path}: key {signer.key_id[:16]} is neither the custodian's nor an active "
            "investigator's: it cannot sign this vault's checkpoints"
        )
    return name


@contextmanager
def append_batch(vault: Vault, signer: Identity, *, in_transaction: bool = False) -> Iterator[Batch]:
    """The body of `Vault.batch`; `in_transaction` is for `Vault.create` only, which has
    already begun the transaction and has no roster yet."""
    if vault.read_only:
        raise VaultError(f"{vault.path}: vault is open read-only")
    vault.blobs.drop_index()
    acc = vault.tree.accumulator()
    if in_transaction:
        name = signer.name
    else:
        vault.tree.require_covered(acc)
        name = _signer_name(vault, signer)
    # the guarded entries already there, read before this batch's rows are inserted
    guarded = list(vault.index.guarded_pairs())
    # the view digests it may sign over (their current groups are checked below)
    trusted = {} if in_transaction else vault.views.before_append(acc.size, ())
    b = Batch(vault, acc.copy())
    if not in_transaction:
        vault.con.execute("BEGIN TRANSACTION")
    vault.in_batch = True
    try:
        yield b
        if b.entries:
            written = [t for t, r in b.rows.items() if r]
            if not in_transaction:
                # the rows of the groups this batch adds to, checked before any is inserted
                vault.views.before_append(acc.size, written)
            b.flush()
            new = [(b.start + i, e.leaf) for i, e in enumerate(b.entries) if e.kind in GUARDED_KINDS]
            pairs = [*guarded, *new]
            views = vault.views.after_append(trusted, b.start, b.acc.size, written)
            vault.tree.publish(signer, name, b.acc, (extension_line(pairs), views_line(views)))
        vault.con.execute("COMMIT")
    except BaseException:
        vault.in_batch = False
        vault.con.execute("ROLLBACK")
        vault.forget_tree()
        raise
    vault.in_batch = False
    if b.entries:
        vault.tree.committed(b.acc)
        vault.views.committed(views, b.acc.size, b.acc.root())
        if vault.on_commit is not None:
            vault.on_commit(b.acc.size, b.acc.root(), signer.key_id)
        vault.index.appended(pairs, bool(new))
        if any(e.kind in ROSTER_KINDS for e in b.entries):
            vault.rosters.reset()
