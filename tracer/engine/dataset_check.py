"""The per-batch work of `verify-dataset`, as pure functions of Arrow batches.

Both engines call these and nothing else on the manifest rows: the DuckDB engine's
worker processes (`tracer.engine.dataset_pool`) on slices of the log the verifying process read,
Spark through `mapInArrow` on its executors.  The per-entry checks are
`tracer.engine.logcheck.check_run`, the one implementation `tracer verify` runs, so a
finding reads the same whichever engine found it.

A batch's results (`BatchResult`) go back to the verifying process pickled, by the
process pool or as one value per batch from Spark's executors: between this process
and the workers it drives, never read from the dataset.
"""

from __future__ import annotations

import pickle
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from store.gcpause import no_cycle_collection
from store.merkle import leaf_hash, node_hash
from store.roster import Roster
from store.rowtables import RowsTable, exact_array, rows_table
from store.schema import VIEW_COLUMNS
from tracer.engine.logcheck import Finding, LogRow, RunInput, Task, check_run, finding
from tracer.engine.vocabulary import FindingKind

if TYPE_CHECKING:
    # the workers check rows, they never read an export: not imported there (DuckDB,
    # Parquet and the vault's modules would cost the fork server their import)
    from store import dataset as ds

__all__ = [
    "FACT_COLUMNS",
    "STATEMENT_MARK",
    "BatchResult",
    "CheckContext",
    "ManifestRows",
    "RowResult",
    "check_batch",
    "check_table",
    "dump_results",
    "fact_tables",
    "is_statement",
    "load_results",
    "perfect_root",
    "subtree_root",
]

#: bytes every statement entry holds (its envelope's payloadType), whatever its row says;
#: the rule `tracer verify` uses to choose the rows it checks in order
STATEMENT_MARK = b"application/vnd.tracer.statement.v1+json"


def is_statement(kind: str, data: bytes, start: int = 0, end: int | None = None) -> bool:
    """The row is checked in order by the verifying process (`data[start:end]` its entry:
    searched in place where the entry lies in a larger buffer)."""
    return kind != "manifest" or data.find(STATEMENT_MARK, start, len(data) if end is None else end) >= 0


def subtree_root(leaves: Sequence[bytes]) -> bytes:
    """MTH of a row group's leaves (a perfect subtree when the group is full)."""
    from store.merkle import root

    return root(leaves)


def perfect_root(hashes: Sequence[bytes]) -> bytes:
    """Fold perfect subtrees of equal size, left to right, into the tree above them (the
    driver's fold of row-group roots: RFC 6962 splits at the largest power of two, so
    equal-size groups fold as leaves do)."""
    stack: list[tuple[int, bytes]] = []
    for h in hashes:
        size = 1
        while stack and stack[-1][0] == size:
            size *= 2
            h = node_hash(stack.pop()[1], h)
        stack.append((size, h))
    if not stack:
        raise ValueError("no subtrees to fold")
    acc = stack[-1][1]
    for _size, h in reversed(stack[:-1]):
        acc = node_hash(h, acc)
    return acc


@dataclass(frozen=True)
class RowResult:
    findings: list[Finding]
    manifest: bool
    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckContext:
    """What a batch of manifest rows is checked against: the keyring as it stood after
    each statement that changed it (first file position it applies from, keyring), the custodian
    the dataset names, the exporter's scopes, and the log's origin."""

    keyrings: tuple[tuple[int, Roster], ...]
    custodian_ed25519: bytes
    custodian_key_id: str
    scopes: tuple[str, ...] | None
    origin: str

    def keyring_at(self, pos: int) -> tuple[int, Roster]:
        """(index, keyring) in force at file position `pos` (`keyrings` is in position order)."""
        i = bisect_right(self.keyrings, pos, key=lambda item: item[0]) - 1
        return (i, self.keyrings[i][1]) if i >= 0 else (0, Roster())


@dataclass(frozen=True)
class BatchResult:
    """A batch of manifest rows checked: each row's result by file position (its view
    rows left out), the view rows of the whole batch as Arrow tables (built where the
    checks ran, one dict per keyring run), and the passages to trace."""

    rows: list[tuple[int, RowResult]]
    tables: list[dict[str, RowsTable]]
    tasks: list[Task] = field(default_factory=list)
    deferred: list[Task] = field(default_factory=list)

    def __reduce__(self) -> tuple[Any, ...]:
        # the passages travel as plain tuples (a named tuple pickles with its class and a
        # call of its `__new__` each, twice the cost), and a batch holds one task per
        # passage (ten per manifest)
        return (_batch_result, (self.rows, self.tables, _packed(self.tasks), _packed(self.deferred)))


def _packed(tasks: list[Task]) -> list[tuple[Any, ...]]:
    return [tuple(t) for t in tasks]


def _batch_result(
    rows: list[tuple[int, RowResult]],
    tables: list[dict[str, RowsTable]],
    tasks: list[tuple[Any, ...]],
    deferred: list[tuple[Any, ...]],
) -> BatchResult:
    return BatchResult(rows, tables, [Task(*t) for t in tasks], [Task(*t) for t in deferred])


#: how an engine checks the manifest rows: (reader, context, every row's leaf hash as the
#: verifying process recomputed it from the row's bytes) to a function that gives the
#: batches' results (in any order) as they come, so the verifying process can do other
#: work while the engine checks
ManifestRows = Callable[
    ["ds.DatasetReader", CheckContext, Sequence[bytes]], Callable[[], Iterable[BatchResult]]
]


def _runs(positions: list[int], ctx: CheckContext) -> Iterator[tuple[Roster, list[int]]]:
    """Row indexes grouped by the keyring their file position falls under, in order."""
    current: int | None = None
    ring = Roster()
    idx: list[int] = []
    for i, pos in enumerate(positions):
        which, r = ctx.keyring_at(pos)
        if which != current and idx:
            yield ring, idx
            idx = []
        current, ring = which, r
        idx.append(i)
    if idx:
        yield ring, idx


#: the view tables the log-wide checks read (`store.audit.keep_facts`) that manifests
#: derive: what a batch hands back, cut to the columns read (`v_passages` is a large
#: log's widest table, `v_answers` fifteen columns, lineage and faults among them, of
#: which four are read: each column built in a worker is shipped back and inserted)
FACT_COLUMNS: dict[str, tuple[str, ...] | None] = {
    "v_answers": ("seq", "answer_id", "answer_sha256", "collection"),
    "v_digests": None,
    "v_passages": ("seq", "passage_id", "retrieved_sha256", "model_input_sha256"),
}


def fact_tables(rows: dict[str, list[tuple[Any, ...]]]) -> dict[str, RowsTable]:
    """The derived rows the log-wide checks read, as Arrow tables (`FACT_COLUMNS`)."""
    out: dict[str, RowsTable] = {}
    for table, columns in FACT_COLUMNS.items():
        items = rows.get(table)
        if not items:
            continue
        if columns is None:
            out[table] = rows_table(table, items)
            continue
        names = [name for name, _type in VIEW_COLUMNS[table]]
        picked = {c: names.index(c) for c in columns}
        types = dict(VIEW_COLUMNS[table])
        out[table] = RowsTable(
            pa.table({c: _inferred([row[i] for row in items], types[c]) for c, i in picked.items()}), False
        )
    return out


def _inferred(values: list[Any], sql_type: str) -> pa.Array:
    """The array `pa.array(values)` infers, built from buffers when the values allow
    (`exact_array`: no pandas import in the worker); cast to `sql_type` on insert."""
    want = {"VARCHAR": pa.string(), "BIGINT": pa.int64()}.get(sql_type)
    exact = exact_array(values, want) if want is not None else None
    return exact if exact is not None else pa.array(values)


def check_rows(
    rows: list[LogRow], positions: list[int], ctx: CheckContext, signers: list[str | None]
) -> BatchResult:
    """`check_run` over manifest rows at file `positions`; `signers` is the dataset's
    signer column, which must name the key id each entry's envelope names."""
    out: list[RowResult | None] = [None] * len(rows)
    tables: list[dict[str, RowsTable]] = []
    tasks: list[Task] = []
    deferred: list[Task] = []
    scopes = list(ctx.scopes) if ctx.scopes is not None else None
    for ring, idx in _runs(positions, ctx):
        run = [rows[i] for i in idx]
        result = check_run(
            RunInput(run, ring, ctx.custodian_ed25519, ctx.custodian_key_id, scopes, False, ctx.origin, {})
        )
        tables.append(fact_tables(result.rows))
        tasks.extend(result.tasks)
        deferred.extend(result.deferred)
        for i, (seq, found, manifest), said in zip(idx, result.entries, result.signers, strict=True):
            extra = signer_finding(seq, signers[i], said)
            out[i] = RowResult([*found, extra] if extra is not None else found, manifest)
    results = [r for r in out if r is not None]
    return BatchResult(list(zip(positions, results, strict=True)), tables, tasks, deferred)


def signer_finding(seq: int, column: str | None, said: str | None) -> Finding | None:
    """The dataset's `signer` column must say the key id the entry's envelope names."""
    if said == column:
        return None
    return finding(
        FindingKind.DATASET_SIGNER_MISMATCH,
        seq,
        f"the signer column says {str(column)[:16]!r}, the entry's envelope {str(said)[:16]!r}",
    )


def check_table(batch: pa.Table, ctx: CheckContext) -> BatchResult:
    """Every row of `batch` (file_row_number, seq, kind, entry, leaf_hash, signer) checked as a manifest."""
    return _check_rows_of(batch, ctx, None)


def check_batch(batch: pa.Table, ctx: CheckContext, leaves: bytes | None = None) -> BatchResult:
    """`check_table` over the manifest rows of a batch of (file_row_number, seq, kind,
    entry, leaf_hash, signer) as an engine reads it: statement rows are left out (the
    verifying process checked them in order already).  `leaves`, the rows' leaf hashes
    (32 bytes each) where the verifying process already recomputed them from these very
    bytes, saves hashing them again; never the file's `leaf_hash` column."""
    return _check_rows_of(batch, ctx, is_statement, leaves)


def _check_rows_of(
    batch: pa.Table,
    ctx: CheckContext,
    skip: Callable[[str, bytes], bool] | None,
    leaves: bytes | None = None,
) -> BatchResult:
    """The rows of `batch` that `skip` leaves (all, without it), each column read once."""
    kinds = [str(k or "") for k in batch.column("kind").to_pylist()]
    entries = [bytes(e or b"") for e in batch.column("entry").to_pylist()]
    keep = _kept(kinds, entries, skip)
    if not keep:
        return BatchResult([], [])
    signers = batch.column("signer").to_pylist()
    positions = batch.column("file_row_number").to_pylist()
    if leaves is not None and len(leaves) != 32 * len(entries):
        raise ValueError(f"{len(leaves)} bytes of leaves for {len(entries)} rows")
    rows = _log_rows(batch, kinds, entries, keep, leaves)
    with no_cycle_collection():  # a batch's rows and results are many small acyclic objects
        return check_rows(rows, [int(positions[i]) for i in keep], ctx, [signers[i] for i in keep])


def _kept(kinds: list[str], entries: list[bytes], skip: Callable[[str, bytes], bool] | None) -> list[int]:
    if skip is None:
        return list(range(len(kinds)))
    return [i for i, (k, e) in enumerate(zip(kinds, entries, strict=True)) if not skip(k, e)]


def _log_rows(
    batch: pa.Table, kinds: list[str], entries: list[bytes], keep: list[int], leaves: bytes | None
) -> list[LogRow]:
    """Rows `keep` of `batch` with their leaves recomputed from the entry bytes (here,
    or by the verifying process: `leaves`)."""
    seqs = [-1 if s is None else int(s) for s in batch.column("seq").to_pylist()]
    stored = [bytes(st or b"") for st in batch.column("leaf_hash").to_pylist()]
    if leaves is None:
        return [LogRow(seqs[i], kinds[i], entries[i], stored[i], leaf_hash(entries[i])) for i in keep]
    return [LogRow(seqs[i], kinds[i], entries[i], stored[i], leaves[32 * i : 32 * i + 32]) for i in keep]


def dump_results(results: BatchResult) -> bytes:
    """A batch's results as one value, for an engine that ships them between processes."""
    return pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)


def load_results(value: bytes) -> BatchResult:
    results = pickle.loads(value)  # noqa: S301 - made by dump_results in this run's engine, never read from a file
    if not isinstance(results, BatchResult):
        raise TypeError("not a batch's results")
    return results
