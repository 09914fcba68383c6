"""One answer's engine side: opening it, rereading its notes and holds, appending a
note, and what the screen shows of it (the trace, notes, signer names, holds, tags).

The reads run on worker threads and touch no widget; `AnswerScreen` owns the workers
(Textual runs them on a DOM node), posts what they return and draws it.  `AnswerData`
owns what was read and decides what a row key, the cursor or a note target means, so
the screen keeps only widgets and keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from store import queries
from store.casefile import Tag, canonical_target
from tracer.engine.case import CaseDesk, HoldView
from tracer.engine.trace import AnswerTrace, PassageTrace, UnknownAnswerError
from tracer.tui.hold_actions import HoldSubject
from tracer.tui.notes_view import NoteRow, citation_target, passage_target
from tracer.tui.signers import signer_names

if TYPE_CHECKING:
    from tracer.tui.context import Engine

__all__ = ["AnswerData", "Opened", "Selection"]


@dataclass(frozen=True)
class Opened:
    """What opening the answer read, in one hold of the engine lock."""

    trace: AnswerTrace
    names: dict[str, str]
    holds: list[HoldView]
    tags: list[Tag]


@dataclass(frozen=True)
class Selection:
    """A row of the claims table: its heading, its passages and the note target."""

    heading: str
    passages: list[PassageTrace]
    target: str


class AnswerData:
    """One answer as the answer screen shows it.  The engine reads return what they read
    (they run off the UI thread); only the `took_*` methods, on the UI thread, change
    what this object holds."""

    def __init__(self, answer_id: str) -> None:
        self.answer_id = answer_id
        self.trace: AnswerTrace | None = None
        self.notes: list[NoteRow] = []
        self.names: dict[str, str] = {}
        self.holds: list[HoldView] = []
        #: case-file tags in force on this answer (any case, those the viewer may see)
        self.tags: list[Tag] = []

    # -- engine reads (worker threads) ---------------------------------------------------

    def open(self, engine: Engine) -> Opened:
        """Record the look, then trace; raises `UnknownAnswerError` for an unknown id."""
        with engine.use() as s:
            if queries.answer_entry(s.vault, self.answer_id) is None:
                raise UnknownAnswerError(self.answer_id)
            # the look goes on the record before the states are computed, so they are
            # computed against the checkpoint that includes it (the one the bar shows)
            s.record("open_answer", self.answer_id)
            t = engine.tracer(s).trace(self.answer_id, record=False)
            names = signer_names(s)
            desk = CaseDesk(s)
            holds = desk.holds_on_answer(self.answer_id) if t.visible else []
            tags = desk.tags_of_answer(self.answer_id) if t.visible else []
        return Opened(t, names, holds, tags)

    def read_notes(self, engine: Engine) -> list[NoteRow]:
        with engine.use() as s:
            return queries.finding_rows(s.vault, self.answer_id)

    def append_note(self, engine: Engine, case_id: str | None, target: str, note: str) -> list[NoteRow]:
        """Sign and append a note; the notes as they are after it."""
        with engine.use() as s:
            # through the case desk: the target is checked against the signed answer,
            # and the note belongs to the selected case, if any
            CaseDesk(s).finding(case_id, self.answer_id, target, note)
            return queries.finding_rows(s.vault, self.answer_id)

    def read_holds(self, engine: Engine) -> list[HoldView]:
        with engine.use() as s:
            return CaseDesk(s).holds_on_answer(self.answer_id)

    # -- what was read (UI thread) ---------------------------------------------------------

    def took_opened(self, opened: Opened) -> AnswerTrace:
        self.trace = opened.trace
        self.names = opened.names
        self.holds = opened.holds
        self.tags = opened.tags
        self.notes = list(opened.trace.findings)
        return opened.trace

    def took_notes(self, rows: list[NoteRow], announce: bool) -> bool:
        """Keep the notes read; False when a quiet reread found nothing new to draw."""
        if rows == self.notes and not announce:
            return False
        self.notes = rows
        return True

    def took_tags(self, tags: list[Tag]) -> None:
        self.tags = tags

    def took_holds(self, holds: list[HoldView]) -> None:
        self.holds = holds

    # -- what it means -------------------------------------------------------------------

    @property
    def visible(self) -> bool:
        return self.trace is not None and self.trace.visible

    def uncited(self, t: AnswerTrace) -> list[PassageTrace]:
        cited = {p.passage_id for c in t.citations for p in c.passages}
        return [p for p in t.passages if p.passage_id not in cited]

    def note_count(self, index: int) -> int:
        """Notes on claim `index`; a note written before targets had one spelling
        (`citation [N]`) counts too."""
        claim = citation_target(index)
        return sum(1 for f in self.notes if canonical_target(f.target, f.answer_id) == claim)

    def tag_words(self, claim: str | None, passage_ids: list[str]) -> list[str]:
        """The tags on a claim and on its passages, each once, in the order signed."""
        targets = {f"passage:{pid}" for pid in passage_ids}
        if claim is not None:
            targets.add(claim)
        return list(dict.fromkeys(tag.tag for tag in self.tags if tag.target in targets))

    def answer_tags(self) -> list[str]:
        return [tag.tag for tag in self.tags if tag.target == "answer"]

    def selection(self, key: str | None) -> Selection | None:
        """The claims row `key` (`c<index>` a claim, `p<index>` a retrieved passage)."""
        t = self.trace
        if t is None or not t.visible or key is None:
            return None
        idx = int(key[1:])
        if key.startswith("c"):
            c = t.citations[idx]
            return Selection(f"claim [{idx + 1}]", c.passages, citation_target(idx))
        p = t.passages[idx]
        return Selection("retrieved, not cited", [p], passage_target(p.passage_id))

    def copy_target(self, key: str | None) -> tuple[str, str] | None:
        """Row `key`'s passage ids (a passage row: its id); no row: the answer's id."""
        t = self.trace
        if t is None or not t.visible:
            return None
        if key is None:
            return ("answer id", self.answer_id)
        idx = int(key[1:])
        if key.startswith("c"):
            ids = t.citations[idx].passage_ids
            return ("passage id" if len(ids) == 1 else "passage ids", ", ".join(ids))
        return ("passage id", t.passages[idx].passage_id)

    def hold_subjects(self, sel: Selection | None) -> list[HoldSubject]:
        """The answer, then the documents of the selected claim (or passage)."""
        out = [
            HoldSubject(
                "answer", self.answer_id, f"the answer {self.answer_id} (its texts, passages, revisions)"
            )
        ]
        for p in sel.passages if sel is not None else []:
            doc = p.document_id
            if doc is not None and all(s.id != doc for s in out):
                out.append(
                    HoldSubject("document", doc, f"document {doc} (every revision, every passage quoted)")
                )
        return out
