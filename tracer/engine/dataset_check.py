"""The per-batch work of `verify-dataset`, as pure functions of Arrow batches.

Both engines call these and nothing else on the data: DuckDB as a vectorized Python
function over the batches it reads, Spark through `mapInArrow` on its executors.  The
per-entry checks are `tracer.engine.logcheck.check_run`, the one implementation
`tracer verify` runs, so a finding reads the same whichever engine found it.

A batch's result travels back as one binary value per row (pickled, between this
process and the engines it drives: never read from the dataset).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from store.merkle import leaf_hash, node_hash
from store.roster import Roster
from store.entries import LogEntry
from tracer.engine.logcheck import Finding, RunInput, check_run, finding

__all__ = [
    "STATEMENT_MARK",
    "CheckContext",
    "RowResult",
    "check_batch",
    "is_statement",
    "leaf_batch",
    "perfect_root",
    "subtree_root",
]

#: bytes every statement entry holds (its envelope's payloadType), whatever its row says;
#: the rule `tracer verify` uses to choose the rows it checks in order
STATEMENT_MARK = b"application/vnd.tracer.statement.v1+json"


def is_statement(kind: str, data: bytes) -> bool:
    return kind != "manifest" or STATEMENT_MARK in data


def leaf_batch(batch: pa.Table) -> pa.Array:
    """Per row: the recomputed RFC 6962 leaf hash, then one byte, 1 for a statement row."""
    kinds = batch.column("kind").to_pylist()
    entries = batch.column("entry").to_pylist()
    out = [
        leaf_hash(e) + (b"\x01" if is_statement(k, e) else b"\x00")
        for k, e in zip(kinds, entries, strict=True)
    ]
    return pa.array(out, pa.binary())


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
    each statement that changed it (first seq it applies from, keyring), the custodian
    the dataset names, the exporter's scopes, and the log's origin."""

    keyrings: tuple[tuple[int, Roster], ...]
    custodian_ed25519: bytes
    custodian_key_id: str
    scopes: tuple[str, ...] | None
    origin: str

    def keyring_at(self, seq: int) -> tuple[int, Roster]:
        chosen = (0, Roster())
        for i, (start, ring) in enumerate(self.keyrings):
            if start <= seq:
                chosen = (i, ring)
            else:
                break
        return chosen


def _runs(
    rows: list[tuple[int, str, bytes, bytes, bytes]], ctx: CheckContext
) -> Iterator[tuple[Roster, list[int]]]:
    """Row indexes grouped by the keyring their seq falls under, in order."""
    current: int | None = None
    ring = Roster()
    idx: list[int] = []
    for i, row in enumerate(rows):
        which, r = ctx.keyring_at(row[0])
        if which != current and idx:
            yield ring, idx
            idx = []
        current, ring = which, r
        idx.append(i)
    if idx:
        yield ring, idx


def check_rows(rows: list[tuple[int, str, bytes, bytes, bytes]], ctx: CheckContext) -> list[RowResult]:
    """`check_run` over manifest rows (seq, kind, bytes, stored leaf, recomputed leaf)."""
    out: list[RowResult | None] = [None] * len(rows)
    scopes = list(ctx.scopes) if ctx.scopes is not None else None
    for ring, idx in _runs(rows, ctx):
        run = [rows[i] for i in idx]
        result = check_run(
            RunInput(run, ring, ctx.custodian_ed25519, ctx.custodian_key_id, scopes, False, ctx.origin, {})
        )
        # view rows come back per table for the whole run: give each row its own by seq
        per_seq: dict[int, dict[str, list[tuple[Any, ...]]]] = {}
        for table, items in result.rows.items():
            for item in items:
                per_seq.setdefault(int(item[0]), {}).setdefault(table, []).append(item)
        for i, (seq, found, manifest) in zip(idx, result.entries, strict=True):
            # a duplicated seq shares its derived rows: only its first row carries them
            out[i] = RowResult(found, manifest, per_seq.pop(seq, {}))
    return [r for r in out if r is not None]


def signer_finding(seq: int, column: str | None, data: bytes) -> Finding | None:
    """The dataset's `signer` column must say the key id the entry's envelope names."""
    try:
        said = LogEntry.from_bytes(data).signer
    except ValueError:
        said = None
    if said == column:
        return None
    return finding(
        "dataset_signer_mismatch",
        seq,
        f"the signer column says {str(column)[:16]!r}, the entry's envelope {str(said)[:16]!r}",
    )


def check_batch(batch: pa.Table, ctx: CheckContext) -> pa.Array:
    """Per row: the pickled `RowResult` of its per-entry checks."""
    seqs = batch.column("seq").to_pylist()
    kinds = batch.column("kind").to_pylist()
    entries = batch.column("entry").to_pylist()
    stored = batch.column("leaf_hash").to_pylist()
    signers = batch.column("signer").to_pylist()
    rows = [
        (-1 if s is None else int(s), str(k or ""), bytes(e or b""), bytes(st or b""), leaf_hash(bytes(e or b"")))
        for s, k, e, st in zip(seqs, kinds, entries, stored, strict=True)
    ]
    results = check_rows(rows, ctx)
    for row, signer, result in zip(rows, signers, results, strict=True):
        extra = signer_finding(row[0], signer, row[2])
        if extra is not None:
            result.findings.append(extra)
    return pa.array([pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL) for r in results], pa.binary())


def load_result(value: bytes) -> RowResult:
    result = pickle.loads(value)  # noqa: S301 - produced by check_batch in this run, never read from a file
    if not isinstance(result, RowResult):
        raise TypeError("not a RowResult")
    return result
