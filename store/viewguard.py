"""The check of the derived tables against the signed views commitment, for an open vault.

The commitment itself (`tracer-views`, group digests) is `store.viewcommit`; mending a
table from the log is `store.viewmend`.  This module holds what is trusted: which group
digests were proven to be what the covering checkpoint signed, which tables hash as
they say since the log last grew, and the digests a writer's batch signs over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

import duckdb

from store.errors import VaultDamagedError
from store.schema import VIEW_COLUMNS
from store.viewcommit import (
    GROUP,
    Digests,
    Mend,
    RecordedMend,
    commitment,
    differing,
    insert_groups,
    recorded_mends,
    signed_commitment,
    table_digests,
    tables_digests,
)
from store.viewmend import ViewMender

if TYPE_CHECKING:
    from store.vault import Vault

__all__ = ["ViewGuard"]


class ViewGuard:
    """The one owner of the derived tables' check for an open vault: which tables were
    found to hash as the signed checkpoint says and the cached group digests; a table
    that does not is handed to its `mender` (`ViewMender`).

    Checked tables stay checked while this process holds the file (DuckDB's lock keeps
    other writers out); an append moves the commitment on and keeps them checked, since
    the writer derived the rows it added."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._checked: set[str] = set()
        self._trusted: Digests | None = None
        self._at: tuple[int, bytes] | None = None
        self.mender = ViewMender(vault)
        #: what a reader should be told, and the mends `verify` reports (the mender's)
        self.warnings: list[str] = self.mender.warnings
        self.mended: list[Mend] = self.mender.mended
        #: set by `verify`, which rebuilds every table from the log and reports each edit
        self.verifying = False

    @contextmanager
    def unchecked(self) -> Iterator[None]:
        """For `verify` alone, which derives every table from the log itself and reports
        each edited row as a finding: nothing is mended before it has looked."""
        before, self.verifying = self.verifying, True
        self.mender.drop_shadows()
        self._checked.clear()
        try:
            yield
        finally:
            self.verifying = before

    def recorded(self) -> list[RecordedMend]:
        """Every in-place mend this vault file records (`recorded_mends`)."""
        return recorded_mends(self._vault.con)

    def reset(self) -> None:
        """Forget what was checked: a batch rolled back."""
        self._checked, self._trusted, self._at = set(), None, None

    # -- the signed side ---------------------------------------------------------------

    def _tree(self) -> tuple[int, bytes]:
        acc = self._vault.tree.accumulator()
        return acc.size, acc.root()

    def _signed(self, size: int, root: bytes) -> str | None:
        try:
            cp = self._vault.tree.covering_checkpoint(size, root)
        except VaultDamagedError:
            return None  # a roster that does not hold signs nothing: derive from the log (forensic)
        if cp is None:
            return None
        return signed_commitment(cp.extensions)

    def _stored(self) -> Digests:
        out: Digests = {t: {} for t in VIEW_COLUMNS}
        try:
            rows = self._vault.con.execute("SELECT tbl, grp, digest FROM view_groups").fetchall()
        except duckdb.CatalogException:
            return out
        for tbl, grp, digest in rows:
            if str(tbl) in out:
                out[str(tbl)][int(grp)] = str(digest)
        return out

    def _current(self, tables: Iterable[str]) -> Digests:
        return tables_digests(self._vault.con, tables)

    def trusted(self) -> Digests | None:
        """Group digests proven to be what the covering checkpoint signed (None for a vault
        whose head checkpoint predates the commitment, or with no covering checkpoint)."""
        here = self._tree()
        if self._at != here:
            self._at, self._trusted, self._checked = here, None, set()
        if self._trusted is not None:
            return self._trusted
        signed = self._signed(*here)
        if signed is None:
            return None
        stored = self._stored()
        if commitment(stored) == signed:
            self._trusted = stored
            return stored
        # the cache itself was edited (or rows and cache alike): hash the tables, then
        # derive from the log whatever still disagrees
        current = self._current(VIEW_COLUMNS)
        if commitment(current) != signed:
            self.mender.rederive(current, stored)
            if commitment(current) != signed:
                raise VaultDamagedError(
                    f"{self._vault.path}: view_commitment_mismatch: the derived tables, derived again "
                    "from the log, do not hash as the latest checkpoint signs (run `tracer verify`)"
                )
        self._trusted = current
        self._save_cache(current)
        return current

    # -- the reader's check ------------------------------------------------------------

    def require(self, *tables: str) -> None:
        """Before a decision reads `tables`: prove each hashes as signed, mending it from the
        log when it does not; raise VaultDamagedError when that fails too."""
        if self.verifying:
            return
        wanted = self._unchecked(tables)
        if not wanted:
            return
        trusted = self.trusted()
        currents = tables_digests(self._vault.con, wanted)
        for table in wanted:
            current = currents[table]
            expected = None if trusted is None else trusted[table]
            # no commitment (None): derive the whole table from the log
            bad = None if expected is None else differing(current, expected)
            if bad is None or bad:
                self.mender.mend(table, bad, expected, current)
            self._checked.add(table)

    def _unchecked(self, tables: Iterable[str]) -> list[str]:
        """Those of `tables` not proven since the log last grew (all of them once it grew)."""
        return [t for t in tables if t not in self._checked or self._at != self._tree()]

    def check_aside(
        self,
        tables: Iterable[str],
        hold: Callable[[], AbstractContextManager[object]],
        between: Callable[[], bool] = lambda: True,
    ) -> list[str]:
        """`require` for an interactive reader, with the hashing done outside `hold` (the
        lock that serialises use of the vault's connection), on a cursor of its own, one
        group per query, calling `between()` before each (False: stop, nothing checked).

        Under `hold` again, a table is marked checked only if the digests seen equal the
        trusted ones at that moment: only this process writes the file, and each of its
        batches re-derives the trusted digests of the groups it writes, so rows changed
        after they were hashed make the digests differ, and the table is left for
        `require` to check the usual way.  Returns the tables marked checked."""
        with hold():
            trusted = None if self.verifying else self.trusted()
            wanted = [t for t in tables if t not in self._checked]
            if trusted is None or not wanted:
                return []
            cursor = self._vault.con.cursor()
        try:
            seen = _hash_aside(cursor, wanted, trusted, between)
        finally:
            cursor.close()
        if seen is None:
            return []
        with hold():
            return self._mark_unchanged(seen)

    def _mark_unchanged(self, seen: Digests) -> list[str]:
        """Mark checked the tables whose digests seen are still the trusted ones (under the lock)."""
        now = None if self.verifying else self.trusted()
        if now is None:
            return []
        done = [t for t, groups in seen.items() if groups == now[t]]
        self._checked.update(done)
        return done

    def _save_cache(self, digests: Digests) -> None:
        if self._vault.read_only or self._vault.in_batch:
            return
        con = self._vault.con
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("DELETE FROM view_groups")
            insert_groups(con, digests)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    # -- the writer's side -------------------------------------------------------------

    def before_append(self, start: int, tables: Iterable[str] | None = None) -> Digests:
        """The digests a batch starting at `start` may sign over: the trusted ones, with the
        rows of the group it appends to checked (and mended) first in `tables` (None: all).
        A vault whose head predates the commitment has every table derived from the log once.

        `Vault.batch` asks first with no tables, then again, just before its rows are
        inserted, with the tables it writes: only their current group is hashed again
        after the append (`after_append`); every other table's signed digests are carried
        over as they were checked, so an edit there is never signed over."""
        trusted = self.trusted()
        if trusted is None:
            trusted = {}
            for table in VIEW_COLUMNS:
                current = table_digests(self._vault.con, table)
                self.mender.mend(table, None, None, current)
                trusted[table] = table_digests(self._vault.con, table)
            self._trusted = trusted
            self._checked = set(VIEW_COLUMNS)
            return trusted
        g = start // GROUP
        asked = list(VIEW_COLUMNS) if tables is None else sorted(set(tables))
        nows = tables_digests(self._vault.con, asked, g * GROUP, start)
        for table in asked:
            now = nows[table].get(g)
            if now != trusted[table].get(g):
                self.mender.mend(table, {g}, trusted[table], {g: now} if now else {})
        return trusted

    def after_append(
        self, trusted: Digests, start: int, size: int, tables: Iterable[str] | None = None
    ) -> Digests:
        """`trusted` with the groups entries `start`..`size-1` touched hashed again (inside
        the batch's transaction), written to the cache; what the new checkpoint signs.

        `tables`: the tables the batch added rows to (None: all). Any other table's rows
        are those `before_append` checked, so its trusted digests stand: a hold or a purge
        no longer re-hashes the current group of the passage and digest tables."""
        con = self._vault.con
        lo = (start // GROUP) * GROUP
        out: Digests = {t: dict(gs) for t, gs in trusted.items()}
        touched = range(start // GROUP, (size - 1) // GROUP + 1)
        rehash = set(VIEW_COLUMNS) if tables is None else set(tables)
        # the tables the batch added rows to hold rows in the groups it touched
        hashed = tables_digests(
            con, [t for t in VIEW_COLUMNS if t in rehash], lo, size, held=tables is not None
        )
        for table in VIEW_COLUMNS:
            if table not in rehash:
                out.setdefault(table, {})
                continue
            groups = out.setdefault(table, {})
            for g in touched:
                groups.pop(g, None)
            groups.update(hashed[table])
        con.execute(f"DELETE FROM view_groups WHERE grp >= {start // GROUP}")  # noqa: S608
        insert_groups(con, {t: {g: d for g, d in gs.items() if g >= start // GROUP} for t, gs in out.items()})
        return out

    def committed(self, digests: Digests, size: int, root: bytes) -> None:
        """After the batch committed: what it signed is what is trusted now."""
        self._at, self._trusted = (size, root), digests


def _hash_aside(
    cursor: duckdb.DuckDBPyConnection, wanted: list[str], trusted: Digests, between: Callable[[], bool]
) -> Digests | None:
    """The group digests of each of `wanted` up to its last trusted group, one group per
    query with `between()` asked before each (None: it said stop); a table with rows past
    that group is left out, since it differs from the trusted digests already."""
    seen: Digests = {}
    for table in wanted:
        groups: dict[int, str] = {}
        last = max(trusted[table], default=-1)
        for g in range(last + 1):
            if not between():
                return None
            groups.update(table_digests(cursor, table, g * GROUP, (g + 1) * GROUP))
        # rows past the last trusted group make the table differ
        if not table_digests(cursor, table, (last + 1) * GROUP):
            seen[table] = groups
    return seen
