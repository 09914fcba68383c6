"""Every key on every screen, read from the bindings themselves so it cannot drift.

At 80 columns the "what it does" column goes past the right edge; the pane under the
table shows the highlighted row whole, wrapped.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from tracer.tui.commands import ID_PREFIX
from tracer.tui.screens.access_log import AccessLogScreen
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.screens.cases import CasesScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.impact import ImpactScreen
from tracer.tui.screens.lineage import LineageScreen
from tracer.tui.screens.note_editor import NoteEditor
from tracer.tui.screens.notes import NotesScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.screens.timeline import TimelineScreen
from tracer.tui.screens.unlock import UnlockScreen
from tracer.tui.screens.verify import VerifyScreen
from tracer.tui.text import plain
from tracer.tui.widgets.edge_mark import MarkedTable

__all__ = ["SCREENS", "HelpScreen"]

SCREENS: tuple[tuple[str, type[Screen[Any]]], ...] = (
    ("Unlock", UnlockScreen),
    ("Answers", AnswersScreen),
    ("Answer", AnswerScreen),
    ("Evidence", EvidenceScreen),
    ("Lineage", LineageScreen),
    ("Timeline", TimelineScreen),
    ("Verify", VerifyScreen),
    ("Impact", ImpactScreen),
    ("Access log", AccessLogScreen),
    ("Notes", NotesScreen),
    ("Cases", CasesScreen),
    ("Text prompt", PromptScreen),
    ("Note editor", NoteEditor),
)


def _ours(bindings: list[BindingType]) -> list[Binding]:
    return [b for b in bindings if isinstance(b, Binding) and b.id and b.id.startswith(ID_PREFIX)]


class HelpScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [BACK]

    def __init__(self, current: type[Screen[Any]]):
        super().__init__()
        self.current = current
        #: (where, key, action, what it does) of each row, for the pane under the table
        self.rows: list[tuple[str, str, str, str]] = []

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(
            plain("Keys (also in the command palette, ctrl+p). Tab moves focus; arrows move.", "bold")
        )
        table = MarkedTable(id="help", cursor_type="row")
        for col in ("where", "key", "action", "what it does"):
            table.add_column(col, key=col)
        yield table
        yield Static(id="help-detail")
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        table = self.query_one("#help", DataTable)
        sections: list[tuple[str, list[Binding]]] = [("Everywhere", _ours(list(type(self.app).BINDINGS)))]
        sections += [(name, _ours(list(cls.BINDINGS))) for name, cls in SCREENS]
        sections.append(("Everywhere", [Binding("ctrl+p", "command_palette", "Command palette")]))
        for name, bindings in sections:
            cls = dict(SCREENS).get(name)
            where = f"{name} (here)" if cls is self.current else name
            for b in bindings:
                key = self.app.get_key_display(b)
                self.rows.append((where, key, b.description, b.tooltip))
                table.add_row(plain(where), plain(key, "bold"), plain(b.description), plain(b.tooltip))
        table.focus()
        self._show(0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def _show(self, row: int) -> None:
        if not 0 <= row < len(self.rows):
            return
        where, key, action, what = self.rows[row]
        self.query_one("#help-detail", Static).update(
            Text.assemble(
                plain(key, "bold"),
                plain(f"  {action}", "bold"),
                plain(f"  ({where})\n"),
                plain(what),
            )
        )
