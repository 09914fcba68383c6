"""Every answer in the vault, paged by keyset from the log, with its two states.

A page is shown as soon as its rows come out of SQL (ids, time, producer, citations:
a few milliseconds whatever the vault's size); the two states of its answers are then
filled in by a worker, a few answers per hold of the engine lock, so keystrokes and
other pages never wait behind a long computation.  Filters on id, producer, document
and date are pure SQL; only a `state:` filter has to compute states before it can
keep a row.  The per-state counts in the summary bar come from a separate worker that
walks every answer in small steps and steps aside while a visible page is being filled.
Both pass the app's `Background` gate before each step: they wait while keys come in,
while the UI thread is behind, and while another screen is on top.  States arriving
are drawn at most every `REDRAW` seconds (a cell update redraws the whole table).
Every worker uses the session's one `Tracer` (`Engine.tracer`), so a state computed
for the page is not computed again for the counts, a filter or an opened answer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static
from textual.worker import Worker, get_current_worker

from tracer.engine.times import utc
from tracer.engine.vocabulary import Integrity
from tracer.tui import export
from tracer.tui.answercounts import AnswerCounts, Tally
from tracer.tui.answerstates import FILL_STEP, AnswerStates, Counting, Looked

if TYPE_CHECKING:
    from store.queries import AnswerRow
from tracer.tui.filtering import FILTER_HELP, FilterError, ListFilter, parse_filter
from tracer.tui.messages import Failed
from tracer.tui.screens.base import COPY_ID, TracerScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import STATE_WIDTH, plain, safe_line, state_word
from tracer.tui.widgets.pick_table import PickTable
from tracer.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tracer.engine.evidence import TextResult

__all__ = ["AnswersScreen", "Looked"]

#: most important first: at 80 columns the id and both states are on screen, and what
#: goes past the right edge is what matters least (the run id last)
COLUMNS = ("answer id", "integrity", "currency", "generated at", "cites", "question", "producer", "run id")
_PENDING = "…"
QUESTION_WIDTH = 48
#: seconds between two redraws of the table for states that arrived
REDRAW = 0.15


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
    if kind == "imported":
        cell.append(" (imported, not attested)", style="italic reverse")
    elif kind != "answer":
        cell.append(f" ({kind})", style="italic")
    return cell


def _pending_cell() -> Text:
    return Text(_PENDING, style="dim")


def _question_cell(q: TextResult | None) -> Text:
    """The question's first line, inert; else why it is not shown (never other text)."""
    if q is None:
        return plain("(unreadable)", "italic")
    if q.verified and q.text is not None:
        first = q.text.strip().splitlines()[0] if q.text.strip() else ""
        return safe_line(first, limit=QUESTION_WIDTH)
    if q.state == Integrity.UNAVAILABLE:
        return plain("(outside your scope)", "italic")
    return Text.assemble(plain("(question "), state_word(q.state), plain(")"))


#: not priority: Enter on the list is the table's own (`PickTable`), after the arrows
OPEN = Binding("enter", "open", "Open", id="tracer.open_answer", tooltip="Open the highlighted answer")


class AnswersTable(PickTable):
    """One row per answer in log order; Enter opens the row's answer."""

    PICKS = OPEN


class AnswersScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="tracer.filter", tooltip=FILTER_HELP),
        Binding("c", "clear_filter", "Clear", id="tracer.clear_filter", tooltip="Show every answer"),
        Binding("s", "sort", "Sort", id="tracer.sort", tooltip="Oldest first / newest first (log order)"),
        OPEN,
        Binding("r", "reload", "Reload", id="tracer.reload", tooltip="Recompute states now"),
        *export.EXPORT_BINDINGS,
        COPY_ID,
    ]
    FOOTER_FIRST = ("open", "filter", "export", "copy_id", "clear_filter")

    @dataclass
    class Page(Message):
        generation: int
        rows: list[AnswerRow]
        states: dict[str, Looked]
        cursor: int
        exhausted: bool
        #: for an id or words that match nothing: the closest known answer ids
        closest: list[str] = field(default_factory=list)

    @dataclass
    class States(Message):
        generation: int
        states: dict[str, Looked]

    @dataclass
    class Counts(Message):
        tally: Tally

    def __init__(self) -> None:
        super().__init__()
        self.list_filter = ListFilter()
        self.descending = False
        self.generation = 0
        self.cursor = -1
        self.exhausted = False
        self.loading = False
        #: states arrived but not drawn yet, and whether a redraw is scheduled
        self._arrived: dict[str, Looked] = {}
        self._redraw_due = False
        #: where the fill and the counts stopped when another screen came on top
        self._unfilled: list[AnswerRow] = []
        #: the engine side: rows, states and counts, and how many page fills run
        self.loader = AnswerStates(lambda: self.engine, lambda: self.generation)
        #: the per-state counts' worker, where it paused, and whether it started
        self.counts = AnswerCounts(
            self,
            self.loader,
            lambda: self.engine,
            lambda: self.generation,
            self._turn,
            lambda tally: self.post_message(self.Counts(tally)),
            lambda error: self.post_message(Failed("counts", error)),
        )

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(id="summary")
        yield Static(id="filter-line")
        table = AnswersTable(id="answers", cursor_type="row", zebra_stripes=True)
        for col in COLUMNS:
            # fixed widths where a later fill must never be cut (states) or run long (question)
            width = STATE_WIDTH.get(col) or (QUESTION_WIDTH if col == "question" else None)
            table.add_column(col, key=col, width=width)
        yield table
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self.table.focus()
        if self.tracer_app.unlocked:
            self.reload()
        else:  # the early opening is still unlocking: nothing from the vault yet
            self.query_one("#summary", Static).update(plain("unlocking…"))

    def engine_ready(self) -> None:
        """The unlock (and its access entry) completed after this screen was drawn."""
        for bar in self.query_children(StatusBar):
            bar.refresh(layout=True)  # the unlocked bar may wrap where "locked" did not
        self.reload()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#answers", DataTable)

    def reload(self) -> None:
        self.generation += 1
        self._arrived, self._unfilled = {}, []
        self.cursor, self.exhausted, self.loading = -1, False, True
        self.table.clear()
        order = "newest first" if self.descending else "oldest first"
        line = Text(f"sort: log order, {order}  ·  filter: ")
        line.append_text(safe_line(self.list_filter.source or "(none)  press / to filter"))
        self.query_one("#filter-line", Static).update(line)
        self.query_one("#summary", Static).update(plain("counting…"))
        self.counts.reset()  # started with the first page, so it never delays it
        self._load_page(self.generation, self.list_filter, -1, self.descending)

    # -- engine side (worker threads) ---------------------------------------------------

    def _turn(self, generation: int, worker: Worker[None]) -> bool:
        """Background work's turn (`tui/background.py`).  False: stop here, because the
        listing is gone or another screen is on top (`on_screen_resume` goes on)."""
        return self.tracer_app.background.wait_turn(
            lambda: self.app.screen is self,
            lambda: generation != self.generation or worker.is_cancelled,
        )

    @work(thread=True, exclusive=True, group="answers-page")
    def _load_page(self, generation: int, f: ListFilter, cursor: int, desc: bool) -> None:
        try:
            if f.computed:
                got = self.loader.computed_page(generation, f, cursor, desc, get_current_worker())
            else:
                got = self.loader.sql_page(f, cursor, desc)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("answers", str(exc)))
            return
        self.post_message(self.Page(generation, got.rows, got.states, got.cursor, got.exhausted, got.closest))

    @property
    def states_shown(self) -> bool:
        """No state of the rows shown is still being computed or waiting for its redraw:
        what the table shows now is all the engine will say (the tests wait on this)."""
        filling = self.loader.filling
        return not filling and not self._redraw_due and not self._arrived and not self._unfilled

    @work(thread=True, group="answers-states")
    def _fill(self, generation: int, rows: list[AnswerRow]) -> None:
        """States of one shown page, posted a few at a time as they are computed; what is
        left when another screen comes on top waits for this one to be back."""
        worker = get_current_worker()
        try:
            for i in range(0, len(rows), FILL_STEP):
                if not self._turn(generation, worker):
                    if generation == self.generation and not worker.is_cancelled:
                        self._unfilled.extend(rows[i:])
                    return
                got = self.loader.summaries(generation, rows[i : i + FILL_STEP], worker)
                if generation != self.generation:
                    return
                self.post_message(self.States(generation, got))
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("answers", str(exc)))
        finally:
            self.loader.end_fill()

    def on_screen_resume(self) -> None:
        """Back on top: the fill and the counts go on from where they stopped."""
        super().on_screen_resume()
        rows, self._unfilled = self._unfilled, []
        if rows:
            self.loader.begin_fill()
            self._fill(self.generation, rows)
        self.counts.resume(self.list_filter)

    # -- UI side ------------------------------------------------------------------------

    def on_answers_screen_page(self, message: Page) -> None:
        if message.generation != self.generation:
            return
        self.cursor, self.exhausted, self.loading = message.cursor, message.exhausted, False
        table = self.table
        for r in message.rows:
            table.add_row(
                _answer_cell(r.answer_id, r.answer_kind),
                _pending_cell(),
                _pending_cell(),
                plain(utc(r.generated_at)),
                plain(str(r.n_citations)),
                _pending_cell(),
                safe_line(r.producer_system, limit=28),
                safe_line(r.run_id, limit=18),
                key=r.answer_id,
            )
        self._show_states(message.states)
        if message.closest:
            line = Text("no answer matches ")
            line.append_text(safe_line(self.list_filter.source))
            line.append("; closest known ids: ")
            line.append_text(safe_line(", ".join(message.closest)))
            self.query_one("#filter-line", Static).update(line)
        pending = [r for r in message.rows if r.answer_id not in message.states]
        if pending:
            self.loader.begin_fill()  # here, not in the worker: the counts must see it at once
            # after the rows are painted: the workers compete with the first frame for the GIL
            self.call_after_refresh(self._fill, message.generation, pending)
        if self.counts.begin():
            self.call_after_refresh(self.counts.start, Counting(self.generation), self.list_filter)

    def on_answers_screen_states(self, message: States) -> None:
        if message.generation != self.generation:
            return
        self._arrived.update(message.states)
        if not self._redraw_due:
            self._redraw_due = True
            self.set_timer(REDRAW, self._draw_arrived)

    def _draw_arrived(self) -> None:
        self._redraw_due = False
        arrived, self._arrived = self._arrived, {}
        self._show_states(arrived)

    def _show_states(self, states: dict[str, Looked]) -> None:
        table = self.table
        for answer_id, looked in states.items():
            if answer_id not in table.rows:
                continue
            s = looked.summary
            table.update_cell(answer_id, "integrity", state_word(s.integrity))
            table.update_cell(answer_id, "currency", state_word(s.currency))
            table.update_cell(answer_id, "question", _question_cell(looked.question))
            if not s.visible:
                # outside the viewer's scope: the id and the word, nothing else (as the CLI)
                for col in ("generated at", "cites", "producer", "run id"):
                    table.update_cell(answer_id, col, plain("—"))

    def on_answers_screen_counts(self, message: Counts) -> None:
        t = message.tally
        if t.generation == self.generation:
            self.query_one("#summary", Static).update(_counts_text(t.total, t.done, t.integrity, t.currency))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        near_end = event.cursor_row >= self.table.row_count - 10
        if near_end and not self.exhausted and not self.loading and self.tracer_app.unlocked:
            self.loading = True
            self._load_page(self.generation, self.list_filter, self.cursor, self.descending)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            from tracer.tui.screens.answer import AnswerScreen

            self.app.push_screen(AnswerScreen(event.row_key.value))

    def _highlighted(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return str(key) if key is not None else None

    def action_open(self) -> None:
        self._open()

    def copy_target(self) -> tuple[str, str] | None:
        key = self._highlighted()
        return None if key is None else ("answer id", key)

    def _open(self) -> None:
        key = self._highlighted()
        if key is not None:
            from tracer.tui.screens.answer import AnswerScreen

            self.app.push_screen(AnswerScreen(key))

    def action_export(self) -> None:
        key = self._highlighted()
        if key is not None:
            export.start_export(self, key)

    def action_filter(self) -> None:
        title = Text.assemble(plain("Filter answers  "), plain(FILTER_HELP, "dim"))
        self.app.push_screen(PromptScreen(title, self.list_filter.source), self._filter_chosen)

    def _filter_chosen(self, line: str | None) -> None:
        if line is None:
            return
        try:
            wanted = parse_filter(line)
        except FilterError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        if wanted.tags:
            from tracer.engine.case import CaseDesk

            with self.engine.use() as s:
                desk = CaseDesk(s)
                wanted = wanted.with_tags({t: desk.answers_tagged(t, s.case_id) for t in wanted.tags})
        self.list_filter = wanted
        self.reload()

    def action_clear_filter(self) -> None:
        self.list_filter = ListFilter()
        self.reload()

    def action_sort(self) -> None:
        self.descending = not self.descending
        self.reload()

    def action_reload(self) -> None:
        self.engine.fresh()  # "recompute states now": nothing memoized is kept
        self.reload()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The list is the bottom of the stack: there is nowhere further back."""
        if action == "back":
            return False
        return True if self.tracer_app.unlocked else None
