"""Every note investigators signed and appended, in log order; Enter opens the answer.

Two kinds, shown apart and labelled so: investigator notes on an answer, a claim or a
passage (`n` on the answer and evidence screens, `tracer finding`), in the table; and
case notes, written in the case file (`n` on the cases screen, `tracer note`), in full
below it: those of the selected case, or of every case you can see when none is.
Not to be confused with verification's alarms (the Verify screen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from store import queries
from store.casefile import Note
from tracer.engine.case import CaseDesk, Person
from tracer.tui.messages import Failed
from tracer.tui.notes_view import NoteRow
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.signers import signer, signer_names
from tracer.tui.text import plain, safe_line
from tracer.tui.widgets.pick_table import PickTable

__all__ = ["NotesScreen"]

_HEAD = "Investigator notes on answers: {n} (each signed by the investigator who wrote it)"


#: not priority: Enter on the notes is the table's own (`PickTable`), after the arrows
OPEN_NOTE = Binding(
    "enter", "open", "Open answer", id="tracer.note_open", tooltip="Open the answer this note is about"
)


class NotesTable(PickTable):
    """One row per signed note; Enter opens the answer the note is about."""

    PICKS = OPEN_NOTE


class NotesScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        OPEN_NOTE,
    ]

    @dataclass
    class Loaded(Message):
        rows: list[NoteRow]
        names: dict[str, str]
        #: case notes, oldest first, with who signed each; of the selected case, or all
        case_notes: list[tuple[Note, Person]]
        case_id: str | None

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[NoteRow] = []

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(plain(_HEAD.format(n="…"), "bold"), id="notes-head")
        table = NotesTable(id="notes", cursor_type="row")
        for col in ("entry", "time", "signed by", "answer", "on", "note"):
            table.add_column(col, key=col)
        yield table
        with VerticalScroll(id="case-notes-pane"):
            yield Static(plain("Case notes: loading…", "bold"), id="case-notes")
        yield from self.frame_bottom()

    def on_screen_resume(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="notes")
    def _load(self) -> None:
        try:
            case_id = self.tracer_app.case_id
            with self.engine.use() as s:
                rows = queries.finding_rows(s.vault)
                names = signer_names(s)
                desk = CaseDesk(s)
                ids = [c.case_id for c in desk.cases()]
                wanted = [case_id] if case_id in ids else ids
                views = [desk.view(c) for c in wanted]
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("notes", str(exc)))
            return
        notes = sorted(
            ((n, v.person(n.investigator)) for v in views for n in v.notes), key=lambda x: x[0].seq
        )
        self.post_message(self.Loaded(rows, names, notes, case_id if case_id in ids else None))

    def on_notes_screen_loaded(self, message: Loaded) -> None:
        self.rows = message.rows
        table = self.query_one("#notes", DataTable)
        row = table.cursor_row
        table.clear()
        for r in self.rows:
            table.add_row(
                plain(str(r.seq)),
                plain(r.at),
                signer(r.investigator, message.names),
                safe_line(r.answer_id, limit=28),
                safe_line(r.target, limit=24),
                safe_line(r.note, limit=70),
                key=str(r.seq),
            )
        self.query_one("#notes-head", Static).update(plain(_HEAD.format(n=len(self.rows)), "bold"))
        self.query_one("#case-notes", Static).update(case_notes_text(message.case_notes, message.case_id))
        if self.rows:
            table.move_cursor(row=min(row, len(self.rows) - 1), animate=False)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._open()

    def action_open(self) -> None:
        self._open()

    def _open(self) -> None:
        table = self.query_one("#notes", DataTable)
        if self.rows and table.row_count:
            self.app.push_screen(AnswerScreen(self.rows[table.cursor_row].answer_id))


def case_notes_text(notes: list[tuple[Note, Person]], case_id: str | None) -> Text:
    """Case notes in full (multi-line), oldest first; every untrusted string inert."""
    if case_id is not None:
        head = Text.assemble(plain("Case notes of case ", "bold"), safe_line(case_id, "bold"))
    else:
        head = plain("Case notes of every case you can see (no case selected)", "bold")
    head.append(f": {len(notes)}", style="bold")
    head.append(" — written in the case file (C then n, or tracer note), not on a claim\n")
    for n, who in notes:
        head.append_text(plain(f"— {n.at} (entry {n.seq}) case "))
        head.append_text(safe_line(n.case_id))
        head.append_text(plain(" signed by "))
        head.append_text(safe_line(who.label()))
        if n.answer_id:
            head.append_text(Text.assemble(plain(" on "), safe_line(n.answer_id)))
        for line in n.text.split("\n"):
            head.append("\n   ")
            head.append_text(safe_line(line))
        head.append("\n")
    return head
