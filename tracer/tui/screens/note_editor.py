"""A multi-line text modal (case notes, a case's purpose): F2 signs and saves, Escape cancels.

Enter is a new line here, so saving takes a key a text area does not use and that
terminals and tmux pass through (F2); both keys are in the footer of the box.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

__all__ = ["NoteEditor"]


class NoteEditor(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "save", "Sign and save", id="tracer.note_save", tooltip="Sign the text and append it"),
        Binding("escape", "cancel", "Cancel", id="tracer.note_cancel", tooltip="Close without saving"),
    ]

    def __init__(self, title: Text, value: str = ""):
        super().__init__()
        self.title_text = title
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="note-box"):
            yield Static(self.title_text)
            yield TextArea(self.value, id="note-input", soft_wrap=True, show_line_numbers=False)
            yield Static(Text("F2 signs and saves · Escape cancels · Enter is a new line", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#note-input", TextArea).focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one("#note-input", TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)
