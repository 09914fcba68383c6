"""Every note investigators signed and appended, in log order; Enter opens the answer.

Not to be confused with verification's alarms (the Verify screen): a note is an
investigator's own signed statement about a claim or a passage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from store import queries
from tracer.tui.messages import Failed
from tracer.tui.notes_view import NoteRow
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.signers import signer, signer_names
from tracer.tui.text import plain, safe_line
from tracer.tui.widgets.pick_table import PickTable

__all__ = ["NotesScreen"]

_HEAD = "Investigator notes: {n} (each signed by the investigator who wrote it)"


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
        yield from self.frame_bottom()

    def on_screen_resume(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="notes")
    def _load(self) -> None:
        try:
            with self.engine.use() as s:
                rows = queries.finding_rows(s.vault)
                names = signer_names(s)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("notes", str(exc)))
            return
        self.post_message(self.Loaded(rows, names))

    def on_notes_screen_loaded(self, message: Loaded) -> None:
        self.rows = message.rows
        table = self.query_one("#notes", DataTable)
        row = table.cursor_row
        table.clear()
        for seq, who, aid, target, note, at in self.rows:
            table.add_row(
                plain(str(seq)),
                plain(at),
                signer(who, message.names),
                safe_line(aid, limit=28),
                safe_line(target, limit=24),
                safe_line(note, limit=70),
                key=str(seq),
            )
        self.query_one("#notes-head", Static).update(plain(_HEAD.format(n=len(self.rows)), "bold"))
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
            self.app.push_screen(AnswerScreen(self.rows[table.cursor_row][2]))
