"""Row tables whose Enter is the table's own, so it comes after every key typed before it.

A screen's Enter bound with `priority=True` runs as soon as the key reaches the app,
while arrow keys typed just before it may still be on their way to the table: Down,
Down, Enter then opened the row the cursor was on before the Downs (and the Downs,
arriving late, scrolled the screen that opened).  Here Enter is the table's binding
(`DataTable.select_cursor`), handled in turn after the keys before it, and the screen
acts on the `RowSelected` it posts, which names the row.

A `PickTable` subclass names the screen binding its Enter stands for (`PICKS`): the
table's Enter has that binding's key, words and id, so the footer still says what Enter
does ("⏎ Evidence") while the table has focus, and it is offered, dimmed or withheld
exactly when the screen offers that action.  The screen keeps its binding, without
priority, for the palette, the help screen and an Enter pressed while something else
has focus.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType

from tracer.tui.widgets.edge_mark import MarkedTable

__all__ = ["PickTable"]

_SELECT = "select_cursor"


class PickTable(MarkedTable):
    """A row table whose Enter selects the cursor row in the words of the screen's `PICKS`."""

    #: the screen binding that Enter on this table stands for
    PICKS: ClassVar[Binding]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        picks = cls.__dict__.get("PICKS")
        if isinstance(picks, Binding):
            bindings: list[BindingType] = [
                Binding(
                    picks.key,
                    _SELECT,
                    picks.description,
                    show=picks.show,
                    id=picks.id,
                    tooltip=picks.tooltip,
                )
            ]
            cls.BINDINGS = bindings
        super().__init_subclass__(**kwargs)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == _SELECT:
            return self.screen.check_action(self.PICKS.action, parameters)
        return super().check_action(action, parameters)
