"""Every key on every screen, read from the bindings themselves so it cannot drift."""

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
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.impact import ImpactScreen
from tracer.tui.screens.lineage import LineageScreen
from tracer.tui.screens.notes import NotesScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.screens.unlock import UnlockScreen
from tracer.tui.screens.verify import VerifyScreen
from tracer.tui.text import plain

__all__ = ["SCREENS", "HelpScreen"]

SCREENS: tuple[tuple[str, type[Screen[Any]]], ...] = (
    ("Unlock", UnlockScreen),
    ("Answers", AnswersScreen),
    ("Answer", AnswerScreen),
    ("Evidence", EvidenceScreen),
    ("Lineage", LineageScreen),
    ("Verify", VerifyScreen),
    ("Impact", ImpactScreen),
    ("Access log", AccessLogScreen),
    ("Notes", NotesScreen),
    ("Text prompt", PromptScreen),
)


def _ours(bindings: list[BindingType]) -> list[Binding]:
    return [b for b in bindings if isinstance(b, Binding) and b.id and b.id.startswith(ID_PREFIX)]


class HelpScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [BACK]

    def __init__(self, current: type[Screen[Any]]):
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(
            plain("Keys (also in the command palette, ctrl+p). Tab moves focus; arrows move.", "bold")
        )
        table: DataTable[Text] = DataTable(id="help", cursor_type="row")
        for col in ("where", "key", "action", "what it does"):
            table.add_column(col, key=col)
        yield table
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
                table.add_row(plain(where), plain(key, "bold"), plain(b.description), plain(b.tooltip))
        table.focus()
