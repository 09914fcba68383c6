"""Full integrity verification, every finding pinned to its record.

One streaming pass over the raw log recomputes each leaf hash, checks each entry's
position and signature, and accumulates the Merkle root, comparing it with every signed
checkpoint on the way.  The views are then rebuilt from the log and compared, every
referenced digest is accounted for (intact, mismatch, purged or missing), and every
retrieved passage is looked up at its locator in the revision it claims to come from.

Structural checks (Merkle, signatures, views, presence) run for everyone; text
checksums run for what the viewer can decrypt, and the report says how much was not.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from store import audit, merkle, queries
from store.casefile import load_casefile
from store.entries import ROSTER_KINDS
from store.errors import InputError, UnwrapError
from store.gcpause import no_cycle_collection
from store.guarded import guarded_kind
from store.records import TransformKey
from store.roster import Roster
from store.vault import Vault
from tracer.clock import now_iso
from tracer.engine.currency import CurrencyEngine, Memo
from tracer.engine.logcheck import (
    Finding,
    RunInput,
    RunResult,
    Task,
    check_run,
    finding,
    manifest_tasks,
)
from tracer.engine.receipt import Receipt, load_receipt, save_receipt
from tracer.engine.session import Session
from tracer.engine.transform import Transform, TransformChecker, derived_transform
from tracer.engine.verdicts import (
    CheckpointState,
    beyond_log_findings,
    checkpoint_findings,
    digest_findings,
    duplicate_findings,
    gap_findings,
    text_problem,
    uncheckpointed_findings,
    unreferenced_findings,
)
from tracer.engine.vocabulary import INFO_KINDS

__all__ = ["INFO_KINDS", "Finding", "Progress", "Sizes", "VerifyReport", "verify"]

Progress = Callable[[str, int, int], None]


#: transformation-trace verdicts that are findings (the others are counted only)
_TRANSFORM_FINDINGS = frozenset(
    {"found_elsewhere", "not_found", "unknown_normalizer", "not_in_source", "source_missing"}
)

#: passages held for the transform pass (checked grouped by cited revision), and the
#: revisions whose texts are read together within it
_TRANSFORM_PAGE = 200_000
_TEXT_CHUNK = 2_000
#: log rows per worker job, and jobs queued per worker
_RUN = 250
_QUEUED = 3
#: logs shorter than this are checked in-line: starting workers would cost more than they save
_POOL_MIN_ENTRIES = 4_000
#: row kinds that change who may sign: the log pass waits for everything before them
_KEYRING_KINDS = frozenset(
    {"vault_init", "key_add", "key_revoke", "investigator_grant", "investigator_revoke"}
)
#: bytes every statement entry holds (its envelope's payloadType), whatever its row says
_STATEMENT_MARK = b"application/vnd.tracer.statement.v1+json"
_GAP_HINTS = ("answer_id", "run_id", "document_id", "revision", "digest")
#: views with one row per log entry: what they say about a missing entry names it
_ENTRY_TABLES = frozenset({"v_answers", "v_revisions", "v_deletions", "v_tombstones", "v_findings"})
_VIEW_RECORD_FIELDS = ("answer_id", "run_id", "passage_id", "digest", "document_id", "revision")


@dataclass
class VerifyReport:
    computed_at: str
    checkpoint: dict[str, Any]
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    viewer: str | None = None
    #: "full", or "incremental" from a receipt covering entries before `verified_from`
    mode: str = "full"
    verified_from: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def checkpoint_covers_log(self) -> bool:
        return bool(self.checkpoint.get("size") == self.checkpoint.get("log_size"))

    @property
    def ok(self) -> bool:
        return not any(f.kind not in INFO_KINDS for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "computed_at": self.computed_at,
            "viewer": self.viewer,
            "mode": self.mode,
            "verified_from": self.verified_from,
            "warnings": self.warnings,
            "checkpoint": self.checkpoint,
            "counts": self.counts,
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass(frozen=True)
class Sizes:
    """How verification cuts its work into pieces. The findings, their order and the
    counts never depend on these (the tamper matrix runs with every size at 1); they
    trade memory against speed, and are parameters so tests need patch no module."""

    #: manifest rows per run handed to a worker
    run: int = _RUN
    #: runs queued per worker before the pass waits for results
    queued: int = _QUEUED
    #: passages whose transform checks are grouped into one page
    transform_page: int = _TRANSFORM_PAGE
    #: cited revisions whose texts are read at once within a page
    text_chunk: int = _TEXT_CHUNK
    #: logs shorter than this are checked in-line (workers would cost more than they save)
    pool_min_entries: int = _POOL_MIN_ENTRIES
    #: worker processes; None: TRACER_VERIFY_WORKERS, else one per core for a large log
    workers: int | None = None


def _worker_count(entries: int, sizes: Sizes) -> int:
    """Worker processes for the log pass: one per core for a large log, none for a small one.

    TRACER_VERIFY_WORKERS overrides it (0: all in this process), for benchmarks and tests.
    """
    if sizes.workers is not None:
        return sizes.workers
    value = os.environ.get("TRACER_VERIFY_WORKERS", "").strip()
    if value:
        if not value.isdigit():
            raise InputError("environment", "TRACER_VERIFY_WORKERS", f"not a whole number: {value!r}")
        return int(value)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores if cores > 1 and entries >= sizes.pool_min_entries else 0


def _pool(workers: int) -> ProcessPoolExecutor | None:
    """Worker processes, or None: without them the same checks run in this process.

    Creating the pool can fail where processes cannot be started as usual (inside a
    Textual app before `tracer.tui.opening` started the resource tracker, stderr has no
    file descriptor to hand on; a sandbox may forbid semaphores): that is no reason to
    fail verification.
    """
    if not workers:
        return None
    try:
        return ProcessPoolExecutor(workers, mp_context=get_context("spawn"))
    except (OSError, ValueError, RuntimeError):
        return None


@dataclass
class _Pending:
    """A run of log rows, checked in a worker (`future`) or, when its turn comes, here."""

    rows: list[tuple[int, str, bytes, bytes, bytes]]
    future: Future[RunResult] | None = None


class _Verifier:
    def __init__(
        self, vault: Vault, session: Session | None, progress: Progress | None, start: int, sizes: Sizes
    ):
        self.vault = vault
        self.sizes = sizes
        #: entries before `start` are covered by a receipt: their leaves, checkpoints and
        #: statements are checked, their manifests' per-entry checks are not run again
        self.start = start
        self.session = session
        self.progress = progress or (lambda _phase, _done, _total: None)
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = {}
        self.keyring = Roster()
        #: the root of the log before each statement row: what its signed place must name
        self._roots: dict[int, bytes] = {}
        self.gaps: list[int] = []
        self._cp_state = CheckpointState()
        self.final_root = merkle.RootAccumulator().root()
        self.final_size = 0
        self.rebuild = audit.ViewRebuild(vault, start)
        self.view_diffs: list[audit.ViewDiff] = []
        self._top = 0
        # signed checkpoints to check once the entry before them is, with the root there
        self._checkpoints_after: dict[int, tuple[list[Any], bytes, str]] = {}
        #: the guarded-entry commitment (`store.guarded`) as the pass reaches each entry
        self._guard = hashlib.sha256()
        # transform checks run page by page during the log pass, on the payloads it decoded
        self._scopes: list[str] | None = list(session.scopes) if session is not None else None
        self._sources: Memo[str, tuple[str, str]] = Memo(4096)
        self._tpage: list[Task] = []
        self._tkeys: dict[TransformKey, TransformKey] = {}
        self._tdeferred: list[Task] = []
        self._tfindings: list[tuple[int, int, Finding]] = []
        # verdicts by everything a non-derived passage's transform depends on: popular
        # chunks are retrieved by many answers and are checked once
        self._checker: TransformChecker | None = None
        self._changed: set[str] = set()

    def find(self, kind: str, seq: int | None, detail: str, /, **record: Any) -> None:
        self.findings.append(finding(kind, seq, detail, **record))

    def bump(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    # -- pass 1: the log ---------------------------------------------------------------

    def scan_log(self) -> None:
        """Leaf hashes and the Merkle root here, in log order; the per-entry checks in
        runs, by worker processes for a large log, taken back strictly in log order."""
        count, gaps, top = audit.log_shape(self.vault)
        self.counts["entries"] = count
        self.gaps = gaps
        self._top = top
        checkpoints = self.vault.checkpoints()
        by_size: dict[int, list[Any]] = {}
        for cp in checkpoints:
            by_size.setdefault(cp.size, []).append(cp)
        self.counts["checkpoints"] = len(checkpoints)
        acc = merkle.RootAccumulator()
        if 0 in by_size:
            self._check_checkpoints(by_size.pop(0), acc.root(), 0, self._guard.hexdigest())
        workers = _worker_count(count, self.sizes)
        pool = _pool(workers)
        queue: deque[_Pending] = deque()
        run: list[tuple[int, str, bytes, bytes, bytes]] = []
        try:
            for seq, kind, data, stored_leaf in self.vault.raw_entries():
                leaf = merkle.leaf_hash(data)
                row = (seq, kind, data, stored_leaf, leaf)
                if guarded_kind(data) is not None:
                    self._guard.update(b"%d:%s\n" % (seq, stored_leaf.hex().encode("ascii")))
                if seq < self.start and leaf == stored_leaf and _covered_kind(kind, data):
                    acc.append(leaf)
                    if acc.size in by_size:
                        self._checkpoints_after[seq] = (
                            by_size.pop(acc.size),
                            acc.root(),
                            self._guard.hexdigest(),
                        )
                    pool = self._covered(pool, queue, row)
                    continue
                # a statement row (or one relabelled as a manifest) is checked here, in
                # order, against the root before it: what its signed place must name
                statement = kind != "manifest" or _STATEMENT_MARK in data
                if statement:
                    self._roots[seq] = acc.root()
                acc.append(leaf)
                if acc.size in by_size:
                    self._checkpoints_after[seq] = (
                        by_size.pop(acc.size),
                        acc.root(),
                        self._guard.hexdigest(),
                    )
                if pool is not None and not statement:
                    full_run = len(run) >= self.sizes.run
                    if run and (full_run or audit.compare_range(run[0][0]) != audit.compare_range(seq)):
                        pool = self._submit(pool, queue, run)
                        run = []
                    run.append(row)
                else:
                    if run:
                        pool = self._submit(pool, queue, run)
                        run = []
                    queue.append(_Pending([row]))
                    if kind in _KEYRING_KINDS or kind == "manifest":
                        while queue:
                            pool = self._take(pool, queue.popleft())
                while queue and (queue[0].future is None or queue[0].future.done()):
                    pool = self._take(pool, queue.popleft())
                while len(queue) > self.sizes.queued * max(workers, 1):
                    pool = self._take(pool, queue.popleft())
            if run:
                pool = self._submit(pool, queue, run)
            while queue:
                pool = self._take(pool, queue.popleft())
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self.findings.extend(beyond_log_findings(by_size, acc.size))
        self.final_root = acc.root()
        self.final_size = acc.size
        covered = max((cp.size for cp in checkpoints), default=0)
        self.findings.extend(uncheckpointed_findings(covered, acc.size))

    def _covered(
        self,
        pool: ProcessPoolExecutor | None,
        queue: deque[_Pending],
        row: tuple[int, str, bytes, bytes, bytes],
    ) -> ProcessPoolExecutor | None:
        """A row a receipt covers, unchanged since: its leaf and the checkpoints after it
        only (rows whose bytes or kind changed, and roster statements, are checked in full)."""
        while queue:
            pool = self._take(pool, queue.popleft())
        seq, kind = row[0], row[1]
        if kind == "manifest":
            self.bump("manifests")
        after = self._checkpoints_after.pop(seq, None)
        if after is not None:
            self._check_checkpoints(after[0], after[1], seq + 1, after[2])
        self.progress("log", seq + 1, self._top)
        return pool

    def _input(self, rows: list[tuple[int, str, bytes, bytes, bytes]], arrow: bool = False) -> RunInput:
        cust = self.vault.custodian
        roots = {r[0]: self._roots[r[0]] for r in rows if r[0] in self._roots}
        return RunInput(
            rows, self.keyring, cust.ed25519, cust.key_id, self._scopes, arrow, self.vault.origin, roots
        )

    def _submit(
        self,
        pool: ProcessPoolExecutor | None,
        queue: deque[_Pending],
        rows: list[tuple[int, str, bytes, bytes, bytes]],
    ) -> ProcessPoolExecutor | None:
        """Queue a run; a worker starts on it now, against the keyring as it stands."""
        item = _Pending(rows)
        if pool is not None:
            try:
                item.future = pool.submit(check_run, self._input(rows, arrow=True))
            except BrokenProcessPool:
                pool = None
        queue.append(item)
        return pool

    def _take(self, pool: ProcessPoolExecutor | None, item: _Pending) -> ProcessPoolExecutor | None:
        """Fold one run's outcome in, in log order.

        A worker's result stands only if it started from the keyring its predecessors
        left; otherwise (a key added or revoked earlier in a run still in flight) the run
        is checked again here.  A broken pool is not a finding: its runs are checked here.
        """
        result: RunResult | None = None
        if item.future is not None:
            try:
                result = item.future.result()
            except BrokenProcessPool:
                pool = None
            if result is not None and result.started != self.keyring.version:
                result = None
        if result is None:
            result = check_run(self._input(item.rows))
        self.keyring = result.keyring
        last = -1
        for seq, found, manifest in result.entries:
            self.findings.extend(found)
            if manifest:
                self.bump("manifests")
            after = self._checkpoints_after.pop(seq, None)
            if after is not None:
                self._check_checkpoints(after[0], after[1], seq + 1, after[2])
            last = seq
        self.progress("log", last + 1, self._top)
        if item.rows and item.rows[0][0] >= self.start:
            # rows of covered entries come from the stored views a receipt vouches for
            self.rebuild.add(item.rows[0][0], result.rows)
            self.rebuild.add_tables(item.rows[0][0], result.tables)
        self._tdeferred.extend(result.deferred)
        # one key object per distinct passage key on a page: each run's are separate
        # copies after pickling, and a page holds many repeats of popular chunks
        keys = self._tkeys
        for task in result.tasks:
            if task.memo:
                same = keys.setdefault(task.key, task.key)
                if same is not task.key:
                    task = task.with_key(same)
            self._tpage.append(task)
        if len(self._tpage) >= self.sizes.transform_page:
            self._transform_tasks(self._tpage)
            self._tpage = []
            self._tkeys = {}
        return pool

    def _check_checkpoints(self, cps: list[Any], root: bytes, size: int, guard: str) -> None:
        self.findings.extend(
            checkpoint_findings(
                cps, root, size, guard, self.keyring.note_verifiers(), self.vault.origin, self._cp_state
            )
        )

    # -- pass 2: views, digests, texts --------------------------------------------------

    def check_views(self) -> None:
        self.progress("views", 0, 1)
        hints: dict[int, dict[str, Any]] = {}
        for d in self.view_diffs:
            rec = {k: d.values.get(k) for k in _VIEW_RECORD_FIELDS if d.values.get(k) is not None}
            if d.table == "v_revisions":
                rec["digest"] = d.values.get("content_sha256")
            if d.problem == "view_row_altered_or_extra" and d.table in _ENTRY_TABLES:
                hints.setdefault(d.seq, {}).update(rec)
            detail = f"{d.table} row does not match the log: {d.row}"
            self.find(d.problem, d.seq, detail, table=d.table, **rec)
        for mend in self.vault.views.mended:
            # rows this process found edited and derived again before verify could look
            for diff in mend.diffs:
                rec = {k: diff.values.get(k) for k in _VIEW_RECORD_FIELDS if diff.values.get(k) is not None}
                if mend.table == "v_revisions":
                    rec["digest"] = diff.values.get("content_sha256")
                shown = json.dumps(diff.values, default=str, ensure_ascii=False)[:400]
                detail = f"{mend.table} row does not match the log: {shown}"
                self.find(diff.problem, diff.seq, detail, table=mend.table, **rec)
        self.findings.extend(duplicate_findings(audit.duplicate_answers(self.vault)))
        # What the (untrusted) stored views still say an absent entry was, to pin the loss.
        gap_hints = {
            seq: {k: v for k, v in hints.get(seq, {}).items() if k in _GAP_HINTS} for seq in self.gaps
        }
        self.findings.extend(gap_findings(self.gaps, gap_hints))
        self.progress("views", 1, 1)

    def check_digests(self) -> None:
        """Every referenced digest accounted for; each stored text decrypted and hashed once.

        One streaming pass over the blobs the viewer holds keys for records only the
        digests that do not verify; SQL then classifies every reference (counts per
        verdict, and the references that are findings), so no per-reference object is
        ever built in Python.
        """
        bad: dict[str, tuple[str, str]] = {}
        dk_ids: list[str] = []
        if self.session is not None:
            keys = self.session.keys
            dk_ids = sorted(keys.keys)
            first = self.vault.blob_first_copies(dk_ids)
            done = 0
            for batch in self.vault.blob_batches(dk_ids):
                self.progress("texts", done, 0)
                done += len(batch)
                for digest, collection, dk_id, nonce, ct in batch:
                    if first and first.get(digest, collection) != collection:
                        continue  # `decrypt` reads the first copy by collection name
                    try:
                        data: bytes | None = keys.open_row(digest, collection, dk_id, nonce, ct)
                    except UnwrapError:
                        data = None
                    problem = text_problem(digest, data)
                    if problem is not None:
                        bad[digest] = problem
        scopes = list(self.session.scopes) if self.session is not None else None
        counts, found = audit.digest_verdicts(self.vault, bad, dk_ids, scopes)
        # texts that no longer read as intact: covered passages reading them are re-traced
        self._changed = set(bad) | {f.digest for f in found}
        for verdict in ("purged", "missing", "out_of_scope", "intact"):
            if counts.get(verdict):
                self.bump(verdict, counts.pop(verdict))
        for verdict, n in sorted(counts.items()):
            self.bump(verdict, n)
        self.findings.extend(digest_findings(found))
        self.progress("texts", 1, 1)
        self.check_data_keys()
        self.findings.extend(unreferenced_findings(audit.blob_digests_unreferenced(self.vault)))

    def check_case_file(self) -> None:
        """Validly signed case-file statements that break its rules (a case opened twice, a
        release of a hold that is not in force, an item of an unknown case): each is left
        out of the case file, and named here.  Signature and place problems of the same
        entries are the log pass's findings already."""
        for p in load_casefile(self.vault).problems:
            if p.code == "case_statement_refused":
                self.find("case_statement_refused", p.seq, p.detail, kind=p.kind)

    def check_data_keys(self) -> None:
        """Texts of a collection the viewer is granted but holds no data key for.

        Deleting the wrapped keys (which live outside the log) cannot forge a text, but it
        would make every text of the collection read as "outside your scope" and verify
        look clean; here it is a finding that names the collection and how much is hidden.
        """
        if self.session is None:
            return
        s = self.session
        held = set(s.keys.keys)
        missing: dict[str, int] = {}
        for collection, dk_id, texts in queries.blob_data_keys(self.vault):
            if s.can_read(collection) and dk_id not in held:
                missing[collection] = missing.get(collection, 0) + texts
        for collection, texts in sorted(missing.items()):
            self.find(
                "data_key_missing",
                None,
                f"you are granted {collection!r} but no data key for {texts} of its stored texts is "
                "wrapped to you (the wrapped keys were deleted or never shared): they cannot be read "
                "or checked",
                collection=collection,
            )
        for dk_id in s.keys.failed:
            self.find(
                "data_key_unreadable",
                None,
                f"the data key {dk_id} wrapped to you does not unwrap with your key (altered)",
                collection=dk_id.split("#", 1)[0],
            )

    def check_transforms(self) -> None:
        """Each retained passage at its locator in the revision it names.

        Passages are checked during the log pass, a page of manifests at a time, on the
        payloads that pass already decoded: the texts a page needs (retrieved texts and
        cited revisions) come from one batched read, and the page's passages are checked
        grouped by cited revision so each is normalized once per page.  Passages derived
        from an answer or note wait until the views are rebuilt (their source may come
        later in the log).  Findings are reported in log order, as a one-by-one pass would.
        """
        if self.session is None:
            return
        if self.start:
            self._retrace_covered()
        self._transform_tasks(self._tpage)
        self._tpage = []
        self._transform_tasks(self._tdeferred)
        self._tdeferred = []
        self._tfindings.sort(key=lambda t: (t[0], t[1]))
        self.findings.extend(f for _seq, _pos, f in self._tfindings)
        self._tfindings = []
        self.progress("trace", 1, 1)

    def _retrace_covered(self) -> None:
        """Covered manifests whose transformation trace reads a text that is no longer
        intact (altered, lost or purged since): traced again, as a full pass would."""
        assert self.session is not None  # noqa: S101 - only called with a session
        changed = self._changed | set(audit.tombstoned_digests(self.vault, since=self.start))
        scopes = list(self.session.scopes)
        for seq in audit.covered_manifests_citing(self.vault, sorted(changed), self.start):
            for _seq, _kind, data, _leaf in self.vault.raw_entries(seq, seq + 1):
                tasks, deferred = manifest_tasks(scopes, seq, data)
                self._tpage.extend(tasks)
                self._tdeferred.extend(deferred)

    def _transform_tasks(self, tasks: list[Task]) -> None:
        if self.session is None or not tasks:
            return
        checker = self._checker
        if checker is None:
            # one checker (and engine) for the whole pass: popular revisions stay
            # normalized across pages, and each distinct key is checked once
            checker = self._checker = TransformChecker(CurrencyEngine(self.session), memo=32768)
        # Verdicts already known (popular chunks are retrieved by many answers) are
        # recorded before any text is read: only the rest need their texts.
        pending: list[Task] = []
        for task in tasks:
            known = checker.known(task.key, task.memo)
            if known is None:
                pending.append(task)
            else:
                self._transform_verdict(task, known)
        if not pending:
            return
        checker.engine.prefetch_revisions(
            {t.key.document_id for t in pending if type(t.key.document_id) is str}
        )
        ranked = sorted(((_revision_key(t), i) for i, t in enumerate(pending)))
        # Texts are read a chunk of revisions at a time, so a page can hold many passages
        # (each revision normalized once per page) while few texts are held at once.
        chunk: list[Task] = []
        revisions = 0
        last: tuple[str, str] | None = None
        for rk, i in ranked:
            if rk != last:
                if revisions >= self.sizes.text_chunk:
                    self._transform_chunk(checker, chunk)
                    chunk, revisions = [], 0
                revisions += 1
                last = rk
            chunk.append(pending[i])
        if chunk:
            self._transform_chunk(checker, chunk)

    def _transform_chunk(self, checker: TransformChecker, chunk: list[Task]) -> None:
        engine = checker.engine
        seen: set[tuple[TransformKey, str | None]] = set()
        unique = []
        for task in chunk:
            mark = (task.key, task.derived_from)
            if mark not in seen:
                seen.add(mark)
                unique.append(task)
        passages, revisions = self._page_texts(engine, self._sources, unique)
        # one blob scan per chunk: DuckDB reads texts by scanning, however few are asked
        engine.prefetch(passages + checker.next_page(revisions), batch=len(unique) * 2 + 1)
        for task in chunk:
            try:
                t = self._transform(checker, self._sources, task)
            except (KeyError, TypeError, ValueError) as exc:
                self._tfind(
                    task.seq, task.pos, "entry_malformed", f"passage unreadable: {exc!r}", kind=task.kind
                )
                continue
            if t is not None:
                self._transform_verdict(task, t)

    def _transform_verdict(self, task: Task, t: Transform) -> None:
        self.bump(f"transform_{t.state}")
        if t.state in _TRANSFORM_FINDINGS:
            self._tfind(
                task.seq,
                task.pos,
                f"transform_{t.state}",
                t.detail,
                answer_id=task.answer_id,
                passage_id=task.passage_id,
                document_id=task.key.document_id,
                revision=task.key.revision,
            )

    def _tfind(self, seq: int, pos: int, kind: str, detail: str, /, **record: Any) -> None:
        self._tfindings.append((seq, pos, finding(kind, seq, detail, **record)))

    def _source_ref(self, sources: Memo[str, tuple[str, str]], source: str) -> tuple[str, str] | None:
        """(digest, collection) of the stored text of the answer or note `source`."""
        src = sources.get(source)
        if src is None:
            found = audit.answer_text_ref(self.vault, source)
            if found is not None:
                src = sources.put(source, found)
        return src

    def _page_texts(
        self,
        engine: CurrencyEngine,
        sources: Memo[str, tuple[str, str]],
        tasks: list[Task],
    ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(digest, collection) of every readable text a page's passages will ask for:
        the passages' own texts and their sources', then the cited revisions'."""
        assert self.session is not None  # noqa: S101 - checked by the caller
        can_read = self.session.can_read
        items: list[tuple[str, str]] = []
        revisions: list[tuple[str, str]] = []
        for task in tasks:
            key = task.key
            try:
                coll = str(key.collection)
                if not can_read(coll):
                    continue
                items.append((str(key.retrieved_sha256), coll))
                if task.derived_from:
                    src = self._source_ref(sources, str(task.derived_from))
                    if src is not None:
                        items.append(src)
                    continue
                cited = engine.cited_revision(key.document_id, key.revision)
                if cited is not None:
                    revisions.append((cited.content_sha256, cited.collection))
            except (KeyError, TypeError, ValueError, AttributeError):
                continue  # reported when the passage itself is checked
        return [(d, c) for d, c in items if can_read(c)], [(d, c) for d, c in revisions if can_read(c)]

    def _transform(
        self, checker: TransformChecker, sources: Memo[str, tuple[str, str]], task: Task
    ) -> Transform | None:
        assert self.session is not None  # noqa: S101 - checked by the caller
        key, source = task.key, task.derived_from
        if not source:
            known = checker.known(key, task.memo)
            if known is not None:
                return known
        retrieved = checker.engine.text(key.retrieved_sha256, key.collection)
        if not source:
            return checker.check(key, retrieved, task.memo)
        src = self._source_ref(sources, str(source))
        if src is not None and not self.session.can_read(src[1]):
            return None
        return derived_transform(
            str(source), key.retrieved_sha256, retrieved, checker.engine.text(*src) if src else None
        )


def _covered_kind(kind: str, data: bytes) -> bool:
    """True when a covered row may skip its per-entry checks: its bytes say the kind its
    row says (canonical entries end `"kind":"K","seq":N}`), and it changes no roster."""
    i = data.rfind(b'"kind":"')
    j = data.find(b'"', i + 8) if i >= 0 else -1
    return j > 0 and data[i + 8 : j].decode("ascii", "replace") == kind and kind not in ROSTER_KINDS


def _revision_key(task: Task) -> tuple[str, str]:
    return (str(task.key.document_id), str(task.key.revision))


#: DuckDB's buffer pool during verification: the pass reads the whole log once and keeps
#: only compact tables, so cached pages of it are of no use and only add to the peak RSS
_VERIFY_MEMORY_LIMIT = "256MB"


def verify(
    vault: Vault,
    session: Session | None = None,
    progress: Progress | None = None,
    *,
    full: bool = False,
    sizes: Sizes = Sizes(),
) -> VerifyReport:
    """Check everything; with a session, start from this machine's receipt unless `full`.

    An incremental verification re-hashes every leaf and readable text, checks every
    checkpoint and statement, and proves the log extends the receipt's root and that the
    covered entries' view rows hash as the receipt says; only manifests after the
    receipt get the per-entry checks again.  Anything that does not match makes it full.
    A clean verification with a session leaves a new receipt (`tracer.engine.receipt`).
    """
    with (
        no_cycle_collection(),
        vault.memory_limit(_VERIFY_MEMORY_LIMIT),
        vault.blob_index(),
        vault.views.unchecked(),
    ):
        start, warnings = 0, []
        receipt = None
        if session is not None and not full:
            receipt, warning = _usable_receipt(vault, session)
            if warning:
                warnings.append(warning)
        report: VerifyReport | None = None
        covered: dict[str, dict[int, str]] = {}
        size = vault.size()
        # the view digests a new receipt needs are computed on a second DuckDB connection
        # while the log pass runs (DuckDB works without the GIL): those of the groups a
        # receipt does not already vouch for
        kept = (receipt.size // audit.DIGEST_GROUP) if receipt is not None else 0
        growing = audit.view_digests_meanwhile(vault, size, kept * audit.DIGEST_GROUP) if session else None
        if receipt is not None:
            # the covered views are hashed meanwhile too; if they changed since the receipt,
            # this run is discarded and done in full
            digests = audit.view_digests_meanwhile(vault, receipt.size)
            report = _verify(vault, session, progress, receipt.size, sizes)
            if digests() == receipt.views:
                start, covered = receipt.size, receipt.views
            else:
                warnings.append("receipt: view rows of covered entries changed since; verifying in full")
                report = None
        if report is None:
            report = _verify(vault, session, progress, 0, sizes)
        grown = growing() if growing is not None else {}
        report.mode = "incremental" if start else "full"
        report.verified_from = start
        report.warnings = warnings
        if session is not None and report.ok and not session.status.forensic and report.checkpoint_covers_log:
            if int(report.checkpoint["log_size"]) != size or (not start and kept):
                # the log grew meanwhile (it cannot: this process holds it), or the receipt was
                # not used after all: hash every group again
                kept = 0
                grown = audit.view_digests(vault, int(report.checkpoint["log_size"]))
            views = {t: {g: h for g, h in covered.get(t, {}).items() if g < kept} | grown[t] for t in grown}
            save_receipt(
                session.trust.home,
                session,
                Receipt(
                    origin=vault.origin,
                    viewer=session.identity.key_id,
                    scopes=tuple(session.scopes),
                    size=int(report.checkpoint["log_size"]),
                    root=str(report.checkpoint["recomputed_root"]),
                    views=views,
                    computed_at=report.computed_at,
                ),
            )
        return report


def _usable_receipt(vault: Vault, session: Session) -> tuple[Receipt | None, str]:
    """This viewer's receipt if the log still extends it, else (None, why not)."""
    receipt, warning = load_receipt(session.trust.home, session)
    if receipt is None:
        return None, warning
    size = vault.size()
    if receipt.size > size:
        return None, f"receipt: covers {receipt.size} entries but the log has {size}; verifying in full"
    if vault.root(receipt.size).hex() != receipt.root:
        return None, "receipt: the log no longer extends the root it vouches for; verifying in full"
    return receipt, ""


def _verify(
    vault: Vault, session: Session | None, progress: Progress | None, start: int, sizes: Sizes
) -> VerifyReport:
    v = _Verifier(vault, session, progress, start, sizes)
    v.scan_log()
    v.view_diffs = v.rebuild.finish()
    latest = vault.checkpoints()[-1] if vault.checkpoints() else None
    v.check_views()
    v.check_case_file()
    v.check_digests()
    v.check_transforms()
    report = VerifyReport(
        computed_at=now_iso(),
        checkpoint={
            "size": latest.size if latest else 0,
            "signer": latest.signer if latest else None,
            "recomputed_root": v.final_root.hex(),
            "log_size": v.final_size,
        },
        counts=v.counts,
        findings=v.findings,
        viewer=session.who if session else None,
    )
    return report
