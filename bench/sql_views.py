"""Spike: derive `v_passages` in DuckDB SQL from the log's entry bytes ÷ the Python `derive`.

    .venv/bin/python bench/sql_views.py --passages 100000 --runs 1

Issue 13 asks whether the derived views can be defined once as SQL over the log (DuckDB's
JSON functions and `from_base64` reading the signed payloads) instead of per entry in
Python.  This measures, on the cached bench vault (read only):

  * python_s: `store.views.derive` over every manifest entry (JSON decode included),
    building all views' rows;
  * sql_s: one `CREATE TEMP TABLE ... AS SELECT` deriving `v_passages` with
    `json_transform` (one parse per entry into a STRUCT, then `unnest`);
  * that the SQL rows equal the stored `v_passages` as multisets (`identical`), and
  * `escape_rule_differs`: whether DuckDB writes a JSON string holding a control
    character the way Python's encoder does (it does not: `\\u001B` vs `\\u001b`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

_PASSAGE = {
    "passage_id": "VARCHAR",
    "collection": "VARCHAR",
    "document": {"document_id": "VARCHAR", "uri": "VARCHAR", "revision": "VARCHAR", "backend": "VARCHAR"},
    "source": {"system": "VARCHAR", "path": "VARCHAR", "revision": "VARCHAR"},
    "chunk": {"chunk_id": "VARCHAR", "pipeline_version": "VARCHAR"},
    "locator": {
        "heading_path": "JSON",
        "paragraph": "INTEGER",
        "char_start": "INTEGER",
        "char_end": "INTEGER",
    },
    "retrieved_sha256": "VARCHAR",
    "model_input_sha256": "VARCHAR",
    "normalizer_version": "VARCHAR",
    "retrieved_at": "VARCHAR",
    "rank": "INTEGER",
    "score": "DOUBLE",
    "query_sha256": "VARCHAR",
    "derived_from": "VARCHAR",
}
_SQL = """
CREATE TEMP TABLE sql_passages AS
WITH e AS (
  SELECT seq, json_transform(
    decode(from_base64(json_extract_string(decode(entry), '$.envelope.payload'))), '{structure}') AS p
  FROM log WHERE kind = 'manifest'
), u AS (
  SELECT seq, p.answer_id AS answer_id, unnest(p.passages) AS ps,
         generate_subscripts(p.passages, 1) - 1 AS idx
  FROM e
)
SELECT seq, answer_id, idx, ps.passage_id, ps.collection, ps.document.document_id,
  ps.document.uri AS doc_uri, ps.document.revision AS doc_revision, ps.document.backend,
  ps.source.system AS source_system, ps.source.path AS source_path,
  ps.source.revision AS source_revision, ps.chunk.chunk_id, ps.chunk.pipeline_version AS chunker_version,
  CAST(ps.locator.heading_path AS VARCHAR) AS heading_path, ps.locator.paragraph,
  ps.locator.char_start, ps.locator.char_end, ps.retrieved_sha256, ps.model_input_sha256,
  ps.normalizer_version, ps.retrieved_at, ps.rank, ps.score, ps.query_sha256, ps.derived_from
FROM u
"""


#: inputs on which a second JSON parser could read other values than the checks read
_PROBES = {
    "duplicate_key": '{"a":"first","a":"last"}',
    "trailing_comma": '{"a":"x",}',
    "nan": '{"a":NaN}',
    "lone_surrogate": '{"a":"\\ud800"}',
}


def _parser_differences(con: Any) -> dict[str, list[str]]:
    """[Python's reading, DuckDB's reading] of each probe where the two differ.

    Python's `json.loads` is what verify and trace parse signed payloads with (ingest's
    strict parser refuses all four probes); a view derived by DuckDB from the same bytes
    would mean something else for any of these.
    """
    out: dict[str, list[str]] = {}
    for name, doc in _PROBES.items():
        try:
            py = repr(json.loads(doc)["a"])
        except ValueError as exc:
            py = f"refused: {exc}"
        try:
            found = con.execute('SELECT json_transform(?, \'{"a":"VARCHAR"}\').a', [doc]).fetchall()
            sql = repr(found[0][0])
        except Exception as exc:  # DuckDB's refusal is its reading
            sql = f"refused: {str(exc)[:60]}"
        if py != sql:
            out[name] = [py, sql]
    return out


def child(args: argparse.Namespace) -> dict[str, Any]:
    import duckdb

    from store.entries import LogEntry
    from store.schema import DB_FILE, VIEW_COLUMNS
    from store.views import Rows, _j, derive

    vault = common.ensure_vault(args.passages, args.out)
    con = duckdb.connect(str(vault / DB_FILE), read_only=True)
    con.execute("SET memory_limit = '512MB'")
    entries = con.execute("SELECT seq, entry FROM log WHERE kind = 'manifest' ORDER BY seq").fetchall()
    rows: Rows = {t: [] for t in VIEW_COLUMNS}
    t0 = time.perf_counter()
    for seq, data in entries:
        derive(int(seq), LogEntry.from_bytes(bytes(data)), rows)
    python_s = time.perf_counter() - t0
    structure = json.dumps({"answer_id": "VARCHAR", "passages": [_PASSAGE]}, separators=(",", ":"))
    t0 = time.perf_counter()
    con.execute(_SQL.format(structure=structure))
    sql_s = time.perf_counter() - t0
    cols = ", ".join(c for c, _t in VIEW_COLUMNS["v_passages"])
    extra = con.execute(
        f"SELECT count(*) FROM (SELECT {cols} FROM sql_passages EXCEPT ALL SELECT {cols} FROM v_passages)"  # noqa: S608
    ).fetchall()[0][0]
    lacking = con.execute(
        f"SELECT count(*) FROM (SELECT {cols} FROM v_passages EXCEPT ALL SELECT {cols} FROM sql_passages)"  # noqa: S608
    ).fetchall()[0][0]
    differs = _parser_differences(con)
    probe = ["a\u001bb"]
    written = con.execute(
        'SELECT CAST(json_transform(?, \'{"h":"JSON"}\').h AS VARCHAR)', [json.dumps({"h": probe})]
    ).fetchall()[0][0]
    return {
        "ratio_sql_passages_over_python_all_views": round(sql_s / python_s, 3),
        "python_s": round(python_s, 3),
        "sql_s": round(sql_s, 3),
        "manifests": len(entries),
        "passages": len(rows["v_passages"]),
        "identical": extra == 0 and lacking == 0,
        "escape_rule_differs": written != _j(probe),
        "escape_python_sql": [_j(probe), written],
        "json_parser_differences": differs,
        "peak_rss_mib": common.peak_rss_mib(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="SQL derivation of v_passages vs Python derive")
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="vault cache directory")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    argv = ["--passages", str(args.passages)] + (["--out", str(args.out)] if args.out else [])
    common.main_runner(__file__, child, args, argv)


if __name__ == "__main__":
    main()
