"""Structural facts for verification, computed from the raw log rather than the views.

This module states facts (which sequence numbers are absent, which view rows disagree
with the log, which digests have no blob); deciding what they mean is the engine's job.
Rebuilt views go to temporary tables, so a hand-edited view is never trusted here.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import duckdb

from store.rowtables import RowsTable, insert_rows, insert_table, string_array
from store.schema import VIEW_COLUMNS
from store.vault import Vault
from store.vaultfile import join_wanted
from store.viewcommit import GROUP, tables_digests
from store.views import Rows
from store.words import FindingKind, TextVerdict

__all__ = [
    "DigestVerdict",
    "ViewDiff",
    "ViewRebuild",
    "answer_text_ref",
    "blob_digests_unreferenced",
    "blob_digests_unreferenced_on",
    "compare_range",
    "create_fact_tables",
    "digest_verdicts",
    "digest_verdicts_on",
    "duplicate_answers_on",
    "keep_facts",
    "log_shape",
    "ordered_counts",
    "run_all",
]

#: rebuilt rows held before they go to the temp tables
_FLUSH = 50_000
#: seqs per range when comparing views, and the most differing rows reported per view
_COMPARE = 5_000
_DIFF_LIMIT = 200


@dataclass(frozen=True)
class ViewDiff:
    """A stored view row the log does not derive (or a derived one the view lacks).
    `seq` is None for a stored row whose seq is NULL: anyone who can write the vault
    file can put one there, and it is a finding, not a crash."""

    table: str
    problem: FindingKind
    seq: int | None
    row: str
    values: dict[str, Any] = field(default_factory=dict, compare=False)


def log_shape(vault: Vault) -> tuple[int, list[int], int]:
    """(row count, sequence numbers absent below the maximum, max seq + 1)."""
    row = vault.query("SELECT count(*), coalesce(max(seq), -1) FROM log")[0]
    count, top = int(row[0]), int(row[1])
    gaps: list[int] = []
    if count != top + 1:
        gaps = [
            int(r[0])
            for r in vault.query(
                "SELECT s FROM range(0, ?) t(s) WHERE s NOT IN (SELECT seq FROM log) ORDER BY s LIMIT 1000",
                [top + 1],
            )
        ]
    return count, gaps, top + 1


#: compact tables kept for the whole verification (what the digest, transform and
#: unreferenced-blob checks read); the rebuilt views themselves exist one range at a time
_KEEP = {
    "refs": "seq BIGINT, digest VARCHAR, role VARCHAR, collection VARCHAR, passage_id VARCHAR",
    "answer_refs": "seq BIGINT, answer_id VARCHAR, answer_sha256 VARCHAR, collection VARCHAR",
    "revision_refs": "seq BIGINT, document_id VARCHAR, revision VARCHAR",
    "tombstone_refs": "seq BIGINT, digest VARCHAR",
}
_PROBLEMS = (FindingKind.VIEW_ROW_ALTERED_OR_EXTRA, FindingKind.VIEW_ROW_MISSING_OR_ALTERED)


def _replace_sql(table: str, cols: str) -> str:
    """One statement that makes temp.r_<table>, or empties it by making it afresh (as
    dropping it did: the rows' storage goes with the table, where a DELETE only marks them)."""
    return f"CREATE OR REPLACE TEMP TABLE r_{table} ({cols})"


def _view_cols(table: str) -> str:
    return ", ".join(f"{c} {t}" for c, t in VIEW_COLUMNS[table])


def run_all(con: duckdb.DuckDBPyConnection, statements: Sequence[str]) -> None:
    """`statements` in one call: DuckDB still runs each on its own, but the round trips
    through the Python client, a fixed cost of each call, are paid once."""
    if statements:
        con.execute(";\n".join(statements))


#: rebuilt rows in a range up to which one query counts the differing rows of every view
_COUNT_ALL_ROWS = 20_000
#: the rebuilt views `keep_facts` joins in every range
_MADE_FIRST = ("v_digests", "v_passages")


def _lo(seq: int) -> int:
    return seq - seq % _COMPARE


class _Ranges:
    """The views rebuilt and compared one seq range at a time.

    Rows of different seq never match, so the union of the per-range multiset
    differences (`EXCEPT ALL` both ways) is the whole one; diffs are kept per
    (view, problem) with their range and put in the old order (view, problem, seq) at
    the end, at most `_DIFF_LIMIT` each.

    A view is compared in a range only where one side can hold a row there: the rebuilt
    side when rows were inserted into it in this range (`touched`), the stored side when
    the one query over every view (`stored_ranges`) found a row of it in the range.  Where
    both are empty the grouped comparison returns nothing, so skipping it changes no
    finding; on a small vault most views are empty, and each comparison is a statement
    with a fixed cost of milliseconds.
    """

    def __init__(self, vault: Vault, start: int = 0) -> None:
        self.vault = vault
        #: rows of entries before `start` are not rebuilt: a receipt's digests vouch for them
        self.start = start
        self.done: set[int] = {lo for lo in range(0, _lo(start), _COMPARE)}
        self.diffs: dict[tuple[str, str], list[tuple[int | None, ViewDiff]]] = {
            (t, p): [] for t in VIEW_COLUMNS for p in _PROBLEMS
        }
        #: views whose temp.r_<view> exists (made on the first rows for it, but the two
        #: the kept `r_refs` is joined from, made here), and those of them that received
        #: rows since it was last made empty
        self.made: set[str] = set(_MADE_FIRST)
        self.touched: set[str] = set()
        #: rebuilt rows inserted in the current range
        self.held = 0
        self._stored: dict[str, set[int | None]] | None = None
        run_all(
            vault.con,
            [_replace_sql(name, cols) for name, cols in _KEEP.items()]
            + [_replace_sql(table, _view_cols(table)) for table in _MADE_FIRST],
        )
        # read before any rebuilt row is held: the query's hash tables and the rebuilt
        # views are then never in memory at once
        self.stored_ranges()

    def ready(self, table: str, rows: int) -> None:
        """temp.r_<table> exists and its `rows` are noted as held: call before inserting."""
        if table not in self.made:
            self.vault.con.execute(_replace_sql(table, _view_cols(table)))
            self.made.add(table)
        self.touched.add(table)
        self.held += rows

    def stored_ranges(self) -> dict[str, set[int | None]]:
        """Per stored view, the first seq of every compare range it has a row in (None for
        rows with a NULL seq): one query over every view, once per verification.

        Nothing writes the stored views while a verification runs (`ViewGuard.unchecked`
        mends nothing, and DuckDB's lock keeps other processes out), so what it read when
        the verification began holds for every comparison and for `finish`."""
        if self._stored is None:
            found: dict[str, set[int | None]] = {t: set() for t in VIEW_COLUMNS}
            names = list(VIEW_COLUMNS)
            sql = " UNION ALL ".join(
                f"SELECT DISTINCT {i} AS v, seq - ((seq % {_COMPARE} + {_COMPARE}) % {_COMPARE}) AS lo "  # noqa: S608
                f"FROM {table}"
                for i, table in enumerate(names)
            )
            for v, lo in self.vault.query(sql):
                found[names[int(v)]].add(None if lo is None else int(lo))
            self._stored = found
        return self._stored

    def close(self, lo: int, rows: Rows) -> None:
        """Compare range [lo, lo + _COMPARE) of temp.r_<view>, keep the compact facts, empty it."""
        _flush(self.vault, rows, self)
        keep_facts(self.vault.con, self.touched)
        self.compare(lo)
        self.done.add(lo)
        run_all(self.vault.con, [_replace_sql(t, _view_cols(t)) for t in VIEW_COLUMNS if t in self.touched])
        self.touched.clear()
        self.held = 0

    def compare(self, lo: int) -> None:
        """Both directions in one grouped pass: per distinct row, how often each side holds it.

        A row held more often in the stored view is altered or extra there; more often
        in the rebuilt one, missing or altered (the multiset difference `EXCEPT ALL`
        gives, at a single scan of each side).  Views empty on both sides in the range
        are skipped (see the class); of the others, when the range is small, one query
        first counts the rows that differ in each (the same grouping), and only those
        where some do are read.  (That query holds every view's grouping at once, so a
        large range compares view by view, as one grouping at a time.)
        """
        where = f"seq >= {max(int(lo), self.start)} AND seq < {int(lo) + _COMPARE}"
        stored = self.stored_ranges()
        tables = [
            table
            for table in VIEW_COLUMNS
            if any(len(self.diffs[(table, p)]) < _DIFF_LIMIT for p in _PROBLEMS)
            and (table in self.touched or int(lo) in stored[table])
        ]
        if len(tables) > 1 and self.held <= _COUNT_ALL_ROWS:
            counts = self.vault.query(
                " UNION ALL ".join(
                    f"SELECT {i} AS v, count(*) AS n FROM ({_differing(table, where, table in self.touched)})"  # noqa: S608
                    for i, table in enumerate(tables)
                )
            )
            differ = {int(v) for v, n in counts if int(n)}
            tables = [table for i, table in enumerate(tables) if i in differ]
        for table in tables:
            names = [c for c, _t in VIEW_COLUMNS[table]]
            listed = ", ".join(names)
            rows = self.vault.query(
                f"SELECT * FROM ({_differing(table, where, table in self.touched)}) "  # noqa: S608
                f"QUALIFY row_number() OVER (PARTITION BY d > 0 ORDER BY {listed}) <= {_DIFF_LIMIT} "
                f"ORDER BY {listed}"
            )
            for r in rows:
                problem = _PROBLEMS[0] if r[-1] > 0 else _PROBLEMS[1]
                kept = self.diffs[(table, problem)]
                values = dict(zip(names, r[:-1], strict=True))
                shown = json.dumps(values, default=str, ensure_ascii=False)
                for _copy in range(min(abs(int(r[-1])), _DIFF_LIMIT - len(kept))):
                    kept.append((lo, ViewDiff(table, problem, _seq(r[0]), shown[:400], values)))

    def finish(self) -> list[ViewDiff]:
        """Stored rows in ranges without log entries (negative, absent, NULL seqs); all diffs in order."""
        stored = self.stored_ranges()
        for table in VIEW_COLUMNS:
            lows = sorted(stored[table], key=lambda lo: (lo is None, lo or 0))
            for lo in lows:
                if lo is None or int(lo) not in self.done:
                    self._compare_one(table, None if lo is None else int(lo))
        # the temp.r_<view> tables are left, empty since their range closed: dropping
        # them costs a statement each, and a later verification on this connection makes
        # each afresh before it inserts (`ready`) and reads none it did not fill
        out: list[ViewDiff] = []
        for (_table, _problem), kept in self.diffs.items():
            kept.sort(key=lambda t: (t[0] is None, t[0] or 0))
            out.extend(d for _lo_, d in kept[:_DIFF_LIMIT])
        return out

    def _compare_one(self, table: str, lo: int | None) -> None:
        cols = VIEW_COLUMNS[table]
        names = ", ".join(c for c, _t in cols)
        if lo is None:
            where = "seq IS NULL"
        else:
            first = int(lo) if int(lo) < 0 else max(int(lo), self.start)
            where = f"seq >= {first} AND seq < {int(lo) + _COMPARE}"
        kept = self.diffs[(table, _PROBLEMS[0])]
        # the rebuilt side holds no rows here (every range was emptied when it closed),
        # and a multiset minus nothing is itself
        rebuilt = ""
        if table in self.touched:
            rebuilt = f" EXCEPT ALL SELECT {names} FROM temp.r_{table} WHERE {where}"  # noqa: S608
        rows = self.vault.query(
            f"SELECT {names} FROM {table} WHERE {where}{rebuilt} "  # noqa: S608
            f"ORDER BY {names} LIMIT {_DIFF_LIMIT}"
        )
        for r in rows:
            values = dict(zip([c for c, _t in cols], r, strict=True))
            shown = json.dumps(values, default=str, ensure_ascii=False)
            kept.append((lo, ViewDiff(table, _PROBLEMS[0], _seq(r[0]), shown[:400], values)))


def _seq(value: Any) -> int | None:
    return None if value is None else int(value)


def _differing(table: str, where: str, rebuilt: bool) -> str:
    """Each distinct row of `table` in `where` held a different number of times by the
    stored view and by temp.r_<table>, with that difference `d` (stored minus rebuilt).
    Without `rebuilt` (no rows were rebuilt for it) the stored side alone, the same
    rows the union with an empty side gives."""
    listed = ", ".join(c for c, _t in VIEW_COLUMNS[table])
    other = ""
    if rebuilt:
        other = f" UNION ALL SELECT {listed}, -1 AS side FROM temp.r_{table} WHERE {where}"  # noqa: S608
    return (
        f"SELECT {listed}, sum(side) AS d FROM ("  # noqa: S608 - fixed names, ints only
        f"SELECT {listed}, 1 AS side FROM {table} WHERE {where}{other}) "
        f"GROUP BY {listed} HAVING sum(side) <> 0"
    )


def create_fact_tables(con: duckdb.DuckDBPyConnection) -> None:
    """The compact tables (`_KEEP`) the digest, duplicate and unreferenced checks read."""
    run_all(con, [_replace_sql(name, cols) for name, cols in _KEEP.items()])


#: each kept table, the rebuilt view it is read from, and how
_KEEP_FROM = (
    (
        "v_digests",
        """
        INSERT INTO temp.r_refs
        SELECT d.seq, d.digest, d.role, d.collection, p.passage_id
        FROM temp.r_v_digests d
        LEFT JOIN (
            SELECT seq, retrieved_sha256 AS dg, passage_id FROM temp.r_v_passages
            UNION ALL
            SELECT seq, model_input_sha256 AS dg, passage_id FROM temp.r_v_passages
        ) p ON p.seq = d.seq AND p.dg = d.digest
        QUALIFY row_number() OVER (PARTITION BY d.seq, d.digest, d.role ORDER BY p.passage_id) = 1
        """,
    ),
    (
        "v_answers",
        "INSERT INTO temp.r_answer_refs "
        "SELECT seq, answer_id, answer_sha256, collection FROM temp.r_v_answers",
    ),
    (
        "v_revisions",
        "INSERT INTO temp.r_revision_refs SELECT seq, document_id, revision FROM temp.r_v_revisions",
    ),
    ("v_tombstones", "INSERT INTO temp.r_tombstone_refs SELECT seq, digest FROM temp.r_v_tombstones"),
)


def keep_facts(con: duckdb.DuckDBPyConnection, touched: set[str] | None = None) -> None:
    """Append the compact facts of the rebuilt views now in temp.r_<view> to the kept tables.

    `touched`: the views given rows since their tables were made empty (None: all may
    hold rows); a kept table read from an empty view gains nothing, so it is not asked."""
    run_all(con, [sql for view, sql in _KEEP_FROM if touched is None or view in touched])


class ViewRebuild:
    """Every view derived afresh from the log and compared with the stored one, range by range.

    The caller derives the rows (`store.views.derive`, possibly in another process) and
    hands them over in seq order with `add`; rows in a stored view but not derivable
    from the log, and the reverse, come back from `finish` (per view and problem, in seq
    order, at most `_DIFF_LIMIT` each).  Each seq range's rows go to temp tables
    `r_<view>` that are compared and dropped before the next range, so the rebuilt
    views never exist whole; what later checks need is kept in the compact `r_refs`,
    `r_answer_refs`, `r_revision_refs` and `r_tombstone_refs`.
    """

    def __init__(self, vault: Vault, start: int = 0) -> None:
        self.vault = vault
        self._ranges = _Ranges(vault, start)
        if start > 0:
            _seed_facts(vault, start)
        self._rows: Rows = {t: [] for t in VIEW_COLUMNS}
        self._tables: dict[tuple[str, bool], list[RowsTable]] = {}
        self._pending = 0
        self._current: int | None = None

    def add(self, seq: int, rows: Rows) -> None:
        """The rows of entries from `seq` on, all in the same compare range as `seq`."""
        self._enter(seq)
        for table, items in rows.items():
            if items:
                self._rows[table].extend(items)
                self._pending += len(items)
        if self._pending >= _FLUSH:
            self._flush()

    def add_tables(self, seq: int, tables: Mapping[str, RowsTable]) -> None:
        """`add` for rows already built as Arrow tables (by a worker process); they are
        inserted together, one INSERT per view and flush rather than one per run."""
        self._enter(seq)
        for table, rows in tables.items():
            self._tables.setdefault((table, rows.typed), []).append(rows)
            self._pending += rows.num_rows
        if self._pending >= _FLUSH:
            self._flush()

    def finish(self) -> list[ViewDiff]:
        if self._current is not None:
            self._flush()
            self._ranges.close(self._current, self._rows)
            self._current = None
        return self._ranges.finish()

    def _enter(self, seq: int) -> None:
        lo = _lo(seq)
        if self._current is not None and lo != self._current:
            self._flush()
            self._ranges.close(self._current, self._rows)
        self._current = lo

    def _flush(self) -> None:
        import pyarrow as pa  # a bulk path: importing this module loads no Arrow

        _flush(self.vault, self._rows, self._ranges)
        for (table, typed), parts in self._tables.items():
            if typed and len(parts) > 1:  # same schema: the view's own types
                parts = [RowsTable(pa.concat_tables([p.table for p in parts]), True)]
            for part in parts:  # inferred types may differ from part to part
                if part.num_rows:
                    self._ranges.ready(table, part.num_rows)
                    insert_table(self.vault.con, table, part, target=f"temp.r_{table}")
        self._tables = {}
        self._pending = 0


_FACTS_FROM = """
    INSERT INTO temp.r_refs
    SELECT d.seq, d.digest, d.role, d.collection, p.passage_id
    FROM {digests} d
    LEFT JOIN (
        SELECT seq, retrieved_sha256 AS dg, passage_id FROM {passages} WHERE {where}
        UNION ALL
        SELECT seq, model_input_sha256 AS dg, passage_id FROM {passages} WHERE {where}
    ) p ON p.seq = d.seq AND p.dg = d.digest
    WHERE {dwhere}
    QUALIFY row_number() OVER (PARTITION BY d.seq, d.digest, d.role ORDER BY p.passage_id) = 1
"""


def _seed_facts(vault: Vault, start: int) -> None:
    """The compact facts of entries before `start`, from the stored views (whose rows a
    receipt's digests vouch for), so the checks that read them see the whole log."""
    where = f"seq >= 0 AND seq < {int(start)}"
    run_all(
        vault.con,
        [
            _FACTS_FROM.format(
                digests="v_digests",
                passages="v_passages",
                where=where,
                dwhere=f"d.seq >= 0 AND d.seq < {int(start)}",
            ),
            "INSERT INTO temp.r_answer_refs "  # noqa: S608 - only ints interpolated
            f"SELECT seq, answer_id, answer_sha256, collection FROM v_answers WHERE {where}",
            "INSERT INTO temp.r_revision_refs "  # noqa: S608 - only ints interpolated
            f"SELECT seq, document_id, revision FROM v_revisions WHERE {where}",
            f"INSERT INTO temp.r_tombstone_refs SELECT seq, digest FROM v_tombstones WHERE {where}",  # noqa: S608
        ],
    )


#: entries per group of a view digest: a receipt keeps one SHA-256 per group and view
DIGEST_GROUP = GROUP


def view_digests(vault: Vault, below: int, start: int = 0) -> dict[str, dict[int, str]]:
    """Per stored view, SHA-256 per group of `DIGEST_GROUP` entries over its rows of
    entries `start`..`below-1` (`start` a multiple of the group size), as a multiset.

    Each row is hashed as unambiguous text; the row hashes of a group are sorted and
    hashed.  A receipt keeps these, so a view row of an already verified entry edited
    later is caught without deriving the entry again, and growing a receipt only hashes
    the groups that grew.
    """
    return _view_digests(vault.con, below, start)


def _view_digests(con: duckdb.DuckDBPyConnection, below: int, start: int) -> dict[str, dict[int, str]]:
    """The same multiset digests every checkpoint's `tracer-views` line commits to."""
    return tables_digests(con, VIEW_COLUMNS, int(start), int(below))


class _Box(TypedDict, total=False):
    """What the thread hands the waiting caller: its result, or what it raised."""

    value: dict[str, dict[int, str]]
    error: BaseException


def view_digests_meanwhile(
    vault: Vault, below: int, start: int = 0
) -> Callable[[], dict[str, dict[int, str]]]:
    """`view_digests(vault, below, start)` computed on a second DuckDB connection in a thread
    (DuckDB works without the GIL), while the caller goes on; call the result to wait.

    The rows read are those committed when it starts: nothing else writes meanwhile.
    """
    cursor = vault.con.cursor()
    box: _Box = {}

    def run() -> None:
        try:
            box["value"] = _view_digests(cursor, below, start)
        except BaseException as exc:  # handed to the waiting caller
            box["error"] = exc

    thread = threading.Thread(target=run, name="view-digests", daemon=True)
    thread.start()

    def wait() -> dict[str, dict[int, str]]:
        thread.join()
        cursor.close()
        if "error" in box:
            raise box["error"]
        value: dict[str, dict[int, str]] = box["value"]
        return value

    return wait


def compare_range(seq: int) -> int:
    """The first seq of `seq`'s compare range: rows handed to one `ViewRebuild.add` share it."""
    return _lo(seq)


def _flush(vault: Vault, rows: Rows, ranges: _Ranges) -> None:
    """Insert the rows held in Python into temp.r_<view> (`_Ranges.ready` first)."""
    for table, items in rows.items():
        if items:
            ranges.ready(table, len(items))
            insert_rows(vault.con, table, items, target=f"temp.r_{table}")
            items.clear()


_FACTS_CTE = """
    facts AS (
        SELECT seq, digest, role, collection, passage_id FROM temp.r_refs
    ),
    present AS (SELECT DISTINCT digest FROM blobs),
    held AS (SELECT DISTINCT digest FROM blobs WHERE dk_id IN (SELECT unnest($keys::VARCHAR[]))),
    tomb AS (SELECT digest, min(seq) AS tseq FROM temp.r_tombstone_refs GROUP BY digest),
    verdicts AS (
        SELECT f.*, pr.digest IS NOT NULL AS present, bd.detail,
            CASE
                WHEN t.tseq IS NOT NULL THEN 'purged'
                WHEN pr.digest IS NULL THEN 'missing'
                WHEN NOT ({readable}) THEN 'out_of_scope'
                WHEN h.digest IS NULL THEN 'out_of_scope'
                WHEN bd.state IS NULL THEN 'intact'
                ELSE bd.state
            END AS verdict
        FROM facts f
        LEFT JOIN present pr ON pr.digest = f.digest
        LEFT JOIN held h ON h.digest = f.digest
        LEFT JOIN tomb t ON t.digest = f.digest
        LEFT JOIN _v_bad bd ON bd.digest = f.digest
    )
"""


@dataclass(frozen=True)
class DigestVerdict:
    """One reference that is a finding: its verdict and the record that pins it."""

    seq: int
    digest: str
    role: str
    verdict: TextVerdict
    present: bool
    detail: str | None
    answer_id: str | None
    passage_id: str | None
    document_id: str | None
    revision: str | None


def digest_verdicts(
    vault: Vault,
    bad: Mapping[str, tuple[TextVerdict, str]],
    dk_ids: list[str],
    scopes: list[str] | None,
) -> tuple[dict[TextVerdict, int], list[DigestVerdict]]:
    """`digest_verdicts_on` the vault's connection."""
    return digest_verdicts_on(vault.con, bad, dk_ids, scopes)


def digest_verdicts_on(
    con: duckdb.DuckDBPyConnection,
    bad: Mapping[str, tuple[TextVerdict, str]],
    dk_ids: list[str],
    scopes: list[str] | None,
) -> tuple[dict[TextVerdict, int], list[DigestVerdict]]:
    """Every reference of the (rebuilt) log classified in SQL, without a row per reference in Python.

    `bad` maps each digest whose readable copy did not verify to (state, detail);
    `dk_ids` are the data keys the viewer holds (a stored digest with no copy under
    them is out of scope); `scopes` the collections the viewer may read (None: none,
    ["*"]: all).  Verdicts: purged, missing, out_of_scope, intact, or the bad state.
    Returns the count of references per verdict, and the references that are findings
    (bad states, missing, and purged texts still stored) ordered by (seq, digest, role).
    """
    if scopes is None:
        readable = "FALSE"
    elif "*" in scopes:
        readable = "TRUE"
    else:
        readable = "f.collection IN (SELECT unnest($scopes::VARCHAR[]))"
    import pyarrow as pa

    digests = sorted(bad)
    con.register(
        "_v_bad",
        pa.table(
            {
                "digest": string_array(digests),
                "state": string_array([bad[d][0] for d in digests]),
                "detail": string_array([bad[d][1] for d in digests]),
            }
        ),
    )
    params: dict[str, list[str]] = {"keys": sorted(dk_ids)}
    if "$scopes" in readable:
        params["scopes"] = sorted(scopes or [])
    try:
        # one statement for both answers (the verdicts' counts, part 0, and the findings,
        # part 1): each statement over these joins has a fixed cost of milliseconds
        rows = con.execute(
            "WITH "  # noqa: S608 - fixed text; only `readable` varies, chosen above
            + _FACTS_CTE.format(readable=readable)
            + """
            SELECT 0 AS part, NULL::BIGINT AS seq, NULL::VARCHAR AS digest, NULL::VARCHAR AS role,
                   verdict, NULL::BOOLEAN AS present, NULL::VARCHAR AS detail,
                   NULL::VARCHAR AS answer_id, NULL::VARCHAR AS passage_id,
                   NULL::VARCHAR AS document_id, NULL::VARCHAR AS revision, count(*) AS n
            FROM verdicts GROUP BY verdict
            UNION ALL
            SELECT 1, v.seq, v.digest, v.role, v.verdict, v.present, v.detail,
                   a.answer_id, v.passage_id, r.document_id, r.revision, NULL
            FROM verdicts v
            LEFT JOIN temp.r_answer_refs a ON a.seq = v.seq
            LEFT JOIN temp.r_revision_refs r ON r.seq = v.seq
            WHERE (v.verdict = 'purged' AND v.present)
               OR v.verdict NOT IN ('purged', 'intact', 'out_of_scope')
            ORDER BY part, seq, digest, role
            """,
            params,
        ).fetchall()
    finally:
        con.unregister("_v_bad")
    counts = {TextVerdict(str(r[4])): int(r[11]) for r in rows if r[0] == 0}
    rows = [r[1:11] for r in rows if r[0] == 1]
    found = [
        DigestVerdict(
            int(r[0]), str(r[1]), str(r[2]), TextVerdict(str(r[3])), bool(r[4]), r[5], r[6], r[7], r[8], r[9]
        )
        for r in rows
    ]
    return counts, found


def ordered_counts(counts: Mapping[TextVerdict, int]) -> list[tuple[TextVerdict, int]]:
    """The references per verdict as reports list them: the ordinary outcomes in
    `TextVerdict`'s order, then every other state by name; verdicts with none left out."""
    rank = {v: i for i, v in enumerate(_ORDINARY)}
    return sorted(
        ((v, n) for v, n in counts.items() if n), key=lambda vn: (rank.get(vn[0], len(rank)), vn[0])
    )


_ORDINARY = (TextVerdict.PURGED, TextVerdict.MISSING, TextVerdict.OUT_OF_SCOPE, TextVerdict.INTACT)


def answer_text_ref(vault: Vault, answer_id: str) -> tuple[str, str] | None:
    """(answer digest, collection) of an answer, from the answers kept by `ViewRebuild`."""
    rows = vault.query(
        "SELECT answer_sha256, collection FROM temp.r_answer_refs WHERE answer_id = ? ORDER BY seq LIMIT 1",
        [answer_id],
    )
    return (str(rows[0][0]), str(rows[0][1])) if rows else None


def blob_digests_unreferenced(vault: Vault) -> list[str]:
    return blob_digests_unreferenced_on(vault.con)


def blob_digests_unreferenced_on(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT DISTINCT digest FROM blobs WHERE digest NOT IN (SELECT digest FROM temp.r_refs) "
        "ORDER BY 1 LIMIT 1000"
    ).fetchall()
    return [str(r[0]) for r in rows]


def duplicate_answers(vault: Vault) -> list[tuple[str, list[int]]]:
    """(answer id, the seqs of its manifests) for every answer id logged more than once,
    from the views rebuilt by `ViewRebuild` (a replayed manifest)."""
    return duplicate_answers_on(vault.con)


def duplicate_answers_on(con: duckdb.DuckDBPyConnection) -> list[tuple[str, list[int]]]:
    rows = con.execute(
        "SELECT answer_id, list(seq ORDER BY seq) FROM temp.r_answer_refs "
        "GROUP BY answer_id HAVING count(*) > 1 ORDER BY min(seq)"
    ).fetchall()
    return [(str(a), [int(q) for q in seqs]) for a, seqs in rows]


def covered_manifests_citing(vault: Vault, digests: Sequence[str], below: int) -> list[int]:
    """Seqs of manifests before `below` whose passages' transformation trace reads one of
    `digests`: as retrieved text, as the cited revision's content, or as the stored
    answer of the note or answer a passage is derived from (stored views, which a
    receipt vouches for)."""
    wanted = sorted(set(digests))
    if not wanted or below <= 0:
        return []
    rows = join_wanted(
        vault.con,
        wanted,
        "SELECT DISTINCT p.seq FROM v_passages p "  # noqa: S608 - fixed text, ints only
        "LEFT JOIN v_revisions r ON r.document_id = p.document_id AND r.revision = p.doc_revision "
        "LEFT JOIN v_answers a ON a.answer_id = p.derived_from "
        f"WHERE p.seq >= 0 AND p.seq < {int(below)} AND ("
        "p.retrieved_sha256 IN (SELECT digest FROM {want}) "
        "OR r.content_sha256 IN (SELECT digest FROM {want}) "
        "OR a.answer_sha256 IN (SELECT digest FROM {want})) ORDER BY 1",
    )
    return [int(r[0]) for r in rows]


def tombstoned_digests(vault: Vault, since: int = 0) -> list[str]:
    """Every digest a (rebuilt) tombstone at or after entry `since` names."""
    rows = vault.query("SELECT DISTINCT digest FROM temp.r_tombstone_refs WHERE seq >= ?", [int(since)])
    return [str(r[0]) for r in rows]
