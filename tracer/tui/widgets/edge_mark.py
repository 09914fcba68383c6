"""Tables and trees that mark a word cut by their own edge with `…`.

A table wider than the terminal scrolls sideways, and Textual crops each line at the
visible edge with no mark, so `ans-f5f07070554a` at the edge read `ans-f5f07070554` —
a prefix that looks like a valid id — and `cites` read `cit`.  Here a line whose last
visible cell and the cell just past the edge both hold a character (a word goes on
past the edge) ends in `…` instead; the same on the left edge once scrolled.  The
whole value is one key away: `→`/`←` scroll a table sideways, and the pane under each
table shows the highlighted row whole.

Cells narrower than their text are marked by the text itself (`tui.text.safe_line`
sets `overflow="ellipsis"`), so this module only deals with the visible edge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.render import measure
from textual.strip import Strip
from textual.widgets import DataTable, Tree
from textual.widgets.data_table import RowKey

__all__ = ["ELLIPSIS", "MarkedTable", "MarkedTree", "mark_edges"]

ELLIPSIS = "…"

T = TypeVar("T")

_Render = Callable[[int, int, int, Style], Strip]


def _filled(strip: Strip, at: int) -> bool:
    return bool(strip.crop(at, at + 1).text.strip())


def _mark(strip: Strip, at: int) -> Strip:
    cell = strip.crop(at, at + 1)
    style = next((seg.style for seg in cell if seg.text), None)
    mark = Strip([Segment(ELLIPSIS, style)], 1)
    return Strip.join([strip.crop(0, at), mark, strip.crop(at + 1, strip.cell_length)])


def mark_edges(render: _Render, y: int, x1: int, x2: int, style: Style, width: int, virtual: int) -> Strip:
    """`render(y, x1, x2, style)` with a word cut at either visible edge ending in `…`.

    `width`: the cells not under a scroll bar (a vertical bar covers the last two)."""
    strip = render(y, x1, x2, style)
    if width < 2:
        return strip
    # a word goes on past the edge when the cell beyond holds a character and so does the
    # last visible cell or the one before it ("doc @ r1" cut after "@ " hides "r1"); two
    # blanks are the padding between columns: a column wholly past the edge is not cut
    near_right = _filled(strip, width - 1) or _filled(strip, width - 2)
    if virtual > x2 and near_right and _filled(render(y, x1 + 1, x2 + 1, style), width - 1):
        strip = _mark(strip, width - 1)
    near_left = _filled(strip, 0) or _filled(strip, 1)
    if x1 > 0 and near_left and _filled(render(y, x1 - 1, x2 - 1, style), 0):
        strip = _mark(strip, 0)
    return strip


class MarkedTable(DataTable[Text]):
    """A `DataTable` whose lines mark a word cut by the visible edge.

    On a row table `Home` and `End` go to the first and last row (Textual's scroll
    sideways there, which read as a key doing nothing).

    A column fits its cells as soon as a row is added.  Textual widens auto-width
    columns later, in the table's idle step; on a loaded machine a screen was drawn,
    and stayed drawn, with the notes table's columns at their labels' widths (`ans-r…`,
    `pro…`), every value cut.  The idle step still runs and finds nothing left to widen.
    """

    def add_row(
        self,
        *cells: Text,
        height: int | None = 1,
        key: str | None = None,
        label: str | Text | None = None,
    ) -> RowKey:
        row_key = super().add_row(*cells, height=height, key=key, label=label)
        console = self.app.console
        for column, cell in zip(self.ordered_columns, cells, strict=False):
            if column.auto_width:
                column.content_width = max(column.content_width, measure(console, cell, 1))
        return row_key

    def action_scroll_home(self) -> None:
        if self.cursor_type == "row" and self.row_count:
            self.move_cursor(row=0)
            return
        super().action_scroll_home()

    def action_scroll_end(self) -> None:
        if self.cursor_type == "row" and self.row_count:
            self.move_cursor(row=self.row_count - 1)
            return
        super().action_scroll_end()

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        render = super()._render_line
        seen = self.scrollable_content_region.width or self.size.width
        return mark_edges(render, y, x1, x1 + seen, base_style, seen, self.virtual_size.width)


class MarkedTree(Tree[T]):
    """A `Tree` whose lines mark a label cut by the visible edge."""

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        render = super()._render_line
        seen = self.scrollable_content_region.width or self.size.width
        return mark_edges(render, y, x1, x1 + seen, base_style, seen, self.virtual_size.width)
