"""`tracer verify-dataset`: an export re-verified without the vault, DuckDB by default.

The passes follow `tracer verify` so the findings are its records in its order:

1. every row's leaf hash is recomputed by a Python function over the Arrow batches
   DuckDB reads (and per row group the subtree root, folded into the tree root);
2. the statement rows (few) are checked in log order against the root before each,
   folding the keyring as `tracer verify` does;
3. the manifest rows are checked by the same `check_run`, batch by batch, each against
   the keyring that held at its place: this is the bulk, and the engine distributes it;
4. findings are put in log order with each checkpoint's after the entry that completes
   it; then the log-wide rules (`tracer.engine.verdicts`) over the view rows derived
   from the log: replayed answers, gaps, the case file, every referenced text's verdict.

Then what only a dataset has: the DSSE-signed manifest (by a key the log's roster
names), each file's SHA-256, the row-group layout, the tiles against the recomputed
leaves, the references file against the derived references, and each plaintext
against its digest.  Known limit: the transformation trace (passage at its locator in
the cited revision) is not re-run here; `docs/scale.md` says so.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Unpack

import pyarrow as pa

from store import dataset as ds
from store.casefile import case_row, fold_casefile
from store.crypto import b64d, key_id_of
from store.dsse import Envelope, verify_envelope
from store.entries import ROSTER_KINDS, LogEntry
from store.errors import InputError, SignatureError
from store.guarded import guarded_kind
from store.keyring import in_scope
from store.merkle import RootAccumulator
from store.roster import Roster
from store.rows import EntryRow
from store.rowtables import RowsTable
from store.tiles import TILE_WIDTH, TileError, bundle, entry_tile_path, hash_tiles
from tracer.engine.dataset_check import (
    CheckContext,
    ManifestRows,
    RowResult,
    is_statement,
    leaf_batch,
    perfect_root,
    signer_finding,
    subtree_root,
)
from tracer.engine.dataset_pool import PoolChecks
from tracer.engine.jsonshapes import DatasetCheckpointJSON, DatasetReportJSON, FindingRecord
from tracer.engine.logcheck import Finding, LogRow, RunInput, check_run, finding
from tracer.engine.verdicts import (
    CheckpointState,
    beyond_log_findings,
    checkpoint_findings,
    data_key_findings,
    digest_findings,
    duplicate_findings,
    gap_findings,
    text_problem,
    uncheckpointed_findings,
    unreferenced_findings,
)
from tracer.engine.vocabulary import INFO_KINDS, FindingKind

__all__ = ["DatasetReport", "ManifestRows", "verify_dataset"]


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
    statement: bool
    signer: str | None = None


def verify_dataset(
    root: Path, engine: str = "duckdb", manifests: ManifestRows | None = None
) -> DatasetReport:
    with ds.DatasetReader(root) as reader:
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
        self.extra: list[Finding] = []

    def find(
        self, kind: FindingKind, seq: int | None, detail: str, /, **record: Unpack[FindingRecord]
    ) -> None:
        self.extra.append(finding(kind, seq, detail, **record))

    # -- the manifest ------------------------------------------------------------------

    def _manifest(self) -> tuple[dict[str, Any], Envelope | None]:
        try:
            payload = (self.root / ds.MANIFEST_FILE).read_bytes()
            manifest = json.loads(payload)
            if not isinstance(manifest, dict) or manifest.get("format") != ds.FORMAT:
                raise ValueError(f"not a {ds.FORMAT} manifest")
        except (OSError, ValueError) as exc:
            raise ds.DatasetError(f"{self.root / ds.MANIFEST_FILE}: unreadable ({exc})") from exc
        env: Envelope | None = None
        try:
            raw = json.loads((self.root / ds.DSSE_FILE).read_bytes())
            env = Envelope.from_json(raw, ds.DSSE_FILE)
            if env.payload != payload or env.payload_type != ds.PAYLOAD_TYPE:
                self.find(
                    FindingKind.DATASET_MANIFEST_MISMATCH,
                    None,
                    f"{ds.DSSE_FILE} signs other bytes (or another type) than {ds.MANIFEST_FILE}: "
                    "the manifest was edited after it was signed",
                    file=ds.MANIFEST_FILE,
                )
        except (OSError, ValueError, InputError) as exc:
            self.find(
                FindingKind.DATASET_MANIFEST_UNSIGNED, None, f"{ds.DSSE_FILE}: {exc}", file=ds.DSSE_FILE
            )
        return manifest, env

    def _files(self, manifest: dict[str, Any]) -> None:
        listed: dict[str, str] = {}
        for item in manifest.get("files", []):
            if isinstance(item, dict):
                listed[str(item.get("path"))] = str(item.get("sha256"))
        skip = {ds.MANIFEST_FILE, ds.DSSE_FILE}
        present = {p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()} - skip
        for path in sorted(set(listed) | present):
            if path not in present:
                self.find(FindingKind.DATASET_FILE_MISSING, None, f"{path} is listed but absent", file=path)
            elif path not in listed:
                self.find(
                    FindingKind.DATASET_FILE_UNLISTED,
                    None,
                    f"{path} is not in the signed manifest",
                    file=path,
                )
            elif ds.sha256_file(self.root / path) != listed[path]:
                self.find(
                    FindingKind.DATASET_FILE_MISMATCH,
                    None,
                    f"{path}: SHA-256 differs from the signed manifest",
                    file=path,
                )

    # -- the log -----------------------------------------------------------------------

    def _leaves(self) -> list[_Row]:
        self.reader.register_predicate("tracer_is_statement", _statement_flags)
        table = self.reader.scan_log("tracer_leaf", leaf_batch)
        meta = self.reader.table(
            ds.LOG_FILE, "file_row_number, seq, kind, leaf_hash, signer", "file_row_number"
        )
        rows = []
        for pos, seq, kind, stored, value, signer in zip(
            meta.column(0).to_pylist(),
            meta.column(1).to_pylist(),
            meta.column(2).to_pylist(),
            meta.column(3).to_pylist(),
            table.column(1).to_pylist(),
            meta.column(4).to_pylist(),
            strict=True,
        ):
            rows.append(
                _Row(
                    int(pos),
                    -1 if seq is None else int(seq),
                    str(kind or ""),
                    bytes(stored or b""),
                    value[:32],
                    value[32:] == b"\x01",
                    signer,
                )
            )
        return rows

    def _layout(self, rows: list[_Row], group: int) -> list[bytes]:
        """Row group g holds entries g*G.. in order; the subtree root of each group."""
        sizes = self.reader.row_group_sizes
        roots = []
        start = 0
        for g, n in enumerate(sizes):
            part = rows[start : start + n]
            if n != group and g != len(sizes) - 1:
                self.find(
                    FindingKind.DATASET_ROW_GROUP_MISALIGNED,
                    g * group,
                    f"row group {g} holds {n} rows, not {group}: rows were dropped or added",
                    row_group=g,
                )
            bad = [r for i, r in enumerate(part) if r.seq != g * group + i]
            if bad:
                first = bad[0]
                self.find(
                    FindingKind.DATASET_ROW_OUT_OF_PLACE,
                    first.seq,
                    f"row group {g} holds entry {first.seq} at position {first.pos - start} "
                    f"({len(bad)} rows of the group out of place): dropped, duplicated or reordered",
                    row_group=g,
                )
            roots.append(subtree_root([r.leaf for r in part]) if part else b"")
            start += n
        return roots

    def run(self) -> DatasetReport:
        manifest, env = self._manifest()
        files_at = len(self.extra)
        group = int(manifest.get("row_group") or 1)
        origin = str(manifest.get("origin", ""))
        cust = manifest.get("custodian") or {}
        cust_ed = b64d(str(cust.get("ed25519", "")))
        exporter = manifest.get("exporter") or {}
        scopes = exporter.get("scopes")
        scope_list = [str(s) for s in scopes] if isinstance(scopes, list) else None
        rows = self._leaves()
        roots = self._layout(rows, group)
        counts: dict[str, int] = {"entries": len(rows)}
        cps_table = self.reader.table(ds.CHECKPOINTS_FILE, "id, size, signer, note", "id")
        checkpoints = [
            _Cp(int(i), int(s), str(g), str(n))
            for i, s, g, n in zip(*(cps_table.column(k).to_pylist() for k in range(4)), strict=True)
        ]
        counts["checkpoints"] = len(checkpoints)
        by_size: dict[int, list[_Cp]] = {}
        for cp in checkpoints:
            by_size.setdefault(cp.size, []).append(cp)
        # pass 2: statements in order, with the root before each and the keyring as it goes
        stmt_pos = [r.pos for r in rows if r.statement]
        stmt_bytes = self._statement_bytes(stmt_pos)
        keyring = Roster()
        keyrings: list[tuple[int, Roster]] = [(0, keyring)]
        per_row: dict[int, RowResult] = {}
        acc = RootAccumulator()
        guard = hashlib.sha256()
        cp_after: dict[int, tuple[list[_Cp], bytes]] = {}
        roots_before: dict[int, bytes] = {}
        for r in rows:
            if r.statement:
                roots_before[r.pos] = acc.root()
            acc.append(r.leaf)
            if acc.size in by_size:
                cp_after[r.pos] = (by_size.pop(acc.size), acc.root())
        guard_at: dict[int, str] = {}
        case_rows: list[EntryRow] = []
        for r in rows:
            data = stmt_bytes.get(r.pos)
            if data is not None:
                if guarded_kind(data) is not None:
                    guard.update(b"%d:%s\n" % (r.seq, r.stored.hex().encode("ascii")))
                result = check_run(
                    RunInput(
                        [LogRow(r.seq, r.kind, data, r.stored, r.leaf)],
                        keyring,
                        cust_ed,
                        key_id_of(cust_ed) if len(cust_ed) == 32 else "",
                        scope_list,
                        False,
                        origin,
                        {r.seq: roots_before[r.pos]},
                    )
                )
                _seq, found, manifest_row = result.entries[0]
                extra = signer_finding(r.seq, r.signer, data)
                per_row[r.pos] = RowResult(found + ([extra] if extra else []), manifest_row, result.rows)
                if result.keyring.version != keyring.version:
                    keyring = result.keyring
                    keyrings.append((r.pos + 1, keyring))
                if (
                    r.kind in ROSTER_KINDS
                    or _entry_kind(data) in ROSTER_KINDS
                    or case_row(r.kind, _entry_kind(data))
                ):
                    case_rows.append(EntryRow(r.seq, r.kind, data, r.stored))
            if r.pos in cp_after:
                guard_at[r.pos] = guard.hexdigest()
        ctx = CheckContext(
            tuple(keyrings),
            cust_ed,
            key_id_of(cust_ed) if len(cust_ed) == 32 else "",
            tuple(scope_list) if scope_list is not None else None,
            origin,
        )
        # pass 3: the manifests, distributed by the engine
        waiting = self.manifests(self.reader, ctx, [r.pos for r in rows if not r.statement])
        # meanwhile, what needs no manifest's result (each in its place in the report)
        later, self.extra = self.extra, []
        self._files(manifest)
        later[files_at:files_at] = self.extra
        self.extra = later
        # the tree root from the row-group roots, folded (the same as the accumulator's)
        if rows and perfect_root([x for x in roots if x]) != acc.root():
            self.find(
                FindingKind.DATASET_ROOT_FOLD_MISMATCH, None, "row-group roots do not fold into the tree root"
            )
        self._signature(env, keyring, exporter)
        self._tiles(rows)
        batches = waiting()
        tables: list[dict[str, RowsTable]] = []
        for batch in batches:
            per_row.update(batch.rows)
            tables.extend(batch.tables)
        findings: list[Finding] = []
        state = CheckpointState()
        derived: dict[str, list[tuple[Any, ...]]] = {}
        for r in rows:
            res = per_row.get(r.pos)
            if res is not None:
                findings.extend(res.findings)
                if res.manifest:
                    counts["manifests"] = counts.get("manifests", 0) + 1
                for table, items in res.rows.items():
                    derived.setdefault(table, []).extend(items)
            if r.pos in cp_after:
                cps, root = cp_after[r.pos]
                ring = _ring_at(keyrings, r.pos + 1)
                findings.extend(
                    checkpoint_findings(
                        cps, root, r.seq + 1, guard_at[r.pos], ring.note_verifiers(), origin, state
                    )
                )
        findings.extend(beyond_log_findings(by_size, len(rows)))
        covered = max((cp.size for cp in checkpoints), default=0)
        findings.extend(uncheckpointed_findings(covered, len(rows)))
        # log-wide rules over the rows derived from the log
        texts = self.reader.texts([str(n) for n in manifest.get("text_files", [])])
        self.reader.load_facts(
            {t: derived.get(t, []) for t in _tables()},
            tables,
            texts.select(["digest", "collection", "dk_id"]),
        )
        findings.extend(duplicate_findings(self.reader.duplicate_answers()))
        present = sorted({r.seq for r in rows if r.seq >= 0})
        top = present[-1] + 1 if present else 0
        gaps = sorted(set(range(top)) - set(present))[:1000]
        findings.extend(gap_findings(gaps, {}))
        for p in fold_casefile(case_rows, [r.stored for r in rows], origin).problems:
            if p.code == "case_statement_refused":
                findings.append(finding(FindingKind.CASE_STATEMENT_REFUSED, p.seq, p.detail, kind=p.kind))
        findings.extend(self._digests(texts, exporter, scope_list, counts))
        findings.extend(self._data_keys(texts, str(manifest.get("texts", "")), exporter, scope_list))
        findings.extend(unreferenced_findings(self.reader.unreferenced()))
        # what only a dataset has
        self._references()
        for seq, digest, side in self.reader.tombstone_diff():
            self.find(
                FindingKind.DATASET_TOMBSTONE_MISMATCH,
                int(seq),
                "tombstones.parquet names a tombstone the log does not hold"
                if side == "file"
                else "a tombstone the log holds is not in tombstones.parquet",
                digest=digest,
            )
        findings.extend(self.extra)
        return DatasetReport(
            engine=self.engine,
            checkpoint={
                "size": covered,
                "recomputed_root": acc.root().hex(),
                "log_size": len(rows),
            },
            counts=counts,
            findings=findings,
            exporter={k: exporter.get(k) for k in ("name", "key_id", "role", "scopes")},
        )

    def _statement_bytes(self, positions: list[int]) -> dict[int, bytes]:
        if not positions:
            return {}
        table = self.reader.scan_log(
            "tracer_entry_bytes",
            lambda b: b.column("entry").combine_chunks() if b.num_rows else pa.array([], pa.binary()),
            ("entry", "kind"),
            where="tracer_is_statement(kind, entry)",
        )
        return {
            int(p): bytes(v)
            for p, v in zip(table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True)
        }

    def _data_keys(
        self, texts: pa.Table, mode: str, exporter: dict[str, Any], scopes: list[str] | None
    ) -> list[Finding]:
        """`data_key_findings` for the exporter, from what the export holds: the data key of
        every stored text, and which keys the exporter held (a plaintext export's signed
        list; a ciphertext export's wrapped keys to the exporter, taken as unwrapping: a
        wrapped key that would not unwrap cannot be told without the exporter's private
        key).  A digests-only export says neither, so nothing is recomputed for it."""
        if mode == "plaintext":
            held = {str(k) for k in exporter.get("data_keys", [])}
        elif mode == "ciphertext":
            keys = self.reader.table(ds.DATA_KEYS_FILE, "dk_id, recipient")
            me = str(exporter.get("key_id"))
            held = {
                str(d)
                for d, r in zip(keys.column(0).to_pylist(), keys.column(1).to_pylist(), strict=True)
                if r == me
            }
        else:
            return []
        stored: dict[tuple[str, str], int] = {}
        cols = texts.select(["collection", "dk_id"]).to_pydict()
        for c, k in zip(cols["collection"], cols["dk_id"], strict=True):
            stored[(str(c), str(k))] = stored.get((str(c), str(k)), 0) + 1
        return data_key_findings(
            [(c, k, n) for (c, k), n in sorted(stored.items())],
            lambda collection: scopes is not None and in_scope(scopes, collection),
            held,
            [],
        )

    def _digests(
        self, texts: pa.Table, exporter: dict[str, Any], scopes: list[str] | None, counts: dict[str, int]
    ) -> list[Finding]:
        held = sorted(str(k) for k in exporter.get("data_keys", []))
        held_set = set(held)
        bad: dict[str, tuple[str, str]] = {}
        cols = texts.to_pydict()
        first: dict[str, str] = {}
        seen: dict[str, int] = {}
        for d, c, k in zip(cols["digest"], cols["collection"], cols["dk_id"], strict=True):
            if k in held_set:
                seen[d] = seen.get(d, 0) + 1
                first[d] = min(first.get(d, c), c)
        for d, c, k, s, t in zip(
            cols["digest"], cols["collection"], cols["dk_id"], cols["state"], cols["text"], strict=True
        ):
            if k not in held_set or (seen.get(d, 0) > 1 and first[d] != c):
                continue
            if s == "plaintext" and t is not None:
                problem = text_problem(d, bytes(t))
            elif s == "unreadable":
                problem = text_problem(d, None)
            else:
                continue
            if problem is not None:
                bad[d] = problem
        verdicts, found = self.reader.digest_verdicts(bad, held, scopes)
        for verdict in ("purged", "missing", "out_of_scope", "intact"):
            if verdicts.get(verdict):
                counts[verdict] = verdicts.pop(verdict)
        for verdict, n in sorted(verdicts.items()):
            counts[verdict] = n
        return digest_findings(found)

    def _signature(self, env: Envelope | None, keyring: Roster, exporter: dict[str, Any]) -> None:
        if env is None:
            return
        keys: dict[str, bytes] = {}
        if keyring.custodian is not None:
            keys[keyring.custodian.key_id] = keyring.custodian.ed25519
        for key_id, inv in keyring.investigators.items():
            if not inv.revoked_at:
                keys[key_id] = inv.ed25519
        try:
            signer = verify_envelope(env, keys)
        except SignatureError as exc:
            self.find(FindingKind.DATASET_SIGNATURE_INVALID, None, str(exc), file=ds.DSSE_FILE)
            return
        if signer != exporter.get("key_id"):
            self.find(
                FindingKind.DATASET_SIGNATURE_INVALID,
                None,
                f"signed by {signer[:16]}, the manifest names exporter {str(exporter.get('key_id'))[:16]}",
                file=ds.DSSE_FILE,
            )

    def _tiles(self, rows: list[_Row]) -> None:
        try:
            from store.note import Checkpoint

            text = (self.root / "checkpoint").read_text(encoding="utf-8")
            body = text.split("\n\n", 1)[0] + "\n"
            size = Checkpoint.parse(body).size
        except (OSError, ValueError, InputError) as exc:
            self.find(
                FindingKind.DATASET_TILE_MISMATCH, None, f"checkpoint: unreadable ({exc})", file="checkpoint"
            )
            return
        leaves = [r.leaf for r in rows[:size]]
        for path, data in hash_tiles(leaves):
            self._tile(path, data, _tile_span(path))
        entries = self._bundle_source(size)
        for n in range(0, size, TILE_WIDTH):
            chunk = entries[n : min(n + TILE_WIDTH, size)]
            path = entry_tile_path(n // TILE_WIDTH, len(chunk))
            try:
                data = bundle(chunk, n)
            except TileError:
                continue
            self._tile(path, data, (n, n + len(chunk) - 1))

    def _bundle_source(self, size: int) -> list[bytes]:
        table = self.reader.table(ds.LOG_FILE, "entry", "file_row_number")
        return [bytes(v) for v in table.column(0).to_pylist()[:size]]

    def _tile(self, path: str, want: bytes, span: tuple[int, int]) -> None:
        file = self.root / path
        try:
            have = file.read_bytes()
        except OSError:
            have = None
        if have != want:
            self.find(
                FindingKind.DATASET_TILE_MISMATCH,
                span[0],
                f"{path} does not hold the tree's hashes for entries {span[0]}..{span[1]}"
                if have is not None
                else f"{path} is missing",
                file=path,
                first_seq=span[0],
                last_seq=span[1],
            )

    def _references(self) -> None:
        extra, lost = self.reader.reference_diff()
        for problem, items in (
            (FindingKind.DATASET_REFERENCE_ALTERED, extra),
            (FindingKind.DATASET_REFERENCE_MISSING, lost),
        ):
            for r in items:
                self.find(
                    problem,
                    None if r[0] is None else int(r[0]),
                    f"{ds.REFERENCES_FILE} row {_REF_WORDS[problem]} the log",
                    answer_id=r[1],
                    passage_id=r[2],
                    role=r[3],
                    digest=r[4],
                )


_REF_WORDS = {
    FindingKind.DATASET_REFERENCE_ALTERED: "not derivable from",
    FindingKind.DATASET_REFERENCE_MISSING: "missing, derived from",
}


@dataclass(frozen=True)
class _Cp:
    id: int
    size: int
    signer: str
    note: str


def _statement_flags(batch: pa.Table) -> pa.Array:
    kinds = batch.column("kind").to_pylist()
    entries = batch.column("entry").to_pylist()
    return pa.array(
        [is_statement(str(k or ""), bytes(e or b"")) for k, e in zip(kinds, entries, strict=True)], pa.bool_()
    )


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


def _tile_span(path: str) -> tuple[int, int]:
    parts = path.split("/")
    level = int(parts[1])
    tail = "/".join(parts[2:])
    width = TILE_WIDTH
    if ".p/" in tail:
        tail, w = tail.split(".p/")
        width = int(w)
    n = int("".join(p.lstrip("x") for p in tail.split("/")))
    unit = TILE_WIDTH**level
    first = n * TILE_WIDTH * unit
    return first, first + width * unit - 1


def _tables() -> list[str]:
    from store.schema import VIEW_COLUMNS

    return list(VIEW_COLUMNS)
