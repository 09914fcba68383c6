"""Keys typed before a text field has focus go into that field, not nowhere.

A screen is painted before its field receives focus; characters typed (or auto-typed
by a password manager, or sent by a script) in between reach the screen with nothing
focused and would be dropped, so "/ans-fc62" became "/" and an empty filter.  The
first early character replaces a pre-filled value, exactly as typing over the
selected value does once the field has focus.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.screen import Screen
from textual.widgets import Input

__all__ = ["take_early_key"]


def take_early_key(screen: Screen[Any], field: Input, event: events.Key) -> None:
    if screen.focused is not None or not event.is_printable or not event.character:
        return
    event.stop()
    event.prevent_default()
    if field.select_on_focus:
        field.select_on_focus = False  # the characters typed early must not be selected
        field.value = ""
    field.insert_text_at_cursor(event.character)
    field.focus()
