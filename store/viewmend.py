"""Mending a derived table from the log: the rows a group of entries derives, what the
stored rows differ by, and the replacement (in place, or shadowed in a read-only vault).

`ViewGuard` (store.viewguard) decides *when* a table must be mended: a group whose rows
do not hash as the signed checkpoint says.  This module decides *how*: the group is
derived again from its entries, each checked against its stored leaf; the derived rows
must hash as signed before they replace anything; each replaced row is recorded for
`verify` (`view_mends`) and a warning tells the reader.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from store.entries import LogEntry
from store.errors import VaultDamagedError
from store.rowtables import insert_rows, insert_values
from store.schema import VIEW_COLUMNS, view_ddl
from store.viewcommit import (
    GROUP,
    SOURCES,
    Digests,
    Mend,
    RowDiff,
    differing,
    differing_derived,
    rows_digest_of,
    span,
)
from store.views import Rows, derive

if TYPE_CHECKING:
    from store.vault import Vault

__all__ = ["ViewMender"]


class ViewMender:
    """The one owner of what mending did in an open vault: the warnings a reader is shown,
    the in-place mends `verify` reports, and the tables a session-local copy shadows."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        #: what a reader should be told: tables mended from the log
        self.warnings: list[str] = []
        #: the mends themselves, which `verify` reports as findings
        self.mended: list[Mend] = []
        #: tables a session-local copy shadows (read-only vaults)
        self._shadowed: set[str] = set()

    def drop_shadows(self) -> None:
        """Drop the session's mended copies: `verify` compares the tables as the file holds them."""
        for table in self._shadowed:
            self._vault.con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")
        self._shadowed.clear()

    def rederive(self, current: Digests, stored: Digests) -> None:
        """Replace in `current` each group whose table digest and cached digest disagree by
        the digest of that group's rows derived from the log (no rows: no group)."""
        for table in VIEW_COLUMNS:
            bad = differing(current[table], stored[table])
            if not bad:
                continue
            derived = self.derive(table, bad)
            for g in bad:
                digest = rows_digest_of(table, derived.get(g))
                if digest is not None:
                    current[table][g] = digest
                else:
                    current[table].pop(g, None)

    def mend(
        self, table: str, bad: set[int] | None, expected: dict[int, str] | None, current: dict[int, str]
    ) -> None:
        derived = self.derive(table, bad)
        if bad is None:
            bad = differing_derived(table, current, derived)
            if not bad:
                return
        if expected is not None:
            self._refuse_unsigned(table, bad, derived, expected)
        rows = [r for g in sorted(bad) for r in derived.get(g, [])]
        diffs = self._diffs(table, bad, rows) if not self._vault.read_only else ()
        self._replace(table, bad, rows, diffs)
        if diffs:
            # in place, the edit is gone from the file: verify reports each row from here
            self.mended.append(Mend(table, tuple(g * GROUP for g in sorted(bad)), diffs))
        self.warnings.append(
            f"derived table {table}: rows of entries {span(bad)} disagreed with the log's signed "
            "commitment and were derived again from the log entries (someone edited the file; "
            "`tracer verify` reports it)"
        )

    def _refuse_unsigned(
        self, table: str, bad: set[int], derived: dict[int, list[tuple[Any, ...]]], expected: dict[int, str]
    ) -> None:
        """Raise VaultDamagedError unless every group of `bad`, derived from the log, hashes
        as the signed commitment says."""
        for g in bad:
            if rows_digest_of(table, derived.get(g)) != expected.get(g):
                raise VaultDamagedError(
                    f"{self._vault.path}: view_commitment_mismatch: {table} rows of entries "
                    f"{span([g])}, derived again from the log, do not hash as "
                    "the signed checkpoint says (run `tracer verify`)"
                )

    def derive(self, table: str, groups: set[int] | None) -> dict[int, list[tuple[Any, ...]]]:
        """`table`'s rows, by group, derived from the entries that produce them, each entry
        checked against its stored leaf (which the signed tree covers)."""
        out: dict[int, list[tuple[Any, ...]]] = {}
        for seq, _kind, data, stored in self._vault.index.rows_claiming(SOURCES[table]):
            g = seq // GROUP
            if groups is not None and g not in groups:
                continue
            rows: Rows = {t: [] for t in VIEW_COLUMNS}
            try:
                entry = LogEntry.from_bytes(data)
                if entry.leaf != stored:
                    continue  # rewritten bytes vouch for nothing; verify names them
                derive(seq, entry, rows)
            except (KeyError, TypeError, ValueError, AttributeError):
                continue  # a damaged entry derives nothing; verify names it
            if rows[table]:
                out.setdefault(g, []).extend(rows[table])
        return out

    def _diffs(self, table: str, groups: set[int], rows: list[tuple[Any, ...]]) -> tuple[RowDiff, ...]:
        """The stored rows of `groups` that the log does not derive, and the reverse, each
        as verify's view comparison reports it (`store.audit`): same problem words."""
        con = self._vault.con
        names = [c for c, _t in VIEW_COLUMNS[table]]
        listed = ", ".join(names)
        where = " OR ".join(f"(seq >= {g * GROUP} AND seq < {(g + 1) * GROUP})" for g in sorted(groups))
        scratch = f"m_{table}"
        con.execute(f"DROP TABLE IF EXISTS temp.{scratch}")
        con.execute(view_ddl(table, scratch, temporary=True))
        try:
            if rows:
                insert_rows(con, table, rows, target=f"temp.{scratch}")
            found = con.execute(
                f"SELECT {listed}, sum(side) FROM (SELECT {listed}, 1 AS side FROM {table} WHERE {where} "  # noqa: S608
                f"UNION ALL SELECT {listed}, -1 AS side FROM temp.{scratch}) "
                f"GROUP BY {listed} HAVING sum(side) <> 0 ORDER BY {listed}"
            ).fetchall()
        finally:
            con.execute(f"DROP TABLE IF EXISTS temp.{scratch}")
        out: list[RowDiff] = []
        for r in found:
            problem = "view_row_altered_or_extra" if r[-1] > 0 else "view_row_missing_or_altered"
            values = dict(zip(names, r[:-1], strict=True))
            out += [RowDiff(problem, int(r[0]), values)] * min(abs(int(r[-1])), 100)
        # as verify lists them: stored rows the log does not derive first, then the missing
        return tuple(sorted(out, key=lambda d: d.problem != "view_row_altered_or_extra"))

    def _shadow(self, table: str, where: str, rows: list[tuple[Any, ...]]) -> None:
        """A session-local copy shadows the stored table; the file stays as it was found."""
        con = self._vault.con
        self._shadowed.add(table)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM main.{table}")  # noqa: S608
        con.execute(f"DELETE FROM temp.main.{table} WHERE {where}")  # noqa: S608
        if rows:
            insert_rows(con, table, rows, target=f"temp.main.{table}")

    def _replace(
        self, table: str, groups: set[int], rows: list[tuple[Any, ...]], diffs: tuple[RowDiff, ...] = ()
    ) -> None:
        con = self._vault.con
        where = " OR ".join(f"(seq >= {g * GROUP} AND seq < {(g + 1) * GROUP})" for g in sorted(groups))
        if self._vault.read_only:
            self._shadow(table, where, rows)
            return
        own = not self._vault.in_batch  # inside a batch, its transaction holds the mend
        if own:
            con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f"DELETE FROM {table} WHERE {where}")  # noqa: S608
            if rows:
                insert_rows(con, table, rows)
            if diffs:
                size = self._vault.size()
                insert_values(
                    con,
                    "INSERT INTO view_mends",
                    "(?, ?, ?, ?, ?)",
                    [
                        [size, table, d.problem, d.seq, json.dumps(d.values, default=str, sort_keys=True)]
                        for d in diffs
                    ],
                )
            if own:
                con.execute("COMMIT")
        except BaseException:
            if own:
                con.execute("ROLLBACK")
            raise
