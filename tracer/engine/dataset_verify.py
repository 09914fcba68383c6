"""`tracer verify-dataset`: an export re-verified without the vault, DuckDB by default.

The passes follow `tracer verify` so the findings are its records in its order:

1. the log is read once (DuckDB, as Arrow), every row's leaf hash recomputed from its
   bytes (and per row group the subtree root, folded into the tree root);
2. the statement rows (few) are checked in log order against the root before each,
   folding the keyring as `tracer verify` does;
3. the manifest rows are checked by the same `check_run`, batch by batch, each against
   the keyring that held at its place: this is the bulk, and the engine distributes it;
   each batch's view rows are loaded and its passages traced as it arrives;
4. findings are put in log order with each checkpoint's after the entry that completes
   it; then the log-wide rules (`tracer.engine.verdicts`) over the view rows derived
   from the log: replayed answers, gaps, the case file, every referenced text's verdict;
5. with a plaintext export, `verify`'s transform pass over the export's texts
   (`tracer.engine.dataset_texts.DatasetSource`), as the exporter.

Then what only a dataset has (`tracer.engine.dataset_files.DatasetFiles`): the
DSSE-signed manifest (by a key the log's roster names), each file's SHA-256, the
row-group layout, the tiles against the recomputed leaves, the references and
tombstones files against the derived rows, and the data keys; here, each plaintext
against its digest.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from store import audit
from store import dataset as ds
from store.casefile import case_row, fold_casefile
from store.crypto import b64d, key_id_of
from store.dsse import Envelope
from store.entries import ROSTER_KINDS, LogEntry
from store.gcpause import no_cycle_collection
from store.guarded import guarded_kind
from store.merkle import RootAccumulator, leaf_hash
from store.roster import Roster
from store.rows import EntryRow
from store.words import TextVerdict
from tracer.engine.dataset_check import (
    FACT_COLUMNS,
    BatchResult,
    CheckContext,
    ManifestRows,
    RowResult,
    is_statement,
    signer_finding,
)
from tracer.engine.dataset_files import DatasetFiles
from tracer.engine.dataset_pool import PoolChecks
from tracer.engine.dataset_texts import DatasetSource
from tracer.engine.jsonshapes import DatasetCheckpointJSON, DatasetReportJSON
from tracer.engine.logcheck import Finding, LogRow, RunInput, Task, check_run, finding
from tracer.engine.transformpass import TransformPass
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
from tracer.engine.verifyrun import Sizes, Tally
from tracer.engine.vocabulary import INFO_KINDS, FindingKind

__all__ = ["DatasetReport", "ManifestRows", "verify_dataset"]

#: rows read between two hand-outs to the workers (`_Verifier._scan`)
_HANDOUT = 256
#: view rows held before they are kept as facts (`DatasetReader.keep_held`): each keep
#: has a fixed cost of a few statements, and what is held at the last batch is kept after it
_KEEP_ROWS = 32_000


@dataclass
class DatasetReport:
    engine: str
    checkpoint: DatasetCheckpointJSON
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    exporter: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.kind not in INFO_KINDS for f in self.findings)

    def to_json(self) -> DatasetReportJSON:
        return {
            "ok": self.ok,
            "engine": self.engine,
            "exporter": self.exporter,
            "checkpoint": self.checkpoint,
            "counts": self.counts,
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass
class _Row:
    pos: int
    seq: int
    kind: str
    stored: bytes
    leaf: bytes
    signer: str | None = None


@dataclass
class _Log:
    """The log as one read gives it: each row's place and leaf, the statement rows'
    bytes (the verifying process checks them), and the entries for the entry bundles."""

    rows: list[_Row]
    statements: dict[int, bytes]
    entries: list[memoryview]
    leaves: list[bytes]


@dataclass(frozen=True)
class _Plan:
    """What the signed manifest says the export is (checked as it is used)."""

    group: int
    origin: str
    custodian_ed25519: bytes
    exporter: dict[str, Any]
    scopes: list[str] | None
    texts: str
    text_files: list[str]

    @classmethod
    def of(cls, manifest: dict[str, Any]) -> _Plan:
        cust = manifest.get("custodian") or {}
        exporter = manifest.get("exporter") or {}
        scopes = exporter.get("scopes")
        return cls(
            int(manifest.get("row_group") or 1),
            str(manifest.get("origin", "")),
            b64d(str(cust.get("ed25519", ""))),
            exporter,
            [str(s) for s in scopes] if isinstance(scopes, list) else None,
            str(manifest.get("texts", "")),
            [str(n) for n in manifest.get("text_files", [])],
        )

    @property
    def custodian_key_id(self) -> str:
        return key_id_of(self.custodian_ed25519) if len(self.custodian_ed25519) == 32 else ""

    def context(self, keyrings: list[tuple[int, Roster]]) -> CheckContext:
        scopes = tuple(self.scopes) if self.scopes is not None else None
        return CheckContext(
            tuple(keyrings), self.custodian_ed25519, self.custodian_key_id, scopes, self.origin
        )


@dataclass
class _Statements:
    """The statement pass: each statement row's result, the keyrings as they changed,
    and where each checkpoint falls with the root and guarded digest at it."""

    per_row: dict[int, RowResult] = field(default_factory=dict)
    keyrings: list[tuple[int, Roster]] = field(default_factory=lambda: [(0, Roster())])
    cp_after: dict[int, tuple[list[_Cp], bytes]] = field(default_factory=dict)
    guard_at: dict[int, str] = field(default_factory=dict)
    case_rows: list[EntryRow] = field(default_factory=list)
    beyond: dict[int, list[_Cp]] = field(default_factory=dict)
    root: bytes = b""
    tasks: list[Task] = field(default_factory=list)
    deferred: list[Task] = field(default_factory=list)
    roots_before: dict[int, bytes] = field(default_factory=dict)
    #: the statement rows left for `_other_statements`: (row, bytes, kind its bytes say)
    later: list[tuple[_Row, bytes, str]] = field(default_factory=list)
    traced: dict[int, tuple[list[Task], list[Task]]] = field(default_factory=dict)
    cases: dict[int, EntryRow] = field(default_factory=dict)

    @property
    def keyring(self) -> Roster:
        return self.keyrings[-1][1]


@dataclass
class _Derived:
    """What the checks handed back, put together in log order: the findings, and the
    passages derived from an answer or note (traced last)."""

    findings: list[Finding] = field(default_factory=list)
    deferred: list[Task] = field(default_factory=list)


def verify_dataset(
    root: Path, engine: str = "duckdb", manifests: ManifestRows | None = None
) -> DatasetReport:
    with no_cycle_collection(), ds.DatasetReader(root) as reader:
        if manifests is not None:
            return _Verifier(root, reader, engine, manifests).run()
        with PoolChecks(reader.entries) as checks:
            return _Verifier(root, reader, engine, checks).run()


class _Verifier:
    def __init__(self, root: Path, reader: ds.DatasetReader, engine: str, manifests: ManifestRows) -> None:
        self.root = root
        self.reader = reader
        self.engine = engine
        self.manifests = manifests
        self.files = DatasetFiles(root, reader)
        self.counts: dict[str, int] = {}

    def run(self) -> DatasetReport:
        manifest, env = self.files.manifest()
        plan = _Plan.of(manifest)
        log, stmts = self._scan(plan)
        roots = self.files.layout(log.rows, plan.group)
        waiting = self.manifests(self.reader, plan.context(stmts.keyrings), log.leaves)
        self._other_statements(stmts, plan)
        texts, text_cols, bad = self._meanwhile(manifest, env, plan, log, roots, stmts)
        facts = _statement_rows(stmts)
        self.reader.begin_facts({t: facts.get(t, []) for t in _tables()}, FACT_COLUMNS)
        transforms = self._transform_pass(plan, text_cols, stmts, facts)
        derived = self._collect(log.rows, stmts, self._batches(waiting(), transforms), plan)
        findings = derived.findings
        covered = max((c.size for cps, _root in stmts.cp_after.values() for c in cps), default=0)
        covered = max([covered, *stmts.beyond])
        findings.extend(beyond_log_findings(stmts.beyond, len(log.rows)))
        findings.extend(uncheckpointed_findings(covered, len(log.rows)))
        self.reader.end_facts(texts.select(["digest", "collection", "dk_id"]))
        findings.extend(self._log_wide(log, stmts, plan))
        findings.extend(digest_findings(self._digest_verdicts(bad, plan)))
        findings.extend(self.files.data_keys(texts, plan.texts, plan.exporter, plan.scopes))
        findings.extend(unreferenced_findings(self.reader.unreferenced()))
        findings.extend(self._transform_findings(transforms, derived))
        self.files.references()
        self.files.tombstones()
        findings.extend(self.files.findings)
        return DatasetReport(
            engine=self.engine,
            checkpoint={"size": covered, "recomputed_root": stmts.root.hex(), "log_size": len(log.rows)},
            counts=self.counts,
            findings=findings,
            exporter={k: plan.exporter.get(k) for k in ("name", "key_id", "role", "scopes")},
        )

    # -- the steps, in order -----------------------------------------------------------

    def _checkpoints(self) -> dict[int, list[_Cp]]:
        cps_table = self.reader.table(ds.CHECKPOINTS_FILE, "id, size, signer, note", "id")
        checkpoints = [
            _Cp(int(i), int(s), str(g), str(n))
            for i, s, g, n in zip(*(cps_table.column(k).to_pylist() for k in range(4)), strict=True)
        ]
        self.counts["checkpoints"] = len(checkpoints)
        by_size: dict[int, list[_Cp]] = {}
        for cp in checkpoints:
            by_size.setdefault(cp.size, []).append(cp)
        return by_size

    def _scan(self, plan: _Plan) -> tuple[_Log, _Statements]:
        """Passes 1 and 2's first part, in one read of the log in log order: each row's leaf
        recomputed from its entry's bytes where they lie (the tree's root growing with it,
        so each checkpoint's place and the root before each statement row are known), the
        statement rows picked by their bytes, and those that may change who signs
        (`ROSTER_KINDS`, by the kind their bytes say, as `check_run` folds them) checked
        against the keyring before them.  The keyrings in force over the rows read so far
        are then final, which is all the workers need: every `_HANDOUT` rows they are handed
        what has been read (`PoolChecks.submit_upto`), so they start on the first slices
        while the rest is read.  The other statements are checked later
        (`_other_statements`)."""
        table = self.reader.log_table()
        self.counts["entries"] = table.num_rows
        by_size = self._checkpoints()
        chunks = self.reader.log_entries()
        early = self.manifests.submit_upto if isinstance(self.manifests, PoolChecks) else None
        log = _Log([], {}, [v for chunk in chunks for v in chunk.views()], [])
        out = _Statements()
        acc = RootAccumulator()
        guard = hashlib.sha256()
        meta = ("file_row_number", "seq", "kind", "leaf_hash", "signer")
        for (pos, seq, kind, stored, signer), (data, view, start, end) in zip(
            zip(*(table.column(c).to_pylist() for c in meta), strict=True), _spans(chunks), strict=True
        ):
            kind = str(kind or "")
            leaf = leaf_hash(view[start:end])
            r = _Row(int(pos), -1 if seq is None else int(seq), kind, bytes(stored or b""), leaf, signer)
            log.rows.append(r)
            log.leaves.append(leaf)
            if is_statement(kind, data, start, end):
                body = log.statements[r.pos] = data[start:end]
                if guarded_kind(body) is not None:
                    guard.update(b"%d:%s\n" % (r.seq, r.stored.hex().encode("ascii")))
                self._statement_row(out, r, body, plan, acc.root())
            acc.append(leaf)
            if acc.size in by_size:
                out.cp_after[r.pos] = (by_size.pop(acc.size), acc.root())
                out.guard_at[r.pos] = guard.hexdigest()
            if early is not None and acc.size % _HANDOUT == 0:
                early(self.reader, acc.size, plan.context(out.keyrings), log.leaves)
        out.root, out.beyond = acc.root(), by_size
        return log, out

    def _statement_row(self, out: _Statements, r: _Row, data: bytes, plan: _Plan, root_before: bytes) -> None:
        """A statement row as the scan meets it: the root before it noted, and checked now
        when it may change who signs, else kept for `_other_statements`."""
        out.roots_before[r.pos] = root_before
        kind = _entry_kind(data)
        if kind in ROSTER_KINDS:
            self._statement(out, r, data, kind, plan, out.keyring)
        else:
            out.later.append((r, data, kind))

    def _other_statements(self, out: _Statements, plan: _Plan) -> None:
        """Pass 2, second part (while the workers check manifests): every other statement
        row against the keyring in force at its place, a run of them at a time (one
        `check_run` each, as `tracer verify` checks runs of rows).  None of them can
        change the keyring (`check_run` folds only `ROSTER_KINDS`); one that did would mean
        the keyrings the workers were given are wrong, so it stops the verification."""
        for run in _runs(out.later, sorted(out.per_row), out.keyrings):
            ring = _ring_at(out.keyrings, run[0][0].pos)
            if self._statements_run(out, run, plan, ring).version != ring.version:
                seqs = ", ".join(str(r.seq) for r, _data, _kind in run)
                raise RuntimeError(
                    f"entries {seqs}: a statement that is not a roster kind changed the keyring"
                )
        out.later = []
        for pos in sorted(out.per_row):
            tasks, deferred = out.traced.get(pos, ([], []))
            out.tasks.extend(tasks)
            out.deferred.extend(deferred)
        out.case_rows = [row for _pos, row in sorted(out.cases.items())]

    def _statement(
        self, out: _Statements, r: _Row, data: bytes, kind: str, plan: _Plan, keyring: Roster
    ) -> bool:
        """One statement row checked against `keyring`; True when it changed it (then the
        new keyring applies from the next row)."""
        after = self._statements_run(out, [(r, data, kind)], plan, keyring)
        changed = after.version != keyring.version
        if changed:
            out.keyrings.append((r.pos + 1, after))
        return changed

    def _statements_run(
        self, out: _Statements, run: list[tuple[_Row, bytes, str]], plan: _Plan, keyring: Roster
    ) -> Roster:
        """Consecutive statement rows (no other statement between them) checked against
        `keyring` in one `check_run`; the keyring it ends with.  The
        run's view rows, tasks and deferred passages are kept at its first row's place,
        so they stay in log order among the other statements'."""
        result = check_run(
            RunInput(
                [LogRow(r.seq, r.kind, data, r.stored, r.leaf) for r, data, _kind in run],
                keyring,
                plan.custodian_ed25519,
                plan.custodian_key_id,
                plan.scopes,
                False,
                plan.origin,
                {r.seq: out.roots_before[r.pos] for r, _data, _kind in run},
            )
        )
        first = run[0][0].pos
        for i, ((r, data, kind), (_seq, found, manifest_row)) in enumerate(
            zip(run, result.entries, strict=True)
        ):
            extra = signer_finding(r.seq, r.signer, result.signers[i])
            rows = result.rows if i == 0 else {}
            out.per_row[r.pos] = RowResult(found + ([extra] if extra else []), manifest_row, rows)
            if r.kind in ROSTER_KINDS or kind in ROSTER_KINDS or case_row(r.kind, kind):
                out.cases[r.pos] = EntryRow(r.seq, r.kind, data, r.stored)
        if result.tasks or result.deferred:
            out.traced[first] = (result.tasks, result.deferred)
        return result.keyring

    def _meanwhile(
        self,
        manifest: dict[str, Any],
        env: Envelope | None,
        plan: _Plan,
        log: _Log,
        roots: list[bytes],
        stmts: _Statements,
    ) -> tuple[pa.Table, dict[str, list[Any]], dict[str, tuple[TextVerdict, str]]]:
        """While the engine checks the manifests: what needs none of their results, each
        finding put in its place in the report; the texts (as read, and as columns), and
        those not matching their digests."""
        if log.rows:
            self.files.fold(roots, stmts.root)
        self.files.signature(env, stmts.keyring, plan.exporter)
        # the tiles first: each tile file is read once, its SHA-256 taken from the bytes
        # compared (the files' findings still come first, where the manifest's are)
        read = self.files.tiles(log.leaves, log.entries)
        self.files.files(manifest, read)
        texts = self.reader.texts(plan.text_files)
        self.reader.stored_references()
        cols = texts.to_pydict()
        return texts, cols, _text_problems(cols, {str(k) for k in plan.exporter.get("data_keys", [])})

    def _batches(
        self, batches: Iterable[BatchResult], transforms: TransformPass | None
    ) -> Iterator[BatchResult]:
        """Each batch as it comes: its view rows into the reader's tables (kept as facts
        every `_KEEP_ROWS` rows, so little is left for the end) and its passages traced,
        while the engine checks the next ones."""
        for batch in batches:
            for tables in batch.tables:
                self.reader.add_facts(tables)
            if self.reader.held_rows >= _KEEP_ROWS:
                self.reader.keep_held()
            if transforms is not None:
                transforms.add(batch.tasks)
            yield BatchResult(batch.rows, [], [], batch.deferred)

    def _collect(
        self, rows: list[_Row], stmts: _Statements, batches: Iterable[BatchResult], plan: _Plan
    ) -> _Derived:
        """Every row's findings in log order, each checkpoint's after the entry that
        completes it; the passages left to trace."""
        per_row = dict(stmts.per_row)
        out = _Derived(deferred=list(stmts.deferred))
        for batch in batches:
            per_row.update(batch.rows)
            out.deferred.extend(batch.deferred)
        state = CheckpointState()
        manifests = 0
        for r in rows:
            res = per_row.get(r.pos)
            if res is not None:
                out.findings.extend(res.findings)
                manifests += bool(res.manifest)
            if r.pos in stmts.cp_after:
                cps, root = stmts.cp_after[r.pos]
                ring = _ring_at(stmts.keyrings, r.pos + 1)
                out.findings.extend(
                    checkpoint_findings(
                        cps, root, r.seq + 1, stmts.guard_at[r.pos], ring.note_verifiers(), plan.origin, state
                    )
                )
        if manifests:
            self.counts["manifests"] = manifests
        return out

    def _log_wide(self, log: _Log, stmts: _Statements, plan: _Plan) -> list[Finding]:
        """Replayed answers, gaps in the seqs, and the case file's refused statements."""
        findings = list(duplicate_findings(self.reader.duplicate_answers()))
        present = sorted({r.seq for r in log.rows if r.seq >= 0})
        top = present[-1] + 1 if present else 0
        gaps = sorted(set(range(top)) - set(present))[:1000]
        findings.extend(gap_findings(gaps, {}))
        for p in fold_casefile(stmts.case_rows, [r.stored for r in log.rows], plan.origin).problems:
            if p.code == "case_statement_refused":
                findings.append(finding(FindingKind.CASE_STATEMENT_REFUSED, p.seq, p.detail, kind=p.kind))
        return findings

    def _transform_pass(
        self,
        plan: _Plan,
        texts: dict[str, list[Any]],
        stmts: _Statements,
        rows: dict[str, list[tuple[Any, ...]]],
    ) -> TransformPass | None:
        """`tracer verify`'s transform pass over the export's texts, as the exporter (only
        a plaintext export carries texts to trace), with the revisions, deletions and
        tombstones the statement rows derive; every batch's passages are checked as it
        comes (a page each)."""
        if plan.texts != "plaintext" or plan.scopes is None:
            return None
        source = DatasetSource(
            plan.scopes,
            [str(k) for k in plan.exporter.get("data_keys", [])],
            texts,
            rows,
            self.reader.answer_text_ref,
        )
        transforms = TransformPass(None, source, Tally(), Sizes(transform_page=1))
        transforms.add(stmts.tasks)
        return transforms

    def _transform_findings(self, transforms: TransformPass | None, derived: _Derived) -> list[Finding]:
        """The passages derived from an answer or note (their sources are all known now),
        then every transform finding in log order."""
        if transforms is None:
            return []
        transforms.defer(derived.deferred)
        transforms.finish(0, set())
        for key, n in transforms.tally.counts.items():
            self.counts[key] = self.counts.get(key, 0) + n
        return transforms.tally.findings

    def _digest_verdicts(
        self, bad: dict[str, tuple[TextVerdict, str]], plan: _Plan
    ) -> list[audit.DigestVerdict]:
        """Every referenced text's verdict for the exporter (counted), and its findings."""
        held = sorted(str(k) for k in plan.exporter.get("data_keys", []))
        verdicts, found = self.reader.digest_verdicts(bad, held, plan.scopes)
        for verdict, n in audit.ordered_counts(verdicts):
            self.counts[verdict] = n
        return found


@dataclass(frozen=True)
class _Cp:
    id: int
    size: int
    signer: str
    note: str


def _text_problems(cols: dict[str, list[Any]], held: set[str]) -> dict[str, tuple[TextVerdict, str]]:
    """Digest -> problem of every text the exporter held whose bytes do not match their
    digest (a digest stored under several collections is judged by its first)."""
    first: dict[str, str] = {}
    seen: dict[str, int] = {}
    for d, c, k in zip(cols["digest"], cols["collection"], cols["dk_id"], strict=True):
        if k in held:
            seen[d] = seen.get(d, 0) + 1
            first[d] = min(first.get(d, c), c)
    bad: dict[str, tuple[TextVerdict, str]] = {}
    for d, c, k, s, t in zip(
        cols["digest"], cols["collection"], cols["dk_id"], cols["state"], cols["text"], strict=True
    ):
        if k not in held or (seen.get(d, 0) > 1 and first[d] != c):
            continue
        problem = _text_problem(d, s, t)
        if problem is not None:
            bad[d] = problem
    return bad


def _text_problem(digest: str, state: str, text: bytes | None) -> tuple[TextVerdict, str] | None:
    if state == "plaintext" and text is not None:
        return text_problem(digest, bytes(text))
    if state == "unreadable":
        return text_problem(digest, None)
    return None


def _statement_rows(stmts: _Statements) -> dict[str, list[tuple[Any, ...]]]:
    """The view rows the statement rows derive, in log order."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for _pos, res in sorted(stmts.per_row.items()):
        for table, items in res.rows.items():
            out.setdefault(table, []).extend(items)
    return out


def _spans(chunks: list[ds.EntryChunk]) -> Iterator[tuple[bytes, memoryview, int, int]]:
    """Each entry as (its chunk's bytes, a view of them, start, end): one copy a chunk,
    which `bytes.find` searches and `leaf_hash` reads in place, rather than one `bytes` an
    entry."""
    for chunk in chunks:
        data = bytes(chunk.values)
        view = memoryview(data)
        for start, end in zip(chunk.starts, chunk.ends, strict=True):
            yield data, view, start, end


def _runs(
    later: list[tuple[_Row, bytes, str]], checked: list[int], rings: list[tuple[int, Roster]]
) -> Iterator[list[tuple[_Row, bytes, str]]]:
    """`later` (statement rows in log order) cut into runs with one keyring in force and no
    already `checked` statement row between two of their rows: each run's view rows then
    keep their place in log order among the statements'."""
    run: list[tuple[_Row, bytes, str]] = []
    for item in later:
        pos = item[0].pos
        if run:
            prev = run[-1][0].pos
            between = bisect_left(checked, pos) != bisect_left(checked, prev)
            if between or _ring_at(rings, pos) is not _ring_at(rings, prev):
                yield run
                run = []
        run.append(item)
    if run:
        yield run


def _ring_at(rings: list[tuple[int, Roster]], seq: int) -> Roster:
    chosen = rings[0][1]
    for start, ring in rings:
        if start <= seq:
            chosen = ring
    return chosen


def _entry_kind(data: bytes) -> str:
    try:
        return LogEntry.from_bytes(data).kind
    except ValueError:
        return ""


def _tables() -> list[str]:
    from store.schema import VIEW_COLUMNS

    return list(VIEW_COLUMNS)
