"""One document's revision timeline, with the answers that cite it placed on it.

Revisions in commit order (the same order that decides "latest"), and between them every
answer citing the document, with the revision it cited and whether that revision had
already been superseded when it was given. Enter on an answer opens it. States come from
the engine (`tracer.engine.timeline`); nothing here computes one.
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

from tracer.engine.timeline import Timeline, document_timeline

if TYPE_CHECKING:
    from tracer.engine.trace import PassageTrace
from tracer.tui.messages import Failed
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.text import plain, safe_line, state_word
from tracer.tui.widgets.answer_time import answer_time_line

__all__ = ["TimelineScreen"]


class TimelineScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        Binding(
            "enter",
            "open_answer",
            "Open answer",
            id="tracer.timeline_open",
            tooltip="Open the answer on this row",
            show=False,
        ),
        Binding(
            "s",
            "only_superseded",
            "Only superseded",
            id="tracer.timeline_superseded",
            tooltip="Show only answers given from a revision already superseded then (again: all)",
        ),
    ]

    @dataclass
    class Loaded(Message):
        timeline: Timeline

    def __init__(self, document_id: str):
        super().__init__()
        self.document_id = document_id
        self.timeline: Timeline | None = None
        self.only_superseded = False

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(
            Text.assemble(plain("Revision timeline of "), safe_line(self.document_id, "bold")),
            id="timeline-head",
        )
        yield Static(plain("reading revisions and answers…"), id="timeline-summary")
        table: DataTable[Text] = DataTable(id="timeline", cursor_type="row")
        for col in ("time (UTC)", "event", "revision", "answer", "at answer time", "currency today"):
            table.add_column(col, key=col)
        yield table
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="timeline")
    def _load(self) -> None:
        try:
            with self.engine.use() as s:
                found = document_timeline(s, self.document_id, self.engine.normalizer)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("timeline", str(exc)))
            return
        self.post_message(self.Loaded(found))

    def on_timeline_screen_loaded(self, message: Loaded) -> None:
        self.timeline = message.timeline
        self._fill()

    def _fill(self) -> None:
        t = self.timeline
        if t is None:
            return
        answers = sum(1 for e in t.events if e.kind == "answer")
        revisions = len(t.events) - answers
        summary = (
            f"{revisions} revision(s), {answers} cited passage(s); "
            f"{t.superseded} given from a revision already superseded then"
            + (f"; {t.left_out} answer(s) not placed (limit)" if t.left_out else "")
            + ("  [only superseded shown]" if self.only_superseded else "")
        )
        self.query_one("#timeline-summary", Static).update(plain(summary))
        table = self.query_one("#timeline", DataTable)
        table.clear()
        for n, e in enumerate(t.events):
            if self.only_superseded and e.kind == "answer" and e.answer_time != "superseded":
                continue  # revisions stay: they are what the answers are placed against
            if e.kind == "revision":
                table.add_row(
                    plain(e.at),
                    plain("revision committed" + (" (latest)" if e.is_latest else ""), "bold"),
                    safe_line(e.revision, "bold"),
                    plain(""),
                    plain(""),
                    plain(""),
                    key=f"r{n}",
                )
            else:
                at = answer_time_line(e.answer_time)
                at.append(f" ({e.reason})")
                table.add_row(
                    plain(e.at),
                    plain("  answer generated"),
                    Text.assemble(plain("cites "), safe_line(e.revision)),
                    safe_line(e.answer_id),
                    at,
                    state_word(e.currency),
                    key=f"a{n}:{e.answer_id}",
                )
        table.focus()

    def action_only_superseded(self) -> None:
        self.only_superseded = not self.only_superseded
        self._fill()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
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


def timeline_document(passages: Iterable[PassageTrace]) -> str | None:
    """The document a timeline opens for: that of the first visible passage that names one
    (an imported passage located in no revision names none)."""
    for p in passages:
        if p.visible and p.document_id:
            return p.document_id
    return None
