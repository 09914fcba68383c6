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

from dataclasses import dataclass

from store import queries
from store.casefile import (
    Activity,
    CaseFile,
    CaseFinding,
    CaseRecord,
    Note,
    Tag,
    load_casefile,
)
from store.entries import EntryKind, LogEntry
from store.statements import HoldStatement, ReleaseStatement
from tracer.engine.caseholds import CaseHolds
from tracer.engine.casescope import WITHHELD, CaseError, CaseScope, HoldView, Person
from tracer.engine.casewrite import CaseWriter
from tracer.engine.jsonshapes import CaseJSON, PersonJSON
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
    """The case file for one unlocked session: reading cut to scope, and writing.

    The desk owns the folded case file and drops it after every append; who the viewer
    covers and what is visible is its `scope` (`CaseScope`), the holds bearing on an
    answer or a document are `holds_of` (`CaseHolds`), and the signed actions are
    `writer`'s (`CaseWriter`).  The methods below are the one surface callers use.
    """

    def __init__(self, session: Session):
        self.s = session
        self.tracer = Tracer(session)
        self._file: CaseFile | None = None
        self.scope = CaseScope(session, self.tracer, lambda: self.file)
        self.holds_of = CaseHolds(self.scope, lambda: self.file)
        self.writer = CaseWriter(self.scope, lambda: self.file, self.view, self.refresh)

    # -- reading ----------------------------------------------------------------------

    @property
    def file(self) -> CaseFile:
        if self._file is None:
            self._file = load_casefile(self.s.vault)
        return self._file

    def refresh(self) -> None:
        self._file = None

    def person(self, key_id: str) -> Person:
        return self.scope.person(key_id)

    def covers(self, author: str) -> bool:
        """True when the viewer may read everything `author` could (see the module doc)."""
        return self.scope.covers(author)

    def answer_visible(self, answer_id: str) -> bool:
        return self.scope.answer_visible(answer_id)

    def holds(self, in_force_only: bool = False) -> list[HoldView]:
        """Every hold the viewer may see, in log order."""
        return self.holds_of.all(in_force_only)

    def holds_on_answer(self, answer_id: str) -> list[HoldView]:
        """Holds in force over an answer's evidence: the answer, a document it cites, a text."""
        return self.holds_of.on_answer(answer_id)

    def holds_on_document(self, document_id: str) -> list[HoldView]:
        """Holds in force the viewer sees on the document itself."""
        return self.holds_of.on_document(document_id)

    def holds_over(self, document_id: str | None, answer_ids: list[str]) -> list[tuple[HoldView, list[str]]]:
        """Holds in force over an impact's evidence (`CaseHolds.over`)."""
        return self.holds_of.over(document_id, answer_ids)

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
            self.scope.hold_view(h)
            for h in sorted(self.file.holds.values(), key=lambda h: h.seq)
            if h.case_id == case_id and self.scope.hold_visible(h)
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

    # -- writing (`CaseWriter`) --------------------------------------------------------

    def open_case(self, case_id: str, title: str, purpose: str) -> int:
        return self.writer.open_case(case_id, title, purpose)

    def tag(self, case_id: str | None, wanted: str, target: str, tag: str, remove: bool = False) -> int:
        return self.writer.tag(case_id, wanted, target, tag, remove)

    def target_of(self, answer_id: str, target: str) -> str:
        return self.writer.target_of(answer_id, target)

    def note(self, case_id: str, text: str, answer: str | None = None) -> int:
        return self.writer.note(case_id, text, answer)

    def conclude(self, case_id: str, text: str) -> int:
        return self.writer.conclude(case_id, text)

    def finding(self, case_id: str | None, wanted: str, target: str, note: str) -> int:
        return self.writer.finding(case_id, wanted, target, note)

    def hold(self, kind: str, wanted: str, reason: str, case_id: str | None = None) -> int:
        return self.writer.hold(kind, wanted, reason, case_id)

    def hold_statement(
        self, kind: str, wanted: str, reason: str, case_id: str | None = None
    ) -> HoldStatement:
        return self.writer.hold_statement(kind, wanted, reason, case_id)

    def sign_hold(self, stmt: HoldStatement) -> int:
        return self.writer.sign_hold(stmt)

    def release(self, hold_seq: int, reason: str, case_id: str | None = None) -> int:
        return self.writer.release(hold_seq, reason, case_id)

    def release_statement(self, hold_seq: int, reason: str, case_id: str | None = None) -> ReleaseStatement:
        return self.writer.release_statement(hold_seq, reason, case_id)

    def sign_release(self, stmt: ReleaseStatement) -> int:
        return self.writer.sign_release(stmt)

    def record(self, case_id: str, action: str, target: str) -> int | None:
        return self.writer.record(case_id, action, target)


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
