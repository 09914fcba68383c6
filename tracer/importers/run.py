"""One import call: read every file, build every statement, then append all or nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from store import queries
from store.attest import Attestation
from store.crypto import Identity, sha256_hex
from store.errors import InputError, UnwrapError
from store.gcpause import no_cycle_collection
from store.imported import ImportedItem, SignedImport, append_imported, signed_imports
from store.ingest import read_input_file
from store.keyring import DataKeys
from store.queries import RevisionRow
from store.vault import Vault
from tracer.importers.build import DocumentMapping, ExportFile, build_item, mapped_ids
from tracer.importers.formats import ExportFormat
from tracer.importers.mapping import ImportedAnswer, ReadOptions, Skipped, answers_of, inferred_limit
from tracer.importers.otlp import Span, read_otlp_json_lines, read_otlp_proto
from tracer.importers.phoenix import read_phoenix_parquet

__all__ = ["Conflict", "ExportFormat", "ImportConflictError", "ImportPlan", "import_files", "plan_import"]


_READERS: dict[ExportFormat, Callable[[bytes, str], list[Span]]] = {
    ExportFormat.OTLP_JSON: read_otlp_json_lines,
    ExportFormat.OTLP_PROTO: read_otlp_proto,
    ExportFormat.PHOENIX_PARQUET: read_phoenix_parquet,
}


@dataclass(frozen=True)
class Conflict:
    """An answer this import would bring in that the vault (or this call) already holds
    with other content, or holds in an entry that cannot be checked: never imported over."""

    file: str
    answer_id: str
    trace_id: str
    root_span_id: str
    reason: str


class ImportConflictError(InputError):
    """The real run refuses every answer of a call holding a conflict (all or nothing)."""

    def __init__(self, conflicts: list[Conflict]):
        first = conflicts[0]
        more = f" (and {len(conflicts) - 1} more conflict(s))" if len(conflicts) > 1 else ""
        super().__init__(first.file, "$", f"answer {first.answer_id}: {first.reason}{more}")
        self.conflicts = conflicts


@dataclass
class ImportPlan:
    """What an import would append: one statement per answer, what was skipped (traces
    with no answer, answers already in the vault with the same content), what conflicts."""

    items: list[ImportedItem] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    #: answers skipped because the vault or this call already holds them, same content
    already: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    #: what the reader inferred about a file (a value length limit), said once per file
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "appended": bool(self.seqs),
            "answers": [
                _item_json(it, self.seqs[i] if self.seqs else None) for i, it in enumerate(self.items)
            ],
            "skipped": [asdict(s) for s in self.skipped],
            "already_imported": self.already,
            "conflicts": [asdict(c) for c in self.conflicts],
            "notes": list(self.notes),
        }


def _item_json(it: ImportedItem, seq: int | None) -> dict[str, Any]:
    st = it.statement
    fields = st["fields"]
    unattested = {path: f for path, f in fields.items() if f["state"] != Attestation.ATTESTED}
    counts: dict[str, int] = {}
    for f in fields.values():
        counts[f["state"]] = counts.get(f["state"], 0) + 1
    return {
        "file": it.file,
        "seq": seq,
        "answer_id": st["answer_id"],
        "trace_id": st["trace_id"],
        "span_ids": st["span_ids"],
        "export_sha256": st["export"]["sha256"],
        "passages": len(st["passages"]),
        "located": sum(1 for p in st["passages"] if p["chain"] is not None),
        "attestation_counts": dict(sorted(counts.items())),
        "unattested": unattested,
    }


class _Revisions:
    """The source revisions the passages' metadata names, read in batches, decrypted once.

    A file's passages name a few revisions many times over: each is looked up and
    decrypted once per import, with one query per few hundred documents, instead of once
    per passage.
    """

    _PAGE = 500

    def __init__(self, vault: Vault, custodian: Identity) -> None:
        self.vault = vault
        self.keys = DataKeys(vault, custodian)
        self.found: dict[tuple[str, str], tuple[RevisionRow, str] | None] = {}

    def prefetch(self, answers: list[ImportedAnswer], mapping: DocumentMapping) -> None:
        pairs = self._unread_pairs(answers, mapping)
        docs = sorted({d for d, _r in pairs})
        for i in range(0, len(docs), self._PAGE):
            self._read_page(pairs, docs[i : i + self._PAGE])

    def _unread_pairs(self, answers: list[ImportedAnswer], mapping: DocumentMapping) -> set[tuple[str, str]]:
        """The (document id, revision) pairs the answers' documents name and no earlier file read."""
        pairs: set[tuple[str, str]] = set()
        for a in answers:
            for d in a.documents:
                document_id, revision = mapped_ids(d.metadata.value, mapping)
                if document_id and revision and (document_id, revision) not in self.found:
                    pairs.add((document_id, revision))
        return pairs

    def _read_page(self, pairs: set[tuple[str, str]], page: list[str]) -> None:
        """Read the revisions of one page of documents, and the texts of those `pairs` names."""
        rows = queries.revisions_of_many(self.vault, page)
        wanted = {
            (d, r): next((row for row in rows[d] if row.revision == r), None) for d, r in pairs if d in rows
        }
        texts = self.keys.decrypt_many([row.content_sha256 for row in wanted.values() if row is not None])
        for pair, row in wanted.items():
            self.found[pair] = None if row is None else self._checked_text(row, texts.get(row.content_sha256))

    @staticmethod
    def _checked_text(
        row: RevisionRow, got: tuple[str, bytes] | UnwrapError | None
    ) -> tuple[RevisionRow, str] | None:
        """The revision with its text when the text is there and its digest matches, else None."""
        if isinstance(got, UnwrapError):
            raise got  # an altered stored text: tampering, never "not located"
        if got is None or sha256_hex(got[1]) != row.content_sha256:
            return None  # purged, out of reach or altered: never located against it
        return row, got[1].decode("utf-8")

    def find(self, document_id: str, revision: str) -> tuple[RevisionRow, str] | None:
        return self.found.get((document_id, revision))


def plan_import(
    vault: Vault,
    custodian: Identity,
    files: list[Path],
    fmt: ExportFormat,
    collection: str,
    now: str,
    mapping: DocumentMapping,
    opts: ReadOptions,
) -> ImportPlan:
    """Read and build everything; raises InputError (file, line, JSON path) on the first bad file."""
    plan = ImportPlan()
    revisions = _Revisions(vault, custodian)
    for path in files:
        data = read_input_file(path)
        spans = _READERS[fmt](data, str(path))
        answers, skipped = answers_of(spans, _file_options(plan, str(path), spans, opts))
        del spans
        plan.skipped += skipped
        export = ExportFile(data, sha256_hex(data), str(fmt))
        revisions.prefetch(answers, mapping)
        plan.items += [build_item(a, export, collection, now, mapping, revisions.find) for a in answers]
    _sort_overlaps(vault, plan)
    return plan


def _file_options(plan: ImportPlan, file: str, spans: list[Span], opts: ReadOptions) -> ReadOptions:
    """The options for one file: with no `--value-length-limit`, a limit the file itself
    shows (its longest values stop at one common length) marks values that long `truncated`."""
    if opts.value_length_limit is not None:
        return opts
    found = inferred_limit(spans)
    if found is None:
        return opts
    limit, count = found
    plan.notes.append(
        f"{file}: {count} attribute value(s) stop at exactly {limit} characters, the longest in the "
        f"file: taken as the exporter's value length limit (values that long are marked truncated; "
        "--value-length-limit N says it instead)"
    )
    source = f"inferred: {count} values of the file stop at exactly {limit} characters"
    return replace(opts, value_length_limit=limit, limit_source=source)


def _where(it: ImportedItem) -> str:
    lines = it.statement["export"]["lines"]
    return f"{it.file}:{lines[0]}" if lines else it.file


def _sort_overlaps(vault: Vault, plan: ImportPlan) -> None:
    """Overlapping exports (rotated daily, re-exported with a wider window): an answer the
    vault or this call already holds with the same content is skipped and listed; with
    other content, or held in an entry that cannot be checked, it is a conflict.

    "The same content" is the trace digest the custodian signed (`signed_imports` reads
    the log entry and checks its signature and place), never a view row.
    """
    keep = _first_copies(plan)
    signed = signed_imports(vault, [it.answer_id for it in keep])
    plan.items = []
    for it in keep:
        held = signed.get(it.answer_id)
        if held is None:
            plan.items.append(it)
        else:
            _against_signed(plan, it, held)


def _skip(plan: ImportPlan, it: ImportedItem, why: str) -> None:
    st = it.statement
    plan.already += 1
    plan.skipped.append(Skipped(_where(it), st["trace_id"], st["root_span_id"], why))


def _conflict(plan: ImportPlan, it: ImportedItem, why: str) -> None:
    st = it.statement
    plan.conflicts.append(Conflict(_where(it), it.answer_id, st["trace_id"], st["root_span_id"], why))


def _first_copies(plan: ImportPlan) -> list[ImportedItem]:
    """The first item of each answer id; a later copy is skipped when its trace digest is
    the same, and a conflict when it is not."""
    keep: list[ImportedItem] = []
    first: dict[str, ImportedItem] = {}
    for it in plan.items:
        seen = first.setdefault(it.answer_id, it)
        if seen is it:
            keep.append(it)
        elif seen.statement["trace_sha256"] == it.statement["trace_sha256"]:
            _skip(plan, it, f"the same trace, with the same content, as {_where(seen)}: read once")
        else:
            _conflict(
                plan,
                it,
                f"also in {_where(seen)} with other content (trace sha256 "
                f"{seen.statement['trace_sha256'][:16]}… there, {it.statement['trace_sha256'][:16]}… "
                "here): which copy is the evidence? Import them in separate calls to see",
            )
    return keep


def _against_signed(plan: ImportPlan, it: ImportedItem, held: SignedImport) -> None:
    """An item whose answer the vault already holds: skipped when the signed trace digest is
    its own, a conflict in every other case (unreadable entry, no digest, other format)."""
    mine = it.statement["trace_sha256"]
    if held.problem is not None:
        _conflict(plan, it, f"already in the vault, but its entry cannot be checked: {held.problem}")
    elif held.trace_sha256 is None:
        _conflict(
            plan,
            it,
            f"already in the vault (log entry {held.seq}), imported before trace digests were "
            "recorded: whether this copy is the same cannot be told",
        )
    elif held.export_format != it.statement["export"]["format"]:
        _conflict(
            plan,
            it,
            f"already in the vault (log entry {held.seq}), imported from a {held.export_format} "
            f"export; a {it.statement['export']['format']} copy cannot be compared with it byte "
            "for byte, so it is not imported beside it",
        )
    elif held.trace_sha256 == mine:
        _skip(plan, it, f"already in the vault with the same content (log entry {held.seq})")
    else:
        _conflict(
            plan,
            it,
            f"already in the vault (log entry {held.seq}) with OTHER content: trace sha256 "
            f"{held.trace_sha256} signed there, {mine} in this export. A changed trace is never "
            "imported over the signed one",
        )


def import_files(
    vault: Vault,
    custodian: Identity,
    files: list[Path],
    fmt: ExportFormat,
    collection: str,
    now: str,
    mapping: DocumentMapping,
    opts: ReadOptions,
    dry_run: bool = False,
) -> ImportPlan:
    """Plan, then append every new answer in one batch; raises `ImportConflictError` (nothing
    appended) when any answer conflicts.  A dry run returns the plan, conflicts listed."""
    # a file's spans, answers and statements are millions of small acyclic objects:
    # paused, the cycle collector does not walk them again and again (superlinear)
    with no_cycle_collection():
        plan = plan_import(vault, custodian, files, fmt, collection, now, mapping, opts)
        if dry_run:
            return plan
        if plan.conflicts:
            raise ImportConflictError(plan.conflicts)
        if plan.items:
            plan.seqs = append_imported(vault, custodian, plan.items)
    return plan
