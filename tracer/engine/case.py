"""A case as one investigator may see it, and the case-file actions of a session.

`store.casefile` folds what the log's valid case statements say; this module cuts that
to the viewer and writes new statements through the session.  Two rules decide what a
viewer sees of a case item, and both must hold:

* its subject is visible to the viewer: an answer the engine says is visible (scope
  follows lineage), a document or digest in a collection the viewer may read;
* the viewer may read everything its author could: an author can have written
  anything they could read into a tag, a note, a title or a reason, so a viewer whose
  scopes do not include all of the author's sees nothing of it — not even that it
  exists (no counts).

A legal hold is the one exception to the second rule: whoever sees its subject sees
that a hold is in force on it (entry, subject, since, in force, who placed it), so
nobody is told that nothing is held when something they can see is; only its reason
and case id are withheld, and marked withheld (`HoldView`).

Investigators are named by the roster's name beside their key fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from store import admin, queries
from store.casefile import (
    Activity,
    CaseFile,
    CaseFinding,
    CaseRecord,
    Hold,
    Note,
    Tag,
    answer_digests,
    answer_entries,
    append_case_statement,
    canonical_target,
    case_id_problem,
    digest_collections,
    document_collections,
    load_casefile,
    target_problem,
)
from store.entries import EntryKind, LogEntry
from store.errors import AccessDeniedError, StoreError
from store.keyring import ALL_SCOPES
from store.records import MalformedRecordError, Manifest
from store.roster import Roster
from store.statements import (
    CaseOpenStatement,
    CaseStatementJSON,
    FindingStatement,
    HoldStatement,
    NoteStatement,
    ReleaseStatement,
    TagStatement,
)
from tracer.clock import now_iso
from tracer.engine.jsonshapes import CaseJSON, HoldJSON, PersonJSON
from tracer.engine.lookup import UnknownIdError, resolve_answer, resolve_document
from tracer.engine.session import Session
from tracer.engine.trace import Tracer

__all__ = [
    "WITHHELD",
    "CaseDesk",
    "CaseError",
    "CaseView",
    "HoldView",
    "Person",
]


class CaseError(StoreError):
    """A case action that cannot be done (no such case, nothing visible, read-only vault)."""

    hint = "nothing was appended; fix the cause and try again"


@dataclass(frozen=True, slots=True)
class Person:
    """Someone who signed: the roster's name and the key fingerprint beside it."""

    name: str
    key_id: str
    role: str

    def label(self) -> str:
        return f"{self.name} ({self.key_id[:16]})"

    def to_json(self) -> PersonJSON:
        return {"name": self.name, "key_id": self.key_id, "role": self.role}


#: what stands in place of a withheld field, in words
WITHHELD = "withheld: written by someone who may read collections you cannot"


@dataclass(frozen=True, slots=True)
class HoldView:
    """A hold as one viewer may see it.

    Whoever sees a hold's subject sees that the hold is in force on it: its log entry,
    subject, since when, whether it is in force, and who placed (and released) it.  The
    free texts its author wrote — the reason, and the case it was placed under — are
    withheld when the viewer does not cover that author (`CaseDesk.covers`): `hold` then
    carries them blank and `withheld` names them (`reason`, `case_id`, `release.reason`).
    Show `reason_text`, never `hold.reason` alone.
    """

    hold: Hold
    signer: Person
    released_by: Person | None
    withheld: tuple[str, ...] = ()

    @property
    def reason_text(self) -> str:
        return f"reason {WITHHELD}" if "reason" in self.withheld else self.hold.reason

    @property
    def release_reason_text(self) -> str:
        r = self.hold.release
        if r is None:
            return ""
        return f"reason {WITHHELD}" if "release.reason" in self.withheld else r.reason

    def to_json(self) -> HoldJSON:
        h, r = self.hold, self.hold.release
        return {
            "seq": h.seq,
            "case_id": None if "case_id" in self.withheld else h.case_id,
            "subject": {"kind": h.subject_kind, "id": h.subject},
            "reason": None if "reason" in self.withheld else h.reason,
            "at": h.at,
            "signer": self.signer.to_json(),
            "in_force": h.in_force,
            "release": (
                None
                if r is None or self.released_by is None
                else {
                    "seq": r.seq,
                    "reason": None if "release.reason" in self.withheld else r.reason,
                    "at": r.at,
                    "signer": self.released_by.to_json(),
                }
            ),
            "withheld": list(self.withheld),
        }


@dataclass(frozen=True)
class CaseView:
    """One case cut to one viewer: only items they may see, in log order."""

    record: CaseRecord
    opened_by: Person
    tags: tuple[Tag, ...]
    notes: tuple[Note, ...]
    conclusion: Note | None
    findings: tuple[CaseFinding, ...]
    holds: tuple[HoldView, ...]
    activity: tuple[Activity, ...]
    people: dict[str, Person]

    def person(self, key_id: str) -> Person:
        return self.people.get(key_id, Person(key_id[:16], key_id, "unknown"))

    @property
    def investigators(self) -> list[Person]:
        """Everyone who signed an item of this case the viewer sees, the opener first."""
        keys = [self.record.opened_by]
        keys += [t.investigator for t in self.tags] + [n.investigator for n in self.notes]
        keys += [f.investigator for f in self.findings] + [a.investigator for a in self.activity]
        keys += [h.hold.signer for h in self.holds]
        if self.conclusion is not None:
            keys.append(self.conclusion.investigator)
        return [self.person(k) for k in dict.fromkeys(keys)]

    def to_json(self) -> CaseJSON:
        """The case as `tracer case show --json` and a case pack give it."""
        r = self.record

        def who(key_id: str) -> PersonJSON:
            return self.person(key_id).to_json()

        return {
            "case_id": r.case_id,
            "title": r.title,
            "purpose": r.purpose,
            "opened": {"seq": r.seq, "at": r.opened_at, "by": who(r.opened_by)},
            "investigators": [p.to_json() for p in self.investigators],
            "tags": [
                {
                    "seq": t.seq,
                    "tag": t.tag,
                    "answer_id": t.answer_id,
                    "target": t.target,
                    "at": t.at,
                    "by": who(t.investigator),
                }
                for t in self.tags
            ],
            "notes": [
                {
                    "seq": n.seq,
                    "answer_id": n.answer_id,
                    "text": n.text,
                    "at": n.at,
                    "by": who(n.investigator),
                }
                for n in self.notes
            ],
            "findings": [
                {
                    "seq": f.seq,
                    "answer_id": f.answer_id,
                    "target": f.target,
                    "note": f.note,
                    "at": f.at,
                    "by": who(f.investigator),
                }
                for f in self.findings
            ],
            "holds": [h.to_json() for h in self.holds],
            "activity": [
                {"seq": a.seq, "action": a.action, "target": a.target, "at": a.at, "by": who(a.investigator)}
                for a in self.activity
            ],
            "conclusion": (
                None
                if self.conclusion is None
                else {
                    "seq": self.conclusion.seq,
                    "text": self.conclusion.text,
                    "at": self.conclusion.at,
                    "by": who(self.conclusion.investigator),
                }
            ),
        }

    def answer_ids(self, tag: str | None = None) -> list[str]:
        """Answers this case concerns (tagged, noted on, held), first mention first;
        with `tag`, only those carrying it."""
        if tag is not None:
            return list(dict.fromkeys(t.answer_id for t in self.tags if t.tag == tag))
        ids = [t.answer_id for t in self.tags] + [f.answer_id for f in self.findings]
        ids += [n.answer_id for n in self.notes if n.answer_id]
        ids += [h.hold.subject for h in self.holds if h.hold.subject_kind == "answer"]
        return list(dict.fromkeys(ids))


class CaseDesk:
    """The case file for one unlocked session: reading cut to scope, and writing."""

    def __init__(self, session: Session):
        self.s = session
        self.tracer = Tracer(session)
        self._file: CaseFile | None = None
        self._visible: dict[str, bool] = {}

    # -- reading ----------------------------------------------------------------------

    @property
    def file(self) -> CaseFile:
        if self._file is None:
            self._file = load_casefile(self.s.vault)
        return self._file

    def refresh(self) -> None:
        self._file = None

    def _roster(self) -> Roster:
        return self.s.vault.roster()

    def person(self, key_id: str) -> Person:
        vault = self.s.vault
        if key_id == vault.custodian.key_id:
            return Person(vault.custodian.name, key_id, "custodian")
        inv = self._roster().investigators.get(key_id)
        if inv is None:
            return Person(key_id[:16], key_id, "unknown")
        return Person(inv.name, key_id, "investigator" if inv.active else "revoked investigator")

    def covers(self, author: str) -> bool:
        """True when the viewer may read everything `author` could (see the module doc)."""
        if ALL_SCOPES in self.s.scopes:
            return True
        if author == self.s.identity.key_id:
            return True
        if author == self.s.vault.custodian.key_id:
            return False
        inv = self._roster().investigators.get(author)
        return inv is not None and ALL_SCOPES not in inv.scopes and set(inv.scopes) <= set(self.s.scopes)

    def answer_visible(self, answer_id: str) -> bool:
        if answer_id not in self._visible:
            row = queries.answer_entry(self.s.vault, answer_id)
            self._visible[answer_id] = row is not None and self.tracer.summary(answer_id).visible
        return self._visible[answer_id]

    def _collections_visible(self, collections: set[str]) -> bool:
        return bool(collections) and all(self.s.can_read(c) for c in collections)

    def hold_visible(self, h: Hold) -> bool:
        """A hold is visible to whoever sees its subject; what its authors wrote is cut
        in `hold_view`."""
        if h.subject_kind == "answer":
            return self.answer_visible(h.subject)
        if h.subject_kind == "document":
            return self._collections_visible(document_collections(self.s.vault, h.subject))
        return self._collections_visible(digest_collections(self.s.vault, h.subject))

    def _case_visible(self, case_id: str) -> bool:
        record = self.file.cases.get(case_id)
        return record is not None and self.covers(record.opened_by)

    def hold_view(self, h: Hold) -> HoldView:
        """`h` cut to the viewer (see `HoldView`): a case id they can see anyway is kept."""
        withheld: list[str] = []
        shown = h
        if not self.covers(h.signer):
            withheld.append("reason")
            shown = replace(shown, reason="")
            if h.case_id is not None and not self._case_visible(h.case_id):
                withheld.append("case_id")
                shown = replace(shown, case_id=None)
        rel = h.release
        if rel is not None and not self.covers(rel.signer):
            withheld.append("release.reason")
            shown = replace(shown, release=replace(rel, reason=""))
        by = self.person(rel.signer) if rel is not None else None
        return HoldView(shown, self.person(h.signer), by, tuple(withheld))

    def holds(self, in_force_only: bool = False) -> list[HoldView]:
        """Every hold the viewer may see, in log order."""
        hs = self.file.holds_in_force() if in_force_only else list(self.file.holds.values())
        self.tracer.prime_ids(
            [h.subject for h in hs if h.subject_kind == "answer" and h.subject not in self._visible]
        )
        return [self.hold_view(h) for h in sorted(hs, key=lambda h: h.seq) if self.hold_visible(h)]

    def holds_on_answer(self, answer_id: str) -> list[HoldView]:
        """Holds in force over an answer's evidence: the answer, a document it cites, a text."""
        found: list[HoldView] = []
        docs: set[str] | None = None
        digests: set[str] | None = None
        for h in self.file.holds_in_force():
            if h.subject_kind == "answer":
                hit = h.subject == answer_id
            elif h.subject_kind == "document":
                if docs is None:
                    docs = self._documents_of(answer_id)
                hit = h.subject in docs
            else:
                if digests is None:
                    digests = answer_digests(self.s.vault, answer_id)
                hit = h.subject in digests
            if hit and self.hold_visible(h):
                found.append(self.hold_view(h))
        return found

    def holds_on_document(self, document_id: str) -> list[HoldView]:
        """Holds in force the viewer sees on the document itself."""
        return [
            hv
            for hv in self.holds(in_force_only=True)
            if hv.hold.subject_kind == "document" and hv.hold.subject == document_id
        ]

    def holds_over(self, document_id: str | None, answer_ids: list[str]) -> list[tuple[HoldView, list[str]]]:
        """Holds in force over an impact's evidence, in log order: on the document itself
        and over each of `answer_ids` (by answer, a document it cites, or a text), each with
        the answers it covers."""
        found: dict[int, tuple[HoldView, list[str]]] = {}
        if document_id is not None:
            for hv in self.holds_on_document(document_id):
                found[hv.hold.seq] = (hv, [])
        for aid in answer_ids:
            for hv in self.holds_on_answer(aid):
                found.setdefault(hv.hold.seq, (hv, []))[1].append(aid)
        return [found[seq] for seq in sorted(found)]

    def _documents_of(self, answer_id: str) -> set[str]:
        found = queries.answer_entry(self.s.vault, answer_id)
        if found is None:
            return set()
        try:
            m = found[1].answer_record()
        except MalformedRecordError:
            return set()  # a damaged entry: verify pins it
        return {str(ps.document.document_id) for ps in m.passages if ps.document.document_id}

    def tags_of_answer(self, answer_id: str, case_id: str | None = None) -> list[Tag]:
        """Tags in force on an answer (any target), in the given case or in all cases."""
        return [
            t
            for t in self.file.current_tags(case_id)
            if t.answer_id == answer_id and self.covers(t.investigator) and self.answer_visible(answer_id)
        ]

    def answers_tagged(self, tag: str, case_id: str | None = None) -> list[str]:
        """Answers carrying `tag` (in force) that the viewer may see, in log order of the tag."""
        ids = [
            t.answer_id
            for t in self.file.current_tags(case_id)
            if t.tag == tag and self.covers(t.investigator) and self.answer_visible(t.answer_id)
        ]
        return list(dict.fromkeys(ids))

    def pack_answers(self, case_id: str, tag: str | None = None) -> tuple[list[str], str]:
        """(answer ids, what was selected) for a case pack: the answers the case tagged
        (`tag`), or every answer it tagged, held or wrote a note on — those you may see."""
        view = self.view(case_id)
        if tag:
            return self.answers_tagged(tag, case_id), f"answers of case {case_id} tagged {tag}"
        ids = [a for a in view.answer_ids() if self.answer_visible(a)]
        return ids, f"every answer case {case_id} tagged, held or wrote a note on"

    def cases(self) -> list[CaseRecord]:
        """Cases whose opener the viewer covers, in the order they were opened."""
        return sorted((c for c in self.file.cases.values() if self.covers(c.opened_by)), key=lambda c: c.seq)

    def view(self, case_id: str) -> CaseView:
        record = self.file.cases.get(case_id)
        if record is None or not self.covers(record.opened_by):
            raise CaseError(f"{self.s.vault.path}: no case {case_id!r} you can see in this vault")
        conclusions = self._conclusions(case_id)
        view = CaseView(
            record,
            self.person(record.opened_by),
            self._tags(case_id),
            self._notes(case_id),
            conclusions[-1] if conclusions else None,
            self._findings(case_id),
            self._holds(case_id),
            tuple(a for a in self.file.activity if a.case_id == case_id and self.covers(a.investigator)),
            {},
        )
        view.people.update({k: self.person(k) for k in _signers(view, conclusions)})
        return view

    def _tags(self, case_id: str) -> tuple[Tag, ...]:
        return tuple(
            t
            for t in self.file.current_tags(case_id)
            if self.covers(t.investigator) and self.answer_visible(t.answer_id)
        )

    def _notes(self, case_id: str) -> tuple[Note, ...]:
        return tuple(
            n
            for n in self.file.notes
            if n.case_id == case_id
            and n.kind == EntryKind.NOTE
            and self.covers(n.investigator)
            and (n.answer_id is None or self.answer_visible(n.answer_id))
        )

    def _conclusions(self, case_id: str) -> list[Note]:
        return [
            n
            for n in self.file.notes
            if n.case_id == case_id and n.kind == EntryKind.CASE_CONCLUSION and self.covers(n.investigator)
        ]

    def _findings(self, case_id: str) -> tuple[CaseFinding, ...]:
        return tuple(
            x
            for x in self.file.findings
            if x.case_id == case_id and self.covers(x.investigator) and self.answer_visible(x.answer_id)
        )

    def _holds(self, case_id: str) -> tuple[HoldView, ...]:
        return tuple(
            self.hold_view(h)
            for h in sorted(self.file.holds.values(), key=lambda h: h.seq)
            if h.case_id == case_id and self.hold_visible(h)
        )

    def related_activity(self, view: CaseView, answer_ids: list[str]) -> list[Activity]:
        """Access entries since the case opened that were not made under it but concern it:
        an investigator of the case verifying the vault, or anyone (whom the viewer covers)
        opening, tracing or exporting one of `answer_ids`.  Read from the log's entries;
        a pack carries each one with its proof."""
        wanted = set(answer_ids)
        people = {p.key_id for p in view.investigators}
        bound = {a.seq for a in self.file.activity}
        seqs = [
            a.seq
            for a in queries.access_rows(self.s.vault, 100_000)
            if a.seq > view.record.seq and a.seq not in bound
        ]
        out: list[Activity] = []
        for seq, entry in sorted(queries.entries_at(self.s.vault, seqs).items()):
            found = self._concerning(seq, entry, wanted, people)
            if found is not None:
                out.append(found)
        return out

    def _concerning(self, seq: int, entry: LogEntry, wanted: set[str], people: set[str]) -> Activity | None:
        """The access entry at `seq` as activity of the case, when the viewer covers its
        signer and it names one of `wanted` or is a case investigator's verify."""
        stmt = entry.payload_json()
        signer = entry.signer or ""
        if entry.kind != EntryKind.ACCESS or not isinstance(stmt, dict) or not self.covers(signer):
            return None
        action, target = str(stmt.get("action", "")), str(stmt.get("target", ""))
        named = {t.split("/", 1)[0] for t in target.split(",")} & wanted
        if named or (action == "verify" and signer in people):
            return Activity(seq, signer, "", action, target, str(stmt.get("at", "")))
        return None

    # -- writing ----------------------------------------------------------------------

    def _append(self, kind: EntryKind, stmt: CaseStatementJSON) -> int:
        s = self.s
        if s.status.journal is not None or s.vault.read_only:
            why = "opened forensically" if s.status.forensic else "read-only"
            raise AccessDeniedError(f"{s.vault.path}: the vault is {why}; case entries cannot be appended")
        seq = append_case_statement(s.vault, s.identity, kind, stmt)
        # the checkpoint this session just signed becomes the one shown and remembered
        s.remember()
        self.refresh()
        return seq

    def _require_case(self, case_id: str) -> None:
        self.view(case_id)

    def open_case(self, case_id: str, title: str, purpose: str) -> int:
        problem = case_id_problem(case_id)
        if problem:
            raise CaseError(f"{self.s.vault.path}: {problem}")
        stmt: CaseOpenStatement = {"case_id": case_id, "title": title, "purpose": purpose, "at": now_iso()}
        return self._append(EntryKind.CASE_OPEN, stmt)

    def _visible_answer(self, wanted: str) -> str:
        answer_id = resolve_answer(self.s.vault, wanted)
        if not self.answer_visible(answer_id):
            raise UnknownIdError("answer", wanted, [], "you can see in this vault")
        return answer_id

    def tag(self, case_id: str | None, wanted: str, target: str, tag: str, remove: bool = False) -> int:
        if case_id is not None:
            self._require_case(case_id)
        answer_id = self._visible_answer(wanted)
        target = self.target_of(answer_id, target)
        stmt: TagStatement = {
            "op": "remove" if remove else "add",
            "tag": tag,
            "answer_id": answer_id,
            "target": target,
            "at": now_iso(),
        }
        if case_id is not None:
            stmt["case_id"] = case_id
        return self._append(EntryKind.TAG, stmt)

    def target_of(self, answer_id: str, target: str) -> str:
        """`target` in its one spelling (`answer`, `claim:N`, `passage:ID`; older spellings
        such as `citation:N` are read as the same), checked against the answer's signed
        manifest: a claim number it has, a passage it retrieved.  A refusal names `--target`."""
        where = self.s.vault.path
        canon = canonical_target(target, answer_id)
        if target_problem(canon) is not None:
            raise CaseError(
                f"{where}: --target {target!r} is not 'answer', 'claim:N' (citation N, from 1) "
                "or 'passage:ID'"
            )
        found = queries.answer_entry(self.s.vault, answer_id)
        if found is None or canon == "answer":
            return canon
        try:
            m = found[1].answer_record()
        except MalformedRecordError:
            return canon  # a damaged entry: verify pins it
        _check_target_in(m, canon, f"{where}: --target {target!r}: answer {answer_id}")
        return canon

    def note(self, case_id: str, text: str, answer: str | None = None) -> int:
        self._require_case(case_id)
        stmt: NoteStatement = {"case_id": case_id, "text": text, "at": now_iso()}
        if answer:
            stmt["answer_id"] = self._visible_answer(answer)
        return self._append(EntryKind.NOTE, stmt)

    def conclude(self, case_id: str, text: str) -> int:
        self._require_case(case_id)
        return self._append(EntryKind.CASE_CONCLUSION, {"case_id": case_id, "text": text, "at": now_iso()})

    def finding(self, case_id: str | None, wanted: str, target: str, note: str) -> int:
        """An investigator's signed note on an answer, a claim or a passage (log kind
        `finding`), under `case_id` when one is given."""
        if case_id is not None:
            self._require_case(case_id)
        answer_id = self._visible_answer(wanted)
        target = self.target_of(answer_id, target)
        if case_id is None:
            seq = self.s.add_finding(answer_id, target, note)
            self.refresh()
            return seq
        stmt: FindingStatement = {
            "answer_id": answer_id,
            "target": target,
            "note": note,
            "at": now_iso(),
            "case_id": case_id,
        }
        return self._append(EntryKind.FINDING, stmt)

    def hold(self, kind: str, wanted: str, reason: str, case_id: str | None = None) -> int:
        return self.sign_hold(self.hold_statement(kind, wanted, reason, case_id))

    def hold_statement(
        self, kind: str, wanted: str, reason: str, case_id: str | None = None
    ) -> HoldStatement:
        """The `hold` statement `hold` signs, checked but not appended: the TUI shows it
        whole before it is signed (`sign_hold`)."""
        if case_id is not None:
            self._require_case(case_id)
        if kind == "answer":
            subject = self._visible_answer(wanted)
        elif kind == "document":
            subject = resolve_document(self.s, wanted)
        else:
            if not self._collections_visible(digest_collections(self.s.vault, wanted)):
                raise UnknownIdError("digest", wanted, [], "you can see in this vault")
            subject = wanted
        stmt: HoldStatement = {"subject": {"kind": kind, "id": subject}, "reason": reason, "at": now_iso()}
        if kind == "answer":
            # signed with the hold, so a purge reads the held evidence from these entries
            stmt["entries"] = answer_entries(self.s.vault, subject)
        if case_id is not None:
            stmt["case_id"] = case_id
        return stmt

    def sign_hold(self, stmt: HoldStatement) -> int:
        """Sign and append a statement from `hold_statement` (the store checks the right)."""
        return self._append(EntryKind.HOLD, stmt)

    def release(self, hold_seq: int, reason: str, case_id: str | None = None) -> int:
        return self.sign_release(self.release_statement(hold_seq, reason, case_id))

    def release_statement(self, hold_seq: int, reason: str, case_id: str | None = None) -> ReleaseStatement:
        """The `hold_release` statement `release` signs, checked but not appended."""
        held = self.file.holds.get(hold_seq)
        if held is None or not self.hold_visible(held):
            raise CaseError(f"{self.s.vault.path}: no hold at log entry {hold_seq} you can see")
        if not self.covers(held.signer):
            raise CaseError(
                f"{self.s.vault.path}: the hold at log entry {hold_seq} was placed by "
                f"{self.person(held.signer).label()}, who may read collections you cannot; its reason "
                "is withheld from you, so you may not release it: ask them or the custodian"
            )
        stmt: ReleaseStatement = {"hold_seq": hold_seq, "reason": reason, "at": now_iso()}
        if case_id is not None:
            self._require_case(case_id)
            stmt["case_id"] = case_id
        return stmt

    def sign_release(self, stmt: ReleaseStatement) -> int:
        """Sign and append a statement from `release_statement`."""
        return self._append(EntryKind.HOLD_RELEASE, stmt)

    def record(self, case_id: str, action: str, target: str) -> int | None:
        """An access entry made while `case_id` is selected (the local journal when the
        vault is read-only or forensic: then it names no case and returns None)."""
        s = self.s
        if action == "case_select":
            s.case_id = case_id  # from now on, what this session records belongs to the case
        if s.status.journal is not None:
            s.record(action, target)
            return None
        seq = admin.record_access(
            s.vault, s.identity, action, target, now_iso(), s.status.forensic, case_id=case_id
        )
        s.remember()
        self.refresh()
        return seq


def _signers(view: CaseView, conclusions: list[Note]) -> list[str]:
    """Every key id that signed something the view shows (each is named once)."""
    keys = [
        view.record.opened_by,
        *(t.investigator for t in view.tags),
        *(n.investigator for n in view.notes),
    ]
    keys += [x.investigator for x in view.findings] + [a.investigator for a in view.activity]
    keys += [h.hold.signer for h in view.holds] + [
        h.hold.release.signer for h in view.holds if h.hold.release
    ]
    keys += [c.investigator for c in conclusions]
    return keys


def _check_target_in(m: Manifest, canon: str, refused: str) -> None:
    """Refuse a `claim:N` the signed answer has no citation N for, or a `passage:ID` it
    did not retrieve; `refused` begins the message."""
    kind, _sep, ident = canon.partition(":")
    if kind == "claim" and not 1 <= int(ident) <= len(m.citations):
        raise CaseError(f"{refused} has no claim {ident} (its claims are numbered 1 to {len(m.citations)})")
    if kind == "passage" and ident not in {p.passage_id for p in m.passages}:
        known = ", ".join(sorted(p.passage_id for p in m.passages)) or "none"
        raise CaseError(f"{refused} has no passage {ident!r} (its passages: {known})")
