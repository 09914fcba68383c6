"""Writing the case file: each case action checked and signed through the session.

What a statement may name is what its author may see (`CaseScope`): an answer they
cannot see is refused as unknown, a hold they do not cover cannot be released, a
`--target` must be a claim or passage the signed answer has.  Each append leaves the
session's checkpoint remembered and the desk's case file to be read again.
"""

from __future__ import annotations

from collections.abc import Callable

from store import admin, queries
from store.casefile import (
    CaseFile,
    answer_entries,
    append_case_statement,
    canonical_target,
    case_id_problem,
    digest_collections,
    target_problem,
)
from store.entries import EntryKind
from store.errors import AccessDeniedError
from store.records import MalformedRecordError, Manifest
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
from tracer.engine.casescope import CaseError, CaseScope
from tracer.engine.lookup import UnknownIdError, resolve_answer, resolve_document

__all__ = ["CaseWriter"]


class CaseWriter:
    """The case actions of one session, as the viewer of `scope`.

    `require` refuses a case id the viewer cannot see; `refresh` drops the desk's case
    file after an append, so the next read folds what was just signed.
    """

    def __init__(
        self,
        scope: CaseScope,
        file: Callable[[], CaseFile],
        require: Callable[[str], object],
        refresh: Callable[[], None],
    ):
        self.s = scope.s
        self.scope = scope
        self._file = file
        self._require = require
        self._refresh = refresh

    def _append(self, kind: EntryKind, stmt: CaseStatementJSON) -> int:
        s = self.s
        if s.status.journal is not None or s.vault.read_only:
            why = "opened forensically" if s.status.forensic else "read-only"
            raise AccessDeniedError(f"{s.vault.path}: the vault is {why}; case entries cannot be appended")
        seq = append_case_statement(s.vault, s.identity, kind, stmt)
        # the checkpoint this session just signed becomes the one shown and remembered
        s.remember()
        self._refresh()
        return seq

    def _require_case(self, case_id: str) -> None:
        self._require(case_id)

    def open_case(self, case_id: str, title: str, purpose: str) -> int:
        problem = case_id_problem(case_id)
        if problem:
            raise CaseError(f"{self.s.vault.path}: {problem}")
        stmt: CaseOpenStatement = {"case_id": case_id, "title": title, "purpose": purpose, "at": now_iso()}
        return self._append(EntryKind.CASE_OPEN, stmt)

    def _visible_answer(self, wanted: str) -> str:
        answer_id = resolve_answer(self.s.vault, wanted)
        if not self.scope.answer_visible(answer_id):
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
            self._refresh()
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
            if not self.scope.collections_visible(digest_collections(self.s.vault, wanted)):
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
        held = self._file().holds.get(hold_seq)
        if held is None or not self.scope.hold_visible(held):
            raise CaseError(f"{self.s.vault.path}: no hold at log entry {hold_seq} you can see")
        if not self.scope.covers(held.signer):
            raise CaseError(
                f"{self.s.vault.path}: the hold at log entry {hold_seq} was placed by "
                f"{self.scope.person(held.signer).label()}, who may read collections you cannot; its reason "
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
        self._refresh()
        return seq


def _check_target_in(m: Manifest, canon: str, refused: str) -> None:
    """Refuse a `claim:N` the signed answer has no citation N for, or a `passage:ID` it
    did not retrieve; `refused` begins the message."""
    kind, _sep, ident = canon.partition(":")
    if kind == "claim" and not 1 <= int(ident) <= len(m.citations):
        raise CaseError(f"{refused} has no claim {ident} (its claims are numbered 1 to {len(m.citations)})")
    if kind == "passage" and ident not in {p.passage_id for p in m.passages}:
        known = ", ".join(sorted(p.passage_id for p in m.passages)) or "none"
        raise CaseError(f"{refused} has no passage {ident!r} (its passages: {known})")
