"""Every answer in the vault, paged by keyset from the log, with its two states.

Pages are fetched as the cursor nears the end of what is loaded, so a vault with a
million answers opens as fast as one with ten.  The per-state counts in the summary
bar come from a separate worker that walks the same pages in the background.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from store import queries
from tracer.engine.catalog import AnswerState, answer_page
from tracer.engine.session import Session
from tracer.engine.trace import Tracer
from tracer.tui.filtering import FILTER_HELP, FilterError, ListFilter, parse_filter
from tracer.tui.messages import Failed
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.base import TracerScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import plain, safe_line, state_word

__all__ = ["AnswersScreen"]

PAGE = 100
COUNT_PAGE = 500
COLUMNS = ("run id", "answer id", "generated at", "producer", "cites", "integrity", "currency")


def _page(s: Session, tracer: Tracer, f: ListFilter, cursor: int, desc: bool) -> list[AnswerState]:
    """One keyset page; newest-first uses the same query in reverse log order."""
    if not desc:
        return answer_page(s, tracer, f.where, PAGE, cursor)
    rows = queries.answer_rows(s.vault, f.where, PAGE, cursor, descending=True)
    return [AnswerState(r, tracer.summary(r.answer_id)) for r in rows]


def _counts_text(total: int, done: int, integ: Counter[str], curr: Counter[str]) -> Text:
    out = Text(f"{sum(integ.values())} answer(s)")
    if done < total:
        out.append(f" (counting {done}/{total}…)", style="italic")
    for axis, counts in (("integrity", integ), ("currency", curr)):
        out.append(f"  ·  {axis}: ")
        for i, (word, n) in enumerate(sorted(counts.items())):
            out.append(", " if i else "")
            out.append_text(state_word(word))
            out.append(f" {n}")
    return out


def _answer_cell(answer_id: str, kind: str) -> Text:
    cell = safe_line(answer_id, limit=22)
    if kind != "answer":
        cell.append(f" ({kind})", style="italic")
    return cell


class AnswersScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="tracer.filter", tooltip=FILTER_HELP),
        Binding("c", "clear_filter", "Clear filter", id="tracer.clear_filter", tooltip="Show every answer"),
        Binding("s", "sort", "Sort", id="tracer.sort", tooltip="Oldest first / newest first (log order)"),
        Binding(
            "enter",
            "open",
            "Open",
            id="tracer.open_answer",
            tooltip="Open the highlighted answer",
            priority=True,
        ),
        Binding("r", "reload", "Reload", id="tracer.reload", tooltip="Recompute states now"),
    ]

    @dataclass
    class Page(Message):
        generation: int
        rows: list[AnswerState]
        cursor: int
        exhausted: bool

    @dataclass
    class Counts(Message):
        generation: int
        total: int
        done: int
        integrity: Counter[str]
        currency: Counter[str]

    def __init__(self) -> None:
        super().__init__()
        self.list_filter = ListFilter()
        self.descending = False
        self.generation = 0
        self.cursor = -1
        self.exhausted = False
        self.loading = False

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(id="summary")
        yield Static(id="filter-line")
        table: DataTable[Text] = DataTable(id="answers", cursor_type="row", zebra_stripes=True)
        for col in COLUMNS:
            table.add_column(col, key=col)
        yield table
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self.table.focus()
        self.reload()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#answers", DataTable)

    def reload(self) -> None:
        self.generation += 1
        self.cursor, self.exhausted, self.loading = -1, False, True
        self.table.clear()
        order = "newest first" if self.descending else "oldest first"
        line = Text(f"sort: log order, {order}  ·  filter: ")
        line.append_text(safe_line(self.list_filter.source or "(none)  press / to filter"))
        self.query_one("#filter-line", Static).update(line)
        self.query_one("#summary", Static).update(plain("counting…"))
        self._load_page(self.generation, self.list_filter, -1, self.descending)
        self._count(self.generation, self.list_filter)

    @work(thread=True, exclusive=True, group="answers-page")
    def _load_page(self, generation: int, f: ListFilter, cursor: int, desc: bool) -> None:
        kept: list[AnswerState] = []
        exhausted = False
        try:
            while len(kept) < PAGE and not exhausted:
                with self.engine.use() as s:
                    page = _page(s, Tracer(s), f, cursor, desc)
                if len(page) < PAGE:
                    exhausted = True
                if page:
                    cursor = page[-1].row.seq
                kept.extend(a for a in page if f.keeps(a))
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("answers", str(exc)))
            return
        self.post_message(self.Page(generation, kept, cursor, exhausted))

    @work(thread=True, exclusive=True, group="answers-counts")
    def _count(self, generation: int, f: ListFilter) -> None:
        integ: Counter[str] = Counter()
        curr: Counter[str] = Counter()
        cursor, done = -1, 0
        try:
            with self.engine.use() as s:
                total = queries.answer_count(s.vault, f.where)
                tracer = Tracer(s)
            while True:
                with self.engine.use() as s:
                    page = answer_page(s, tracer, f.where, COUNT_PAGE, cursor)
                if not page:
                    break
                cursor, done = page[-1].row.seq, done + len(page)
                for a in page:
                    if f.keeps(a):
                        integ[a.summary.integrity] += 1
                        curr[a.summary.currency] += 1
                self.post_message(self.Counts(generation, total, done, integ.copy(), curr.copy()))
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("counts", str(exc)))
            return
        self.post_message(self.Counts(generation, total, total, integ, curr))

    def on_answers_screen_page(self, message: Page) -> None:
        if message.generation != self.generation:
            return
        self.cursor, self.exhausted, self.loading = message.cursor, message.exhausted, False
        table = self.table
        for a in message.rows:
            r, s = a.row, a.summary
            table.add_row(
                safe_line(r.run_id, limit=18),
                _answer_cell(r.answer_id, r.answer_kind),
                plain(r.generated_at),
                safe_line(r.producer_system, limit=16),
                plain(str(r.n_citations)),
                state_word(s.integrity),
                state_word(s.currency),
                key=r.answer_id,
            )

    def on_answers_screen_counts(self, message: Counts) -> None:
        if message.generation == self.generation:
            text = _counts_text(message.total, message.done, message.integrity, message.currency)
            self.query_one("#summary", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        near_end = event.cursor_row >= self.table.row_count - 10
        if near_end and not self.exhausted and not self.loading:
            self.loading = True
            self._load_page(self.generation, self.list_filter, self.cursor, self.descending)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.app.push_screen(AnswerScreen(event.row_key.value))

    def action_open(self) -> None:
        table = self.table
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            if key is not None:
                self.app.push_screen(AnswerScreen(key))

    def action_filter(self) -> None:
        title = Text.assemble(plain("Filter answers  "), plain(FILTER_HELP, "dim"))
        self.app.push_screen(PromptScreen(title, self.list_filter.source), self._filter_chosen)

    def _filter_chosen(self, line: str | None) -> None:
        if line is None:
            return
        try:
            self.list_filter = parse_filter(line)
        except FilterError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.reload()

    def action_clear_filter(self) -> None:
        self.list_filter = ListFilter()
        self.reload()

    def action_sort(self) -> None:
        self.descending = not self.descending
        self.reload()

    def action_reload(self) -> None:
        self.reload()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The list is the bottom of the stack: there is nowhere further back."""
        return action != "back"
