"""A table's columns fit its cells from the moment a row is added, not from a later
idle step: on a loaded machine the notes screen was drawn, and stayed drawn, with every
column at its label's width and every value cut (`ans-r…`, `pro…`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from tracer.tui.widgets.edge_mark import MarkedTable

NOTE = "production exception omitted from the answer"


class _TableApp(App[None]):
    def compose(self) -> ComposeResult:
        table = MarkedTable(id="t", cursor_type="row")
        for label in ("on", "note"):
            table.add_column(label, key=label)
        table.add_column("fixed", key="fixed", width=3)
        yield table


async def test_columns_fit_a_row_before_the_table_is_idle_again() -> None:
    app = _TableApp()
    async with app.run_test(size=(80, 8)) as pilot:
        await pilot.pause()
        table = app.query_one(MarkedTable)
        # no await between adding and reading: the table has had no idle step since
        table.add_row(Text("claim:1"), Text(NOTE), Text("wider than three"), key="r1")
        widths = {str(c.key.value): c.content_width for c in table.ordered_columns}
        assert widths["on"] == len("claim:1")
        assert widths["note"] == len(NOTE)
        assert table.columns[table.ordered_columns[2].key].get_render_width(table) == 3 + 2
        line = table.render_line(1).text
        assert "claim:1" in line and NOTE in line
        await pilot.pause()
        # the idle step agrees, and a narrower row later shrinks nothing
        table.add_row(Text("c"), Text("n"), Text("x"), key="r2")
        await pilot.pause()
        assert [c.content_width for c in table.ordered_columns][:2] == [len("claim:1"), len(NOTE)]
