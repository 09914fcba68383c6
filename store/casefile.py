"""The case file: cases, tags, notes, conclusions and legal holds, as signed statements.

Every item is a statement appended through `Vault.batch` (bound to its place, signed,
checkpointed by its signer), like findings and access entries.  What the case file
*says* is folded once, by `CaseFile.fold`, from the log's entry bytes — never from the
`v_*` views anyone holding the file can edit — and only from entries that hash to
their stored leaf, carry a valid signature by a key allowed to sign their kind at that
point of the log, and name their own place (`store.roster.check_entry`).  The same
rules (`CaseFile.refusal`) refuse a command before it is signed and ignore an entry in
the log that breaks them, so nothing signed through this module can later read as a
forgery, and a hand-written entry never counts.

Holds are signed by the custodian or by an investigator granted the `hold` right
(`store.roster.Roster.statement_signers`); a purge of held text is refused
(`store.admin.purge`, via `CaseFile.holds_on_digest`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from store import merkle
from store.crypto import Identity
from store.entries import ANSWER_KINDS, CASE_KINDS, HOLD_KINDS, ROSTER_KINDS, EntryKind, LogEntry, Statement
from store.errors import AccessDeniedError, InputError, VaultError
from store.records import MalformedRecordError, Revision
from store.roster import Roster, check_entry
from store.rows import EntryRow
from store.statements import (
    CaseOpenStatement,
    CaseStatementJSON,
    HoldStatement,
    NoteStatement,
    ReleaseStatement,
    TagStatement,
)
from store.textrules import id_problem
from store.vaultfile import INDEX_CHUNK
from store.words import FindingKind

if TYPE_CHECKING:
    from store.vault import Vault

__all__ = [
    "HOLD_SUBJECTS",
    "TAG_RULE",
    "Activity",
    "CaseFile",
    "CaseFinding",
    "CaseFold",
    "CaseProblem",
    "CaseRecord",
    "Hold",
    "Note",
    "Release",
    "Tag",
    "answer_digests",
    "answer_entries",
    "append_case_statement",
    "canonical_target",
    "case_id_problem",
    "case_items",
    "case_row",
    "digest_collections",
    "digests_by_entry",
    "document_collections",
    "document_digests",
    "entries_digests",
    "fold_casefile",
    "load_casefile",
    "target_problem",
]

#: case ids are shown in file names and status bars: short ASCII words
_CASE_ID_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: tags are words an answers filter can name (`tag:dropped-exception`)
TAG_RULE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_TARGET_RULE = re.compile(r"answer|claim:[1-9][0-9]{0,5}|passage:\S{1,128}")
HOLD_SUBJECTS = ("document", "answer", "digest")
_MAX_TITLE = 200
_MAX_TEXT = 20_000
#: row kinds read to fold the case file: the roster (who could sign, when) and the case
_FOLD_KINDS = ROSTER_KINDS | CASE_KINDS | HOLD_KINDS


def case_id_problem(case_id: object) -> str | None:
    if not isinstance(case_id, str) or not _CASE_ID_RULE.fullmatch(case_id):
        return (
            f"case id {case_id!r} is not 1-64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit"
        )
    return None


#: spellings of a target written before there was one (`tracer finding --target citation:1`,
#: the TUI's `citation [1]` and `passage p1`, the default `answer:<its answer id>`)
_OLD_CLAIM = re.compile(r"citation(?::| \[)([1-9][0-9]{0,5})\]?")


def canonical_target(target: str, answer_id: str = "") -> str:
    """The one spelling of what a tag or an investigator note is on: `answer`, `claim:N`
    (citation N, counted from 1) or `passage:ID`.

    Older spellings read as the same target: `citation:N` and `citation [N]` as `claim:N`,
    `passage ID` as `passage:ID`, an empty target and `answer:<the note's own answer id>` as
    `answer`.  Anything else is returned unchanged (and `target_problem` refuses it).
    """
    t = target.strip()
    if not t or t == f"answer:{answer_id}" or (not answer_id and t.startswith("answer:")):
        return "answer"
    old = _OLD_CLAIM.fullmatch(t)
    if old is not None and t.endswith("]") == t.startswith("citation ["):
        return f"claim:{old.group(1)}"
    if t.startswith("passage ") and " " not in t[len("passage ") :]:
        return f"passage:{t[len('passage ') :]}"
    return t


def target_problem(target: object) -> str | None:
    """`answer`, `claim:N` (a citation, numbered from 1) or `passage:ID`."""
    if not isinstance(target, str) or not _TARGET_RULE.fullmatch(target) or id_problem(target):
        return f"target {target!r} is not 'answer', 'claim:N' or 'passage:ID'"
    return None


def _text_problem(name: str, value: object, limit: int, required: bool = True) -> str | None:
    if not isinstance(value, str):
        return f"{name} must be text"
    if required and not value.strip():
        return f"{name} is empty"
    if len(value) > limit:
        return f"{name} is longer than {limit} characters"
    return None


@dataclass(frozen=True, slots=True)
class CaseRecord:
    case_id: str
    title: str
    purpose: str
    opened_by: str
    opened_at: str
    seq: int


@dataclass(frozen=True, slots=True)
class Tag:
    seq: int
    investigator: str
    case_id: str | None
    op: str
    tag: str
    answer_id: str
    target: str
    at: str


@dataclass(frozen=True, slots=True)
class Note:
    """A case note (`kind` note) or a conclusion (`case_conclusion`)."""

    seq: int
    kind: EntryKind
    investigator: str
    case_id: str
    answer_id: str | None
    text: str
    at: str


@dataclass(frozen=True, slots=True)
class Release:
    seq: int
    signer: str
    reason: str
    at: str


@dataclass(frozen=True, slots=True)
class Hold:
    seq: int
    signer: str
    case_id: str | None
    subject_kind: str
    subject: str
    reason: str
    at: str
    release: Release | None = None
    #: for a hold on an answer: the entries it rests on, as the placing investigator's
    #: checked tables found them and signed (None in holds made before this was signed)
    entries: tuple[int, ...] | None = None

    @property
    def in_force(self) -> bool:
        return self.release is None

    def describe(self) -> str:
        return (
            f"hold at log entry {self.seq} on {self.subject_kind} {self.subject!r} "
            f"({self.reason!r}, since {self.at}); release it first: "
            f"`tracer release VAULT {self.seq} --reason …`"
        )


@dataclass(frozen=True, slots=True)
class CaseFinding:
    seq: int
    investigator: str
    case_id: str
    answer_id: str
    target: str
    note: str
    at: str


@dataclass(frozen=True, slots=True)
class Activity:
    """An access entry made while a case was selected."""

    seq: int
    investigator: str
    case_id: str
    action: str
    target: str
    at: str


@dataclass(frozen=True, slots=True)
class CaseProblem:
    """A case-file entry that was not folded in, and why."""

    seq: int
    kind: str
    code: FindingKind
    detail: str


@dataclass
class CaseFile:
    """Everything the log's valid case statements say, in log order."""

    cases: dict[str, CaseRecord] = field(default_factory=dict)
    tags: list[Tag] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    holds: dict[int, Hold] = field(default_factory=dict)
    findings: list[CaseFinding] = field(default_factory=list)
    activity: list[Activity] = field(default_factory=list)
    problems: list[CaseProblem] = field(default_factory=list)

    def copy(self) -> CaseFile:
        """A file of its own: the items are frozen, so copying the containers suffices."""
        return CaseFile(
            dict(self.cases),
            list(self.tags),
            list(self.notes),
            dict(self.holds),
            list(self.findings),
            list(self.activity),
            list(self.problems),
        )

    # -- the one rule ------------------------------------------------------------------

    def refusal(self, kind: EntryKind, stmt: Mapping[str, object]) -> str | None:
        """Why a statement of `kind` may not be appended now (None: it may)."""
        case_id = stmt.get("case_id")
        if kind == EntryKind.CASE_OPEN:
            return self._open_refusal(case_id, stmt)
        if case_id is not None or kind in (EntryKind.NOTE, EntryKind.CASE_CONCLUSION):
            if not isinstance(case_id, str) or case_id not in self.cases:
                return f"no open case {case_id!r}: open it first (`tracer case open`)"
        if not isinstance(stmt.get("at"), str):
            return "at is not a time"
        return self._kind_refusal(kind, stmt)

    def _kind_refusal(self, kind: EntryKind, stmt: Mapping[str, object]) -> str | None:
        """The rule of each statement kind, once its case and time are checked."""
        if kind == EntryKind.TAG:
            return self._tag_refusal(stmt)
        if kind in (EntryKind.NOTE, EntryKind.CASE_CONCLUSION):
            return _note_refusal(stmt)
        if kind == EntryKind.HOLD:
            return _hold_refusal(stmt)
        if kind == EntryKind.HOLD_RELEASE:
            return self._release_refusal(stmt)
        if kind in (EntryKind.ACCESS, EntryKind.FINDING):
            return None
        return f"{kind!r} is not a case-file statement"

    def _open_refusal(self, case_id: object, stmt: Mapping[str, object]) -> str | None:
        problem = case_id_problem(case_id)
        if problem:
            return problem
        if case_id in self.cases:
            return f"case {case_id!r} is already open (log entry {self.cases[str(case_id)].seq})"
        return _text_problem("title", stmt.get("title"), _MAX_TITLE) or _text_problem(
            "purpose", stmt.get("purpose"), _MAX_TEXT
        )

    def _release_refusal(self, stmt: Mapping[str, object]) -> str | None:
        hold_seq = stmt.get("hold_seq")
        held = self.holds.get(hold_seq) if type(hold_seq) is int else None
        if held is None:
            return f"no hold at log entry {hold_seq!r}"
        if held.release is not None:
            return f"the hold at log entry {hold_seq} was already released at entry {held.release.seq}"
        return _text_problem("reason", stmt.get("reason"), _MAX_TEXT)

    def _tag_refusal(self, stmt: Mapping[str, object]) -> str | None:
        shape = _tag_shape_problem(stmt)
        if shape is not None:
            return shape
        tag, op, answer_id = stmt["tag"], stmt["op"], stmt["answer_id"]
        # _tag_shape_problem checked the answer id and the target, refusal the case_id
        on = (cast("str | None", stmt.get("case_id")), cast(str, answer_id), cast(str, stmt["target"]))
        present = tag in self.tags_on(*on)
        if op == "add" and present:
            return f"{tag!r} is already on {stmt['target']} of {answer_id}"
        if op == "remove" and not present:
            return f"{tag!r} is not on {stmt['target']} of {answer_id}"
        return None

    # -- folding -----------------------------------------------------------------------

    def fold(self, seq: int, kind: EntryKind, signer: str, stmt: Mapping[str, object]) -> CaseProblem | None:
        """Apply one checked statement; a statement the rules refuse is a problem, not applied."""
        refused = self.refusal(kind, stmt)
        if refused is not None:
            return CaseProblem(seq, kind, FindingKind.CASE_STATEMENT_REFUSED, refused)
        apply = _FOLDS.get(kind)
        if apply is not None:
            apply(self, seq, kind, signer, stmt)
        return None

    # refusal checked every member the kind's statement type names before these run

    def _fold_open(self, seq: int, _kind: EntryKind, signer: str, stmt: Mapping[str, object]) -> None:
        opened, opening = str(stmt.get("case_id")), cast("CaseOpenStatement", stmt)
        self.cases[opened] = CaseRecord(
            opened, opening["title"], opening["purpose"], signer, str(stmt["at"]), seq
        )

    def _fold_tag(self, seq: int, _kind: EntryKind, signer: str, stmt: Mapping[str, object]) -> None:
        t = cast("TagStatement", stmt)
        case_id = cast("str | None", stmt.get("case_id"))
        self.tags.append(
            Tag(seq, signer, case_id, t["op"], t["tag"], t["answer_id"], t["target"], str(stmt["at"]))
        )

    def _fold_note(self, seq: int, kind: EntryKind, signer: str, stmt: Mapping[str, object]) -> None:
        n = cast("NoteStatement", stmt)
        case_id, at = str(stmt.get("case_id")), str(stmt["at"])
        self.notes.append(Note(seq, kind, signer, case_id, n.get("answer_id"), n["text"], at))

    def _fold_hold(self, seq: int, _kind: EntryKind, signer: str, stmt: Mapping[str, object]) -> None:
        hold = cast("HoldStatement", stmt)
        subject = hold["subject"]
        listed = hold.get("entries")
        entries = tuple(listed) if isinstance(listed, list) else None
        self.holds[seq] = Hold(
            seq,
            signer,
            cast("str | None", stmt.get("case_id")),
            subject["kind"],
            subject["id"],
            hold["reason"],
            str(stmt["at"]),
            entries=entries,
        )

    def _fold_release(self, seq: int, _kind: EntryKind, signer: str, stmt: Mapping[str, object]) -> None:
        release = cast("ReleaseStatement", stmt)
        held = self.holds[release["hold_seq"]]
        self.holds[held.seq] = _released(held, Release(seq, signer, release["reason"], str(stmt["at"])))

    def _fold_finding(self, seq: int, _kind: EntryKind, signer: str, stmt: Mapping[str, object]) -> None:
        case_id = cast("str | None", stmt.get("case_id"))
        if case_id is None:  # a finding made outside a case is no case's
            return
        self.findings.append(
            CaseFinding(
                seq,
                signer,
                case_id,
                str(stmt.get("answer_id", "")),
                str(stmt.get("target", "")),
                str(stmt.get("note", "")),
                str(stmt["at"]),
            )
        )

    def _fold_access(self, seq: int, _kind: EntryKind, signer: str, stmt: Mapping[str, object]) -> None:
        case_id = cast("str | None", stmt.get("case_id"))
        if case_id is None:  # access outside a case is no case's activity
            return
        action, target = str(stmt.get("action", "")), str(stmt.get("target", ""))
        self.activity.append(Activity(seq, signer, case_id, action, target, str(stmt["at"])))

    # -- questions ---------------------------------------------------------------------

    def tags_on(self, case_id: str | None, answer_id: str, target: str) -> list[str]:
        """Tags in force on one target within one case (None: tags made outside a case)."""
        out: list[str] = []
        for t in self.tags:
            if t.case_id == case_id and t.answer_id == answer_id and t.target == target:
                if t.op == "add":
                    out.append(t.tag)
                elif t.tag in out:
                    out.remove(t.tag)
        return out

    def current_tags(self, case_id: str | None = None) -> list[Tag]:
        """The `add` entries still in force, in log order (all cases when `case_id` is None)."""
        live: dict[tuple[str | None, str, str, str], Tag] = {}
        for t in self.tags:
            if case_id is not None and t.case_id != case_id:
                continue
            key = (t.case_id, t.answer_id, t.target, t.tag)
            if t.op == "add":
                live[key] = t
            else:
                live.pop(key, None)
        return sorted(live.values(), key=lambda t: t.seq)

    def holds_in_force(self) -> list[Hold]:
        return [h for h in self.holds.values() if h.in_force]

    def holds_on_digest(self, vault: Vault, digest: str) -> list[Hold]:
        """Holds in force that cover a text: on the digest itself, on an answer whose
        manifest (or lineage) names it, or on a document whose revisions or quoted
        passages it is."""
        out: list[Hold] = []
        in_force = self.holds_in_force()
        # the held answers' own signed lists, read in one query: no derived table is read
        named = vault.cases.named_digests(q for h in in_force if h.entries for q in h.entries)
        for h in in_force:
            if _covers(vault, h, digest, named):
                out.append(h)
        return out


#: how each statement kind the rules accepted is applied to the case file
_FOLDS: dict[EntryKind, Callable[[CaseFile, int, EntryKind, str, Mapping[str, object]], None]] = {
    EntryKind.CASE_OPEN: CaseFile._fold_open,
    EntryKind.TAG: CaseFile._fold_tag,
    EntryKind.NOTE: CaseFile._fold_note,
    EntryKind.CASE_CONCLUSION: CaseFile._fold_note,
    EntryKind.HOLD: CaseFile._fold_hold,
    EntryKind.HOLD_RELEASE: CaseFile._fold_release,
    EntryKind.FINDING: CaseFile._fold_finding,
    EntryKind.ACCESS: CaseFile._fold_access,
}


def _covers(vault: Vault, h: Hold, digest: str, named: Mapping[int, frozenset[str]]) -> bool:
    """Whether hold `h` covers the text `digest`; `named` holds the digests of the entries
    held answers signed."""
    if h.subject_kind == "digest":
        return h.subject == digest
    if h.subject_kind == "answer" and h.entries is not None:
        return any(digest in named.get(q, ()) for q in h.entries)
    if h.subject_kind == "answer":
        return digest in answer_digests(vault, h.subject)
    return digest in document_digests(vault, h.subject)


def _released(h: Hold, release: Release) -> Hold:
    return Hold(h.seq, h.signer, h.case_id, h.subject_kind, h.subject, h.reason, h.at, release, h.entries)


#: the entry kinds that log an answer: a producer's manifest or an imported trace
_ANSWER_KINDS = ANSWER_KINDS


def answer_entries(vault: Vault, answer_id: str, _seen: set[str] | None = None) -> list[int]:
    """The log entries an answer rests on: its own manifest or imported trace, those of
    its lineage, and the revisions its passages cite, in seq order.

    Found through `v_answers` and `v_revisions` after they were checked against the signed
    commitment (`ViewGuard.require`); each entry is kept only if its bytes hash to its
    stored leaf and say what was looked up. A hold on an answer signs this list, so a
    later purge reads the held evidence from those entries alone.
    """
    seen = _seen if _seen is not None else set()
    if answer_id in seen:
        return []
    seen.add(answer_id)
    vault.views.require("v_answers", "v_revisions")
    out: set[int] = set()
    for (seq,) in vault.query("SELECT seq FROM v_answers WHERE answer_id = ? ORDER BY seq", [answer_id]):
        m = _answer_at(vault, int(seq))
        if m is None or m.answer_id != answer_id:
            continue
        out.add(int(seq))
        out |= _cited_revisions(
            vault, {(str(ps.document.document_id), str(ps.document.revision)) for ps in m.passages}
        )
        for parent in m.lineage:
            out |= set(answer_entries(vault, parent, seen))
    return sorted(out)


def _cited_revisions(vault: Vault, cited: set[tuple[str, str]]) -> set[int]:
    """The revision entries that hold the (document, revision) pairs `cited`: two
    queries for an answer's passages, however many they are."""
    documents = sorted({d for d, _r in cited})
    seqs: list[int] = []
    for i in range(0, len(documents), INDEX_CHUNK):
        rows = vault.query(
            "SELECT seq, document_id, revision FROM v_revisions WHERE document_id = ANY(?)",
            [documents[i : i + INDEX_CHUNK]],
        )
        seqs += [int(q) for q, d, r in rows if (str(d), str(r)) in cited]
    out: set[int] = set()
    for seq, entry in _checked_entries(vault, seqs).items():
        if entry.kind != EntryKind.REVISION:
            continue
        try:
            rev = Revision.from_json(entry.payload_json())
        except (MalformedRecordError, InputError, ValueError):
            continue
        if (rev.document_id, rev.revision) in cited:
            out.add(seq)
    return out


def _checked_entries(vault: Vault, seqs: Iterable[int]) -> dict[int, LogEntry]:
    """The entries of `seqs` whose bytes hash to their stored leaf, by seq."""
    out: dict[int, LogEntry] = {}
    for seq, (data, stored) in vault.rows_at(list(seqs)).items():
        try:
            entry = LogEntry.from_bytes(data)
        except (InputError, ValueError):
            continue
        if entry.leaf == stored:
            out[seq] = entry
    return out


def _checked_entry(vault: Vault, seq: int) -> LogEntry | None:
    """Entry `seq` if its bytes hash to its stored leaf (which the signed tree covers)."""
    rows = vault.query("SELECT entry, leaf_hash FROM log WHERE seq = ?", [seq])
    if not rows:
        return None
    try:
        entry = LogEntry.from_bytes(bytes(rows[0][0]))
    except (InputError, ValueError):
        return None
    return entry if entry.leaf == bytes(rows[0][1]) else None


def _answer_at(vault: Vault, seq: int) -> Any:
    entry = _checked_entry(vault, seq)
    if entry is None or entry.kind not in _ANSWER_KINDS:
        return None
    try:
        return entry.answer_record()
    except MalformedRecordError:
        return None


def entries_digests(vault: Vault, seqs: Iterable[int]) -> set[str]:
    """Every text digest the given answer and revision entries name, read from their bytes
    (each checked against its stored leaf): question, answer, retrieved and model-input
    texts, an imported trace's export file, and a revision's content."""
    out: set[str] = set()
    for found in digests_by_entry(vault, seqs).values():
        out |= found
    return out


def digests_by_entry(vault: Vault, seqs: Iterable[int]) -> dict[int, set[str]]:
    """`entries_digests` of each entry, read in one query (a purge asks for every hold's)."""
    wanted = sorted({int(q) for q in seqs})
    out: dict[int, set[str]] = {}
    if not wanted:
        return out
    rows = vault.query("SELECT seq, entry, leaf_hash FROM log WHERE seq = ANY(?) ORDER BY seq", [wanted])
    for seq, data, stored in rows:
        try:
            entry = LogEntry.from_bytes(bytes(data))
        except (InputError, ValueError):
            continue
        if entry.leaf != bytes(stored):
            continue  # rewritten bytes vouch for nothing; verify names them
        out[int(seq)] = _named_digests(entry)
    return out


def _named_digests(entry: LogEntry) -> set[str]:
    out: set[str] = set()
    try:
        if entry.kind == EntryKind.REVISION:
            return {str(Revision.from_json(entry.payload_json()).content_sha256)}
        if entry.kind not in _ANSWER_KINDS:
            return out
        m = entry.answer_record()
    except (MalformedRecordError, InputError, ValueError):
        return out
    out |= {str(m.question_sha256), str(m.answer_sha256)}
    if entry.kind == EntryKind.IMPORTED_TRACE:
        # the export file the trace was read from is evidence of the answer too
        export = entry.payload_json().get("export")
        if isinstance(export, dict) and isinstance(export.get("sha256"), str):
            out.add(export["sha256"])
    for ps in m.passages:
        out |= {str(ps.retrieved_sha256), str(ps.model_input_sha256)}
    out.discard("None")  # an imported passage may keep no text
    return out


def answer_digests(vault: Vault, answer_id: str) -> set[str]:
    """Every text digest an answer's signed manifest names, through its lineage too, and
    the content of the revisions it cites; read from the log entries, not the views."""
    return entries_digests(vault, answer_entries(vault, answer_id))


def document_digests(vault: Vault, document_id: str) -> set[str]:
    """The content of every revision of a document and every passage quoted from it.

    Read from the log entries (each checked against its stored leaf, which the signed
    tree covers), never from the views: someone who can write the file could rename the
    document in `v_revisions` and `v_passages` and so lift its legal hold. This scans
    the revisions and answers of the log, which only a purge under a document hold pays.
    """
    out: set[str] = set()
    for _seq, _kind, data, stored in vault.index.rows_claiming([EntryKind.REVISION, *ANSWER_KINDS]):
        try:
            entry = LogEntry.from_bytes(data)
            if entry.leaf != stored:
                continue  # altered bytes: verify pins them; they vouch for nothing
            if entry.kind == EntryKind.REVISION:
                rev = Revision.from_json(entry.payload_json())
                if rev.document_id == document_id:
                    out.add(str(rev.content_sha256))
                continue
            for ps in entry.answer_record().passages:
                if ps.document.document_id == document_id:
                    out |= {str(ps.retrieved_sha256), str(ps.model_input_sha256)}
        except (MalformedRecordError, InputError, ValueError):
            continue  # a damaged entry: verify reports it
    out.discard("None")  # an imported passage may keep no text
    return out


def case_rows(vault: Vault, since: int = 0) -> list[EntryRow]:
    """Roster and case rows from entry `since` on, chosen by kind column or by their own
    bytes (a relabelled hold or revocation is a problem, not a row passed by), plus every
    access and finding row: whether one belongs to a case is read from its signed
    statement, not from the editable case index."""
    return vault.index.rows_claiming(_FOLD_KINDS | {EntryKind.ACCESS, EntryKind.FINDING}, since)


def load_casefile(vault: Vault) -> CaseFile:
    """The case file as the checked log says; unchecked entries are `problems`.

    Folded once per open vault and extended by the entries appended since
    (`store.casecache`); each caller gets its own copy."""
    return vault.cases.current()


def case_row(row_kind: str, entry_kind: str) -> bool:
    """True for a row the case file reads: by its kind column or by the kind its bytes say."""
    wanted = _FOLD_KINDS | {EntryKind.ACCESS, EntryKind.FINDING}
    return row_kind in wanted or entry_kind in wanted


def fold_casefile(rows: Iterable[EntryRow], leaves: Sequence[bytes], origin: str) -> CaseFile:
    """The case file from its rows (seq order) and the log's stored leaf hashes, wherever
    they were read from (the vault, or an exported dataset)."""
    fold = CaseFold(origin)
    fold.extend(rows, leaves)
    return fold.case


class CaseFold:
    """The case file folded over a prefix of the log, ready to take the rows after it.

    Each row is checked as the roster stood at its place (`store.roster.check_entry`:
    leaf, kind and seq, signer, and the tree root it was signed over), so the fold keeps
    the roster it has folded so far and the tree of every leaf before the next row.
    """

    __slots__ = ("acc", "case", "origin", "roster")

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.roster = Roster()
        self.case = CaseFile()
        #: the tree over the leaves before the next row to fold
        self.acc = merkle.RootAccumulator()

    def extend(self, rows: Iterable[EntryRow], leaves: Sequence[bytes], base: int = 0) -> None:
        """Fold `rows` (seq order, after every row folded so far); `leaves[i]` is the
        stored leaf of entry `base + i`, from `base <= acc.size` on."""
        acc, case = self.acc, self.case
        if base > acc.size:
            raise ValueError(f"leaves start at {base}, after the {acc.size} already in the tree")
        for seq, kind, data, stored in rows:
            while acc.size < seq and acc.size - base < len(leaves):
                acc.append(leaves[acc.size - base])
            problem = check_entry(self.roster, seq, kind, data, stored, self.origin, acc)
            if kind in ROSTER_KINDS:
                continue  # a bad roster row is the roster's problem (unlock and verify refuse it)
            if problem is not None:
                case.problems.append(CaseProblem(seq, kind, problem.code, problem.detail))
                continue
            entry = LogEntry.from_bytes(data)
            stmt, known = entry.payload_json(), entry.entry_kind
            # check_entry found it signed by who may sign its kind: an unknown kind has no signers
            if not isinstance(stmt, dict) or known is None:
                continue
            found = case.fold(seq, known, entry.signer or "", stmt)
            if found is not None:
                case.problems.append(found)


def append_case_statement(vault: Vault, signer: Identity, kind: EntryKind, stmt: CaseStatementJSON) -> int:
    """Check `stmt` against the case file and the roster, then sign and append it.

    Holds and releases need the custodian or an investigator with the hold right; the
    batch then signs a checkpoint over the new entry under the signer's roster name.
    """
    if vault.read_only:
        raise AccessDeniedError(f"{vault.path}: vault is read-only; case entries cannot be appended")
    allowed = vault.roster().statement_signers(kind)
    if signer.key_id not in allowed:
        who = vault.roster().signer_name(signer.key_id) or signer.key_id[:16]
        if kind in HOLD_KINDS:
            raise AccessDeniedError(
                f"{vault.path}: {who} may not sign a {kind}: holds are placed and released by the "
                "custodian or an investigator granted the 'hold' right. Ask the custodian to place it "
                "(run the same command with the custodian's key), or to give you the right: a grant "
                "cannot be changed, so it takes a new key (`tracer keygen NAME --out DIR`), "
                "`tracer investigators revoke VAULT OLD-KEY-ID` and then `tracer investigators grant "
                "VAULT DIR/NAME.pub --scope … --right hold` (see docs/cases.md, 'The hold right')"
            )
        raise AccessDeniedError(f"{vault.path}: {who} may not sign a {kind} statement")
    problem = load_casefile(vault).refusal(kind, stmt)
    if problem is not None:
        raise VaultError(f"{vault.path}: {kind} refused: {problem}")
    with vault.batch(signer) as b:
        return b.append(Statement(kind, stmt, signer))


def case_items(case: CaseFile, case_id: str) -> Iterable[int]:
    """Seqs of every entry that belongs to a case, in log order."""
    return sorted(seq for owner, seq in _entries_by_case(case) if owner == case_id)


def _entries_by_case(case: CaseFile) -> Iterator[tuple[str | None, int]]:
    """(case id, seq) of every folded entry: opens, tags, notes, holds and their releases,
    findings and access entries (None: made outside a case)."""
    for c in case.cases.values():
        yield c.case_id, c.seq
    for t in case.tags:
        yield t.case_id, t.seq
    for n in case.notes:
        yield n.case_id, n.seq
    for h in case.holds.values():
        yield h.case_id, h.seq
        if h.release is not None:
            yield h.case_id, h.release.seq
    for f in case.findings:
        yield f.case_id, f.seq
    for a in case.activity:
        yield a.case_id, a.seq


def digest_collections(vault: Vault, digest: str) -> set[str]:
    """The collections a text digest is logged under (empty: no entry names it)."""
    vault.views.require("v_digests")
    return {
        str(r[0]) for r in vault.query("SELECT DISTINCT collection FROM v_digests WHERE digest = ?", [digest])
    }


def collections_of_digests(vault: Vault, digests: list[str]) -> dict[str, set[str]]:
    """`digest_collections` for many digests in one query (digests no entry names are absent)."""
    vault.views.require("v_digests")
    out: dict[str, set[str]] = {}
    rows = vault.query("SELECT DISTINCT digest, collection FROM v_digests WHERE digest = ANY(?)", [digests])
    for digest, collection in rows:
        out.setdefault(str(digest), set()).add(str(collection))
    return out


def document_collections(vault: Vault, document_id: str) -> set[str]:
    """The collections a document's revisions and quoted passages belong to."""
    vault.views.require("v_revisions", "v_passages")
    revs = vault.query("SELECT DISTINCT collection FROM v_revisions WHERE document_id = ?", [document_id])
    quoted = vault.query("SELECT DISTINCT collection FROM v_passages WHERE document_id = ?", [document_id])
    return {str(r[0]) for r in [*revs, *quoted]}


def _tag_shape_problem(stmt: Mapping[str, object]) -> str | None:
    """What is wrong with a tag statement's own fields (tag, op, answer id, target), if anything."""
    tag, op, answer_id = stmt.get("tag"), stmt.get("op"), stmt.get("answer_id")
    if not isinstance(tag, str) or not TAG_RULE.fullmatch(tag):
        return f"tag {tag!r} is not 1-64 characters of a-z 0-9 . _ - starting with a letter or digit"
    if op not in ("add", "remove"):
        return "op is 'add' or 'remove'"
    if not isinstance(answer_id, str) or not answer_id or id_problem(answer_id):
        return "answer_id is not an id"
    return target_problem(stmt.get("target")) or None


def _note_refusal(stmt: Mapping[str, object]) -> str | None:
    answer_id = stmt.get("answer_id")
    if answer_id is not None and (not isinstance(answer_id, str) or id_problem(answer_id)):
        return "answer_id is not an id"
    return _text_problem("text", stmt.get("text"), _MAX_TEXT)


def _hold_refusal(stmt: Mapping[str, object]) -> str | None:
    subject = stmt.get("subject")
    if not isinstance(subject, dict) or subject.get("kind") not in HOLD_SUBJECTS:
        return f"a hold's subject is one of {', '.join(HOLD_SUBJECTS)}"
    ident = subject.get("id")
    if not isinstance(ident, str) or not ident or id_problem(ident):
        return "a hold's subject needs an id"
    listed = stmt.get("entries")
    if listed is not None and not _entry_list(subject.get("kind"), listed):
        return "a hold's entries are the ascending seqs of the log entries an answer rests on"
    return _text_problem("reason", stmt.get("reason"), _MAX_TEXT)


def _entry_list(subject_kind: object, listed: object) -> bool:
    """Whether a hold's `entries` is what it may be: on an answer, a strictly ascending
    list of log seqs (non-negative integers, no booleans)."""
    return (
        subject_kind == "answer"
        and isinstance(listed, list)
        and all(type(e) is int and e >= 0 for e in listed)
        and listed == sorted(set(listed))
    )
