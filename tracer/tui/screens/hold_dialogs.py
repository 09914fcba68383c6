"""The modals of the hold flow: pick what to hold, read the statement before signing it,
and the refusal that names who may hold.

Each is keyboard-only and says its keys in its own box (a modal has no footer).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

__all__ = ["ChooseScreen", "ConfirmStatement", "HoldRefused"]


class ChooseScreen(ModalScreen[str | None]):
    """One of several choices (`(key, label)`), by arrows and Enter; Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="tracer.choose.cancel", tooltip="Close without change"),
    ]

    def __init__(self, title: Text, choices: list[tuple[str, Text]]):
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="choose-box", classes="dialog"):
            yield Static(self.title_text)
            yield OptionList(*(Option(label, id=key) for key, label in self.choices), id="choose-list")
            yield Static(Text("↑↓ choose · Enter accept · Escape cancel", style="dim"))

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmStatement(ModalScreen[bool]):
    """The statement exactly as it will be signed; F2 signs it, Escape signs nothing.

    F2, not Enter: the reason was typed and submitted with Enter just before, and a
    second Enter arriving in the same read must not sign what was never shown.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "sign", "Sign", id="tracer.confirm.sign", tooltip="Sign the statement and append it"),
        Binding("escape", "cancel", "Cancel", id="tracer.confirm.cancel", tooltip="Sign nothing"),
    ]

    def __init__(self, title: Text, statement: Text):
        super().__init__()
        self.title_text = title
        self.statement = statement

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box", classes="dialog"):
            yield Static(self.title_text)
            with VerticalScroll(id="confirm-statement"):
                yield Static(self.statement)
            yield Static(Text("F2 signs and appends · Escape signs nothing", style="bold"))

    def action_sign(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class HoldRefused(ModalScreen[bool]):
    """Who may hold, for someone who may not; `n` records a hold request as a case note."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "n", "note", "Request", id="tracer.refused.note", tooltip="Record a hold request as a case note"
        ),
        Binding("escape", "cancel", "Close", id="tracer.refused.close", tooltip="Close"),
    ]

    def __init__(self, text: Text, can_note: bool):
        super().__init__()
        self.text = text
        self.can_note = can_note

    def compose(self) -> ComposeResult:
        with Vertical(id="refused-box", classes="dialog"):
            with VerticalScroll(id="refused-text"):
                yield Static(self.text)
            keys = (
                "n records a hold request as a note in the selected case · Escape closes"
                if self.can_note
                else "select a case first (C, Enter) to record a hold request as a case note · Escape closes"
            )
            yield Static(Text(keys, style="bold"))

    def action_note(self) -> None:
        if self.can_note:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
