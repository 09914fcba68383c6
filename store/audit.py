"""Structural facts for verification, computed from the raw log rather than the views.

This module states facts (which sequence numbers are absent, which view rows disagree
with the log, which digests have no blob); deciding what they mean is the engine's job.
Rebuilt views go to temporary tables, so a hand-edited view is never trusted here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from store.entries import LogEntry
from store.schema import VIEW_COLUMNS, view_ddl
from store.vault import Vault, insert_rows
from store.views import Rows, derive

__all__ = [
    "DigestFact",
    "ViewDiff",
    "answer_text_ref",
    "blob_digests_unreferenced",
    "compare_views",
    "digest_facts",
    "log_shape",
    "rebuild_views",
]

Progress = Callable[[int], None]
_FLUSH = 20_000
_PAGE = 5_000


@dataclass(frozen=True)
class ViewDiff:
    table: str
    problem: str
    seq: int
    row: str
    values: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class DigestFact:
    digest: str
    role: str
    collection: str
    seq: int
    answer_id: str | None
    passage_id: str | None
    present: bool
    tombstone_seq: int | None
    document_id: str | None = None
    revision: str | None = None


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


def rebuild_views(
    vault: Vault,
    entries: Iterator[tuple[int, LogEntry]],
    on_error: Callable[[int, LogEntry, Exception], None],
) -> None:
    """Derive every view from `entries` into temp tables `r_<view>` (replacing old ones).

    An entry whose payload cannot be derived is reported through `on_error` and skipped,
    so one malformed entry never stops verification of the rest.
    """
    con = vault.con
    for table in VIEW_COLUMNS:
        con.execute(f"DROP TABLE IF EXISTS temp.r_{table}")
        con.execute(view_ddl(table, f"r_{table}", temporary=True))
    rows: Rows = {t: [] for t in VIEW_COLUMNS}
    pending = 0
    for seq, entry in entries:
        scratch: Rows = {t: [] for t in VIEW_COLUMNS}
        try:
            derive(seq, entry, scratch)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            on_error(seq, entry, exc)
            continue
        for table, items in scratch.items():
            rows[table].extend(items)
        pending += 1
        if pending >= _FLUSH:
            _flush(vault, rows)
            pending = 0
    _flush(vault, rows)


def _flush(vault: Vault, rows: Rows) -> None:
    for table, items in rows.items():
        if items:
            insert_rows(vault.con, table, items, target=f"temp.r_{table}")
            items.clear()


def compare_views(vault: Vault) -> list[ViewDiff]:
    """Rows in a stored view but not derivable from the log, and the reverse."""
    diffs: list[ViewDiff] = []
    for table, cols in VIEW_COLUMNS.items():
        names = ", ".join(c for c, _t in cols)
        for problem, left, right in (
            ("view_row_altered_or_extra", table, f"temp.r_{table}"),
            ("view_row_missing_or_altered", f"temp.r_{table}", table),
        ):
            rows = vault.query(
                f"SELECT {names} FROM {left} EXCEPT ALL SELECT {names} FROM {right} "  # noqa: S608
                "ORDER BY seq LIMIT 200"
            )
            for r in rows:
                values = dict(zip([c for c, _t in cols], r, strict=True))
                shown = json.dumps(values, default=str, ensure_ascii=False)
                diffs.append(ViewDiff(table, problem, int(r[0]), shown[:400], values))
    return diffs


def digest_facts(vault: Vault) -> Iterator[DigestFact]:
    """Every digest the (rebuilt) log references, with presence and tombstone facts."""
    sql = """
        SELECT d.digest, d.role, d.collection, d.seq, a.answer_id, p.passage_id,
               EXISTS (SELECT 1 FROM blobs b WHERE b.digest = d.digest) AS present,
               (SELECT min(t.seq) FROM temp.r_v_tombstones t WHERE t.digest = d.digest) AS tomb,
               r.document_id, r.revision
        FROM temp.r_v_digests d
        LEFT JOIN temp.r_v_answers a ON a.seq = d.seq
        LEFT JOIN temp.r_v_revisions r ON r.seq = d.seq
        LEFT JOIN (
            SELECT seq, retrieved_sha256 AS dg, passage_id FROM temp.r_v_passages
            UNION ALL
            SELECT seq, model_input_sha256 AS dg, passage_id FROM temp.r_v_passages
        ) p ON p.seq = d.seq AND p.dg = d.digest
        WHERE d.seq >= ? AND d.seq < ?
        QUALIFY row_number() OVER (PARTITION BY d.seq, d.digest, d.role ORDER BY p.passage_id) = 1
        ORDER BY d.seq, d.digest, d.role
    """
    top = vault.query("SELECT coalesce(max(seq), -1) FROM temp.r_v_digests")[0][0]
    for lo in range(0, int(top) + 1, _PAGE):
        for digest, role, coll, seq, aid, pid, present, tomb, doc, rev in vault.query(sql, [lo, lo + _PAGE]):
            yield DigestFact(
                str(digest),
                str(role),
                str(coll),
                int(seq),
                aid,
                pid,
                bool(present),
                int(tomb) if tomb is not None else None,
                doc,
                rev,
            )


def answer_text_ref(vault: Vault, answer_id: str) -> tuple[str, str] | None:
    """(answer digest, collection) of an answer, from the views rebuilt by `rebuild_views`."""
    rows = vault.query(
        "SELECT answer_sha256, collection FROM temp.r_v_answers WHERE answer_id = ? ORDER BY seq LIMIT 1",
        [answer_id],
    )
    return (str(rows[0][0]), str(rows[0][1])) if rows else None


def blob_digests_unreferenced(vault: Vault) -> list[str]:
    rows = vault.query(
        "SELECT DISTINCT digest FROM blobs WHERE digest NOT IN (SELECT digest FROM temp.r_v_digests) "
        "ORDER BY 1 LIMIT 1000"
    )
    return [str(r[0]) for r in rows]
