"""One document's revision timeline, with the answers that cite it placed on it.

Revisions in commit order (the same order that decides "latest"), and between them every
answer citing the document, with the revision it cited and whether that revision had
already been superseded when it was given. Enter on an answer opens it. States come from
the engine (`tracer.engine.timeline`); nothing here computes one.

Most important first, as on the answers list: the time, then both states (each column
as wide as the longest word it can hold), then the answer id whole; at 80 columns what
goes past the right edge is the cited passage and the reason code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from tracer.engine.answertime import ANSWER_TIME
from tracer.engine.timeline import Timeline, TimelineEvent, document_timeline

if TYPE_CHECKING:
    from tracer.engine.trace import PassageTrace
from tracer.engine.case import CaseDesk, HoldView
from tracer.tui.hold_actions import HoldSubject, start_hold, start_release
from tracer.tui.messages import Failed, reload_failed
from tracer.tui.screens.base import BACK, COPY_ID, HOLD, RELEASE, TracerScreen
from tracer.tui.text import STATE_WIDTH, plain, safe_line, state_word
from tracer.tui.widgets.answer_head import alerts
from tracer.tui.widgets.answer_time import answer_time_word
from tracer.tui.widgets.pick_table import PickTable

__all__ = ["TimelineScreen"]

#: header, key and width of each column, most important first.  Short headers (the
#: pane under the table spells both states out) and the passage right after the answer:
#: at 80 columns the passage is on screen, so two rows of one answer never look the same
_AT, _TODAY = "at answer", "today"
COLUMNS: tuple[tuple[str, int | None], ...] = (
    ("time (UTC)", None),
    (_AT, max(len(_AT), *map(len, ANSWER_TIME))),
    (_TODAY, max(len(_TODAY), STATE_WIDTH["currency"])),
    ("answer", None),
    ("passage", None),
    ("revision", None),
    ("reason", None),
)


def _at(stamp: str) -> str:
    """A UTC time in the table: the header says UTC, so the cell drops the `Z` (the pane
    under the table shows it whole)."""
    return stamp[:-1] if stamp.endswith("Z") else stamp


#: not priority: Enter on the timeline is the table's own (`PickTable`), after the arrows
OPEN_ANSWER = Binding(
    "enter",
    "open_answer",
    "Open answer",
    id="tracer.timeline_open",
    tooltip="Open the answer on this row",
)


class TimelineTable(PickTable):
    """Revisions and the answers placed among them; Enter opens the row's answer."""

    PICKS = OPEN_ANSWER


class TimelineScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        OPEN_ANSWER,
        Binding(
            "s",
            "only_superseded",
            "Only superseded",
            id="tracer.timeline_superseded",
            tooltip="Show only answers given from a revision already superseded then (again: all)",
        ),
        HOLD,
        RELEASE,
        COPY_ID,
    ]
    FOOTER_FIRST = ("open_answer", "back", "hold", "release", "copy_id", "only_superseded")

    @dataclass
    class HoldsChanged(Message):
        holds: list[HoldView]
        said: str = ""

    @dataclass
    class Loaded(Message):
        timeline: Timeline
        holds: list[HoldView]

    def __init__(self, document_id: str):
        super().__init__()
        self.document_id = document_id
        self.timeline: Timeline | None = None
        self.only_superseded = False
        #: legal holds in force on this document (named in the header)
        self.holds: list[HoldView] = []

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(self._head(), id="timeline-head")
        yield Static(plain("reading revisions and answers…"), id="timeline-summary")
        table = TimelineTable(id="timeline", cursor_type="row")
        for col, width in COLUMNS:
            table.add_column(col, key=col, width=width)
        yield table
        yield Static(id="timeline-detail")
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="timeline")
    def _load(self) -> None:
        try:
            with self.engine.use() as s:
                found = document_timeline(s, self.document_id, self.engine.normalizer)
                holds = CaseDesk(s).holds_on_document(self.document_id)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("timeline", str(exc)))
            return
        self.post_message(self.Loaded(found, holds))

    def on_timeline_screen_loaded(self, message: Loaded) -> None:
        self.timeline = message.timeline
        self.holds = message.holds
        self.query_one("#timeline-head", Static).update(self._head())
        self._fill()

    def _head(self) -> Text:
        out = Text.assemble(plain("Revision timeline of "), safe_line(self.document_id, "bold"))
        found = alerts([], self.holds)
        if found is not None:
            out.append("\n")
            out.append_text(found)
        return out

    def action_hold(self) -> None:
        doc = self.document_id
        subject = HoldSubject("document", doc, f"document {doc} (every revision, every passage quoted)")
        start_hold(self, [subject], self._reload_holds)

    def action_release(self) -> None:
        start_release(self, self.holds, self._reload_holds)

    @work(thread=True, exclusive=True, group="holds-reload")
    def _reload_holds(self, said: str = "") -> None:
        try:
            with self.engine.use() as s:
                holds = CaseDesk(s).holds_on_document(self.document_id)
        except Exception as exc:
            self.post_message(reload_failed("holds", exc, said))
            return
        self.post_message(self.HoldsChanged(holds, said))

    def on_timeline_screen_holds_changed(self, message: HoldsChanged) -> None:
        self.holds = message.holds
        self.query_one("#timeline-head", Static).update(self._head())
        self.say(message.said)

    def _fill(self) -> None:
        t = self.timeline
        if t is None:
            return
        self.query_one("#timeline-summary", Static).update(plain(_summary(t, self.only_superseded)))
        table = self.query_one("#timeline", DataTable)
        table.clear()
        for n, e in enumerate(t.events):
            if self.only_superseded and e.kind == "answer" and e.answer_time != "superseded":
                continue  # revisions stay: they are what the answers are placed against
            table.add_row(*_row(e), key=f"r{n}" if e.kind == "revision" else f"a{n}:{e.answer_id}")
        table.focus()
        self._show_detail(0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _row_event(self, row: int) -> TimelineEvent | None:
        table = self.query_one("#timeline", DataTable)
        if self.timeline is None or not 0 <= row < table.row_count:
            return None
        key = str(table.ordered_rows[row].key.value or "")  # "r3" or "a7:ans-…": index 3, 7
        return self.timeline.events[int(key[1:].split(":", 1)[0])]

    def copy_target(self) -> tuple[str, str] | None:
        """An answer row's answer id; a revision row's `document@revision`."""
        table = self.query_one("#timeline", DataTable)
        e = self._row_event(table.cursor_row)
        if e is None:
            return None
        return (
            ("answer id", e.answer_id)
            if e.kind == "answer"
            else ("revision", f"{self.document_id}@{e.revision}")
        )

    def _show_detail(self, row: int) -> None:
        """The highlighted row whole, so nothing past the right edge at 80 columns is lost."""
        e = self._row_event(row)
        detail = self.query_one("#timeline-detail", Static)
        detail.update(plain("") if e is None else event_text(e))

    def action_only_superseded(self) -> None:
        self.only_superseded = not self.only_superseded
        self._fill()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._open(str(event.row_key.value or ""))

    def action_open_answer(self) -> None:
        table = self.query_one("#timeline", DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
            self._open(str(key.value or ""))

    def _open(self, key: str) -> None:
        if not key.startswith("a") or ":" not in key:
            return
        from tracer.tui.screens.answer import AnswerScreen  # the answer screen opens this one

        self.app.push_screen(AnswerScreen(key.split(":", 1)[1]))


def _summary(t: Timeline, only_superseded: bool) -> str:
    answers = sum(1 for e in t.events if e.kind == "answer")
    revisions = len(t.events) - answers
    return (
        f"{revisions} revision(s), {answers} cited passage(s), one row each; "
        f"{t.superseded} given from a revision already superseded then"
        + (f"; {t.left_out} answer(s) not placed (limit)" if t.left_out else "")
        + ("  [only superseded shown]" if only_superseded else "")
    )


def _row(e: TimelineEvent) -> tuple[Text, ...]:
    """One table row: a revision committed, or an answer's passage placed on the timeline."""
    if e.kind == "revision":
        rev = safe_line(e.revision, "bold")
        if e.is_latest:
            rev.append(" (latest)", style="bold")
        blank = plain("")
        return (
            plain(_at(e.at), "bold"),
            blank,
            blank,
            plain("new revision", "bold italic"),
            blank,
            rev,
            blank,
        )
    return (
        plain(_at(e.at)),
        answer_time_word(e.answer_time),
        state_word(e.currency),
        safe_line(e.answer_id),
        safe_line(e.passage_id),
        safe_line(e.revision),
        plain(e.reason),
    )


def event_text(e: TimelineEvent) -> Text:
    """One timeline row in words, every value whole (it wraps) and inert."""
    if e.kind == "revision":
        return Text.assemble(
            plain("revision ", "bold"),
            safe_line(e.revision, "bold"),
            plain(f" committed {e.at}" + (", the latest" if e.is_latest else "")),
        )
    return Text.assemble(
        plain("answer ", "bold"),
        safe_line(e.answer_id, "bold"),
        plain(f" generated {e.at} cites revision "),
        safe_line(e.revision),
        plain(", passage "),
        safe_line(e.passage_id),
        plain("\nat answer time "),
        answer_time_word(e.answer_time),
        plain(f" ({e.reason})" if e.reason else ""),
        plain("  ·  currency today "),
        state_word(e.currency),
    )


def timeline_document(passages: Iterable[PassageTrace]) -> str | None:
    """The document a timeline opens for: that of the first visible passage that names one
    (an imported passage located in no revision names none)."""
    for p in passages:
        if p.visible and p.document_id:
            return p.document_id
    return None
