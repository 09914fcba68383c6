"""Verification's first pass: the raw log, in order, against every signed checkpoint.

Leaf hashes, the Merkle root and the guarded-entry commitment are computed here in log
order; the per-entry checks (signatures, places, payloads: `tracer.engine.logcheck`) run
in runs, by worker processes for a large log (`tracer.engine.runqueue`), folded back
strictly in log order. Each manifest's passages go to the transform pass as it is read.
"""

from __future__ import annotations

import hashlib
from typing import Any

from store import audit, merkle
from store.entries import ROSTER_KINDS, EntryKind
from store.guarded import guarded_kind
from store.roster import Roster
from store.vault import Vault
from tracer.engine.logcheck import RunInput
from tracer.engine.runqueue import Pending, Row, RunQueue, worker_count
from tracer.engine.transformpass import TransformPass
from tracer.engine.verdicts import (
    CheckpointState,
    beyond_log_findings,
    checkpoint_findings,
    uncheckpointed_findings,
)
from tracer.engine.verifyrun import Sizes, Tally

__all__ = ["LogPass"]

#: row kinds that change who may sign: the log pass waits for everything before them
_KEYRING_KINDS = ROSTER_KINDS
#: bytes every statement entry holds (its envelope's payloadType), whatever its row says
_STATEMENT_MARK = b"application/vnd.tracer.statement.v1+json"


class LogPass:
    """One pass over the raw log; afterwards `final_root`, `final_size`, `gaps` and the
    rebuilt views (`rebuild`) hold what it found."""

    def __init__(
        self,
        vault: Vault,
        tally: Tally,
        transforms: TransformPass,
        start: int,
        sizes: Sizes,
        scopes: list[str] | None,
    ) -> None:
        self.vault = vault
        self.tally = tally
        self.transforms = transforms
        #: entries before `start` are covered by a receipt: their leaves, checkpoints and
        #: statements are checked, their manifests' per-entry checks are not run again
        self.start = start
        self.sizes = sizes
        self._scopes = scopes
        self.keyring = Roster()
        #: the root of the log before each statement row: what its signed place must name
        self._roots: dict[int, bytes] = {}
        self.gaps: list[int] = []
        self._cp_state = CheckpointState()
        self.final_root = merkle.RootAccumulator().root()
        self.final_size = 0
        self.rebuild = audit.ViewRebuild(vault, start)
        self._top = 0
        self._acc = merkle.RootAccumulator()
        self._by_size: dict[int, list[Any]] = {}
        # signed checkpoints to check once the entry before them is, with the root there
        self._checkpoints_after: dict[int, tuple[list[Any], bytes, str]] = {}
        #: the guarded-entry commitment (`store.guarded`) as the pass reaches each entry
        self._guard = hashlib.sha256()

    def run(self) -> None:
        """Read every entry once, then name the checkpoints beyond the log and the entries
        no checkpoint covers."""
        count, self.gaps, self._top = audit.log_shape(self.vault)
        self.tally.counts["entries"] = count
        checkpoints = self.vault.checkpoints()
        for cp in checkpoints:
            self._by_size.setdefault(cp.size, []).append(cp)
        self.tally.counts["checkpoints"] = len(checkpoints)
        if 0 in self._by_size:
            self._check_checkpoints(self._by_size.pop(0), self._acc.root(), 0, self._guard.hexdigest())
        workers = worker_count(count, self.sizes.workers, self.sizes.pool_min_entries)
        queue = RunQueue(workers, self.sizes.queued)
        try:
            self._scan(queue)
        finally:
            queue.close()
        acc = self._acc
        self.tally.findings.extend(beyond_log_findings(self._by_size, acc.size))
        self.final_root = acc.root()
        self.final_size = acc.size
        covered = max((cp.size for cp in checkpoints), default=0)
        self.tally.findings.extend(uncheckpointed_findings(covered, acc.size))

    def _scan(self, queue: RunQueue) -> None:
        run: list[Row] = []
        for seq, kind, data, stored_leaf in self.vault.raw_entries():
            leaf = merkle.leaf_hash(data)
            row = Row(seq, kind, data, stored_leaf, leaf)
            if guarded_kind(data) is not None:
                self._guard.update(b"%d:%s\n" % (seq, stored_leaf.hex().encode("ascii")))
            if seq < self.start and leaf == stored_leaf and _covered_kind(kind, data):
                self._advance(seq, leaf)
                self._covered(queue, row)
                continue
            # a statement row (or one relabelled as a manifest) is checked here, in
            # order, against the root before it: what its signed place must name
            statement = kind != EntryKind.MANIFEST or _STATEMENT_MARK in data
            if statement:
                self._roots[seq] = self._acc.root()
            self._advance(seq, leaf)
            run = self._queue(queue, run, row, statement)
            for item in queue.due():
                self._fold(queue, item)
        if run:
            self._submit(queue, run)
        self._fold_all(queue)

    def _queue(self, queue: RunQueue, run: list[Row], row: Row, statement: bool) -> list[Row]:
        """Add a manifest row to the run a worker will check (a new run once it is full or
        crosses a compare range); any other row, or every row without workers, is checked
        alone and in order, after the run before it. Returns the run being gathered."""
        if queue.parallel and not statement:
            if run and (
                len(run) >= self.sizes.run or audit.compare_range(run[0].seq) != audit.compare_range(row.seq)
            ):
                self._submit(queue, run)
                run = []
            run.append(row)
            return run
        if run:
            self._submit(queue, run)
        queue.push([row])
        if row.kind in _KEYRING_KINDS or row.kind == EntryKind.MANIFEST:
            self._fold_all(queue)
        return []

    def _advance(self, seq: int, leaf: bytes) -> None:
        """Add the leaf of entry `seq`; a checkpoint of the new size is checked once the
        entry's own checks are folded in."""
        self._acc.append(leaf)
        cps = self._by_size.pop(self._acc.size, None)
        if cps is not None:
            self._checkpoints_after[seq] = (cps, self._acc.root(), self._guard.hexdigest())

    def _covered(self, queue: RunQueue, row: Row) -> None:
        """A row a receipt covers, unchanged since: its leaf and the checkpoints after it
        only (rows whose bytes or kind changed, and roster statements, are checked in full)."""
        self._fold_all(queue)
        seq, kind = row.seq, row.kind
        if kind == EntryKind.MANIFEST:
            self.tally.bump("manifests")
        self._checkpoints_at(seq)
        self.tally.progress("log", seq + 1, self._top)

    def _input(self, rows: list[Row], arrow: bool = False) -> RunInput:
        cust = self.vault.custodian
        roots = {r[0]: self._roots[r[0]] for r in rows if r[0] in self._roots}
        return RunInput(
            rows, self.keyring, cust.ed25519, cust.key_id, self._scopes, arrow, self.vault.origin, roots
        )

    def _submit(self, queue: RunQueue, rows: list[Row]) -> None:
        """Queue a run; a worker starts on it now, against the keyring as it stands."""
        queue.submit(rows, lambda: self._input(rows, arrow=True))

    def _fold_all(self, queue: RunQueue) -> None:
        for item in queue.all():
            self._fold(queue, item)

    def _fold(self, queue: RunQueue, item: Pending) -> None:
        """Fold one run's outcome in, in log order. A worker's result stands only if it
        started from the keyring its predecessors left (`RunQueue.result`)."""
        result = queue.result(item, self.keyring.version, lambda: self._input(item.rows))
        self.keyring = result.keyring
        last = -1
        for seq, found, manifest in result.entries:
            self.tally.findings.extend(found)
            if manifest:
                self.tally.bump("manifests")
            self._checkpoints_at(seq)
            last = seq
        self.tally.progress("log", last + 1, self._top)
        if item.rows and item.rows[0].seq >= self.start:
            # rows of covered entries come from the stored views a receipt vouches for
            self.rebuild.add(item.rows[0].seq, result.rows)
            self.rebuild.add_tables(item.rows[0].seq, result.tables)
        self.transforms.defer(result.deferred)
        self.transforms.add(result.tasks)

    def _checkpoints_at(self, seq: int) -> None:
        after = self._checkpoints_after.pop(seq, None)
        if after is not None:
            self._check_checkpoints(after[0], after[1], seq + 1, after[2])

    def _check_checkpoints(self, cps: list[Any], root: bytes, size: int, guard: str) -> None:
        self.tally.findings.extend(
            checkpoint_findings(
                cps, root, size, guard, self.keyring.note_verifiers(), self.vault.origin, self._cp_state
            )
        )


def _covered_kind(kind: str, data: bytes) -> bool:
    """True when a covered row may skip its per-entry checks: its bytes say the kind its
    row says (canonical entries end `"kind":"K","seq":N}`), and it changes no roster."""
    i = data.rfind(b'"kind":"')
    j = data.find(b'"', i + 8) if i >= 0 else -1
    return j > 0 and data[i + 8 : j].decode("ascii", "replace") == kind and kind not in ROSTER_KINDS
