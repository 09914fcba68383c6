"""A one-line modal input (filter, investigator note, export directory); Enter accepts, Escape cancels."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tracer.tui.early_keys import take_early_key

__all__ = ["PromptScreen"]


class PromptScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="tracer.prompt.cancel", tooltip="Close without change"),
    ]

    def __init__(self, title: Text, value: str = "", placeholder: str = "", **kw: str):
        super().__init__(**kw)
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Static(self.title_text)
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")
            yield Static(Text("Enter to accept, Escape to cancel", style="dim"))

    def on_key(self, event: events.Key) -> None:
        take_early_key(self, self.query_one("#prompt-input", Input), event)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
