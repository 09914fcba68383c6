"""One answer: the stored text with numbered cited spans, and every claim's two states.

Enter on a claim opens its evidence; Escape there pops back here, and Textual restores
focus and cursor to the same claim, so the reader never loses their place.  Opening
the answer writes an `open_answer` access entry first, so the checkpoint the states are
computed against is the one the status bar shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from store.casefile import Tag
from tracer.engine.case import HoldView
from tracer.engine.trace import AnswerTrace, UnknownAnswerError
from tracer.tui import export
from tracer.tui.answerdata import AnswerData, Opened, Selection
from tracer.tui.hold_actions import HoldSubject, start_hold, start_release
from tracer.tui.messages import Failed, Recorded, reload_failed
from tracer.tui.notes_view import NoteRow, notes_text
from tracer.tui.screens.base import BACK, COPY_ID, HOLD, RELEASE, TracerScreen, row_key
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.lineage import LineageScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import STATE_WIDTH, hidden_note, plain, safe_line, state_word
from tracer.tui.widgets.answer_head import answer_head, state_meanings
from tracer.tui.widgets.answer_text import answer_with_citations
from tracer.tui.widgets.answer_time import answer_time_summary
from tracer.tui.widgets.historical import HistoricalText, digest_line
from tracer.tui.widgets.hold import HoldNotice
from tracer.tui.widgets.imported import claim_label
from tracer.tui.widgets.pick_table import PickTable

__all__ = ["OUT_OF_SCOPE", "AnswerScreen"]

OUT_OF_SCOPE = (
    "UNAVAILABLE: this answer, or something it was derived from, is in a collection "
    "outside your scope (reason out_of_scope). Nothing about it is shown to you: not its "
    "question, text, passages or sources, and not whether they are intact."
)

#: actions that need a visible, loaded answer (hidden from footer and palette otherwise)
_NEEDS_TRACE = {
    "open_citation",
    "lineage",
    "add_note",
    "export",
    "timeline",
    "tag",
    "tag_answer",
    "hold",
    "release",
    "copy_id",
}


#: not priority: Enter on the claims is the table's own (`PickTable`), after the arrows
EVIDENCE = Binding(
    "enter", "open_citation", "Evidence", id="tracer.evidence", tooltip="Open this claim's evidence"
)


class ClaimsTable(PickTable):
    """The claims, then the passages retrieved but not cited; Enter opens a row's evidence."""

    PICKS = EVIDENCE


def _claims_table() -> ClaimsTable:
    """The claims, then the passages retrieved but not cited (hidden until traced)."""
    table = ClaimsTable(id="citations", cursor_type="row")
    table.add_column("claim", key="claim")
    table.add_column("integrity", key="integrity", width=STATE_WIDTH["integrity"])
    table.add_column("currency", key="currency", width=STATE_WIDTH["currency"])
    for col in ("notes", "tags", "passages", "cited span"):
        table.add_column(col, key=col)
    table.display = False
    return table


def _body(t: AnswerTrace, holds: list[HoldView]) -> list[Widget]:
    """The body under the claims: meanings, holds, time, question, answer, notes, faults."""
    if not t.visible:
        return [Static(plain(OUT_OF_SCOPE, "bold"), id="out-of-scope", classes="withheld")]
    out: list[Widget] = [Static(state_meanings(t), id="answer-meanings")]
    if holds:
        out.insert(0, HoldNotice(holds, id="answer-holds"))
    out.append(Static(answer_time_summary(t), id="answer-time"))
    out.append(HistoricalText(plain("Question (as recorded)"), t.question, id="question"))
    if t.answer.verified and t.answer.text is not None:
        out.append(Static(plain("Answer (as recorded; cited spans underlined and numbered)", "bold")))
        out.append(Static(digest_line(t.answer), classes="digests"))
        note = hidden_note(t.answer.text)
        if note is not None:
            out.append(Static(note, classes="hidden-note"))
        out.append(Static(answer_with_citations(t.answer.text, t.citations), id="answer-text"))
    else:
        out.append(HistoricalText(plain("Answer (as recorded)"), t.answer, id="answer-text"))
    out.append(Static(id="claim-notes"))
    for f in t.faults:
        out.append(
            Static(
                Text.assemble(
                    plain("PRODUCER FAULT ", "bold"),
                    safe_line(f"{f.get('path')}: {f.get('code')}: {f.get('message')}"),
                ),
                classes="fault",
            )
        )
    return out


def _fill_claims(table: DataTable[Text], t: AnswerTrace, data: AnswerData) -> None:
    """The claims, then the passages retrieved but not cited, each with its states, notes
    and tags (every word inert: a tag is signed text too)."""

    def tags(claim: str | None, passage_ids: list[str]) -> Text:
        return safe_line(", ".join(data.tag_words(claim, passage_ids)), limit=30)

    table.clear()
    for c in t.citations:
        n = data.note_count(c.index)
        span = safe_line(c.span, limit=60) if c.span is not None else plain("(span not available)")
        ids = ", ".join(c.passage_ids) + (" UNSUPPORTED" if c.unknown_passages else "")
        table.add_row(
            claim_label(t, c.index),
            state_word(c.integrity),
            state_word(c.currency),
            plain(str(n) if n else ""),
            tags(f"claim:{c.index + 1}", c.passage_ids),
            safe_line(ids, limit=30),
            span,
            key=f"c{c.index}",
        )
    for p in data.uncited(t):
        table.add_row(
            plain("—"),
            state_word(p.effective_integrity),
            state_word(p.effective_currency),
            plain(""),
            tags(None, [p.passage_id]),
            safe_line(p.passage_id, limit=30),
            plain("retrieved, not cited", "italic"),
            key=f"p{p.index}",
        )


class AnswerScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        EVIDENCE,
        Binding("l", "lineage", "Lineage", id="tracer.lineage", tooltip="What this text was derived from"),
        Binding(
            "T",
            "timeline",
            "Timeline",
            id="tracer.answer_timeline",
            tooltip="The cited document's revisions in commit order, with the answers citing it",
        ),
        Binding(
            "n",
            "add_note",
            "Note",
            id="tracer.add_note",
            tooltip="Sign and append an investigator note on this claim",
        ),
        Binding(
            "g",
            "tag",
            "Tag",
            id="tracer.tag",
            tooltip="Tag the selected claim (or retrieved passage), signed, in the selected case",
        ),
        *export.EXPORT_BINDINGS,
        HOLD,
        RELEASE,
        COPY_ID,
        Binding(
            "G",
            "tag_answer",
            "Tag answer",
            id="tracer.tag_answer",
            tooltip="Tag the whole answer, signed, in the selected case",
        ),
    ]
    #: at 80 columns these stay on the footer with ? v q (the rest: `?` and the palette)
    FOOTER_FIRST = ("open_citation", "back", "hold", "release", "add_note", "lineage", "export", "copy_id")

    @dataclass
    class Loaded(Message):
        opened: Opened

    @dataclass
    class HoldsChanged(Message):
        holds: list[HoldView]
        said: str = ""

    @dataclass
    class TagsChanged(Message):
        tags: list[Tag]
        said: str = ""

    @dataclass
    class NotesChanged(Message):
        rows: list[NoteRow]
        announce: bool = True

    def __init__(self, answer_id: str):
        super().__init__()
        self.answer_id = answer_id
        self.data = AnswerData(answer_id)

    @property
    def trace(self) -> AnswerTrace | None:
        return self.data.trace

    @property
    def holds(self) -> list[HoldView]:
        return self.data.holds

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(plain("tracing…"), id="answer-head")
        # the claims come right under the header, outside the scrolling body, and take
        # what height they need up to a share of the screen: at 80×24 every claim is on
        # the first screen, and the texts they cite scroll below them (Tab goes there)
        label = plain("Claims: Enter opens the evidence · Tab: the texts below", "bold")
        yield Static(label, id="claims-label")
        yield _claims_table()
        yield VerticalScroll(id="answer-body")
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self._load()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in _NEEDS_TRACE:
            if self.trace is None:
                return None  # still tracing: shown, dimmed
            return self.trace.visible
        return True

    def on_screen_resume(self) -> None:
        """Notes may have been added on the evidence screen: show them here too."""
        self.refresh_notes()

    def refresh_notes(self) -> None:
        """Reread the notes (on resume, and after any append: a note signed on the evidence
        screen may land after the investigator has already come back here)."""
        if self.data.visible:
            self._reload_notes()

    @work(thread=True, exclusive=True, group="notes-reload")
    def _reload_notes(self) -> None:
        try:
            rows = self.data.read_notes(self.engine)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("notes", str(exc)))
            return
        self.post_message(self.NotesChanged(rows, announce=False))

    @work(thread=True, exclusive=True, group="trace")
    def _load(self) -> None:
        try:
            opened = self.data.open(self.engine)
        except UnknownAnswerError:
            self.post_message(Failed("trace", f"no answer {self.answer_id!r} in this vault"))
            return
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("trace", str(exc)))
            return
        self.app.post_message(Recorded())
        self.post_message(self.Loaded(opened))

    async def on_answer_screen_loaded(self, message: Loaded) -> None:
        t = self.data.took_opened(message.opened)
        body = self.query_one("#answer-body", VerticalScroll)
        await body.remove_children()
        await body.mount_all(_body(t, self.holds))
        self.refresh_bindings()
        for claims in (self.query_one("#claims-label"), self.query_one("#citations")):
            claims.display = t.visible
        if t.visible:
            self._fill_citations(t)
            self.query_one("#citations", DataTable).focus()
        # last: "states computed" is on screen only once the claims are there, focused, so
        # the keys typed after reading it reach the table (not the body still being built)
        self.show_head()

    def show_head(self) -> None:
        """The header, with the checkpoint the bar shows now if appends came since."""
        if self.trace is not None:
            now = self.engine.session.status.checkpoint_size
            head = answer_head(self.trace, now, self.data.answer_tags(), self.holds)
            self.query_one("#answer-head", Static).update(head)

    def on_failed(self, message: Failed) -> None:
        super().on_failed(message)
        if self.trace is None:
            self.query_one("#answer-head", Static).update(
                Text.assemble(plain(f"{message.what} failed: ", "bold"), safe_line(message.error))
            )

    def _fill_citations(self, t: AnswerTrace) -> None:
        _fill_claims(self.query_one("#citations", DataTable), t, self.data)
        self._show_notes()

    def on_answer_screen_tags_changed(self, message: TagsChanged) -> None:
        self.data.took_tags(message.tags)
        self._refill_claims()
        self.show_head()
        self.say(message.said)

    def _refill_claims(self) -> None:
        """Redraw the claims table (its tags and notes columns) on the same row."""
        table = self.query_one("#citations", DataTable)
        row = table.cursor_row
        if self.trace is not None:
            self._fill_citations(self.trace)
        table.move_cursor(row=row, animate=False)

    def action_tag(self) -> None:
        from tracer.tui.case_actions import start_tag

        start_tag(self)

    def action_tag_answer(self) -> None:
        from tracer.tui.case_actions import start_tag

        start_tag(self, whole_answer=True)

    def _show_notes(self) -> None:
        self.query_one("#claim-notes", Static).update(
            notes_text(self.data.notes, "Investigator notes on this answer", self.data.names)
        )

    def selected(self, key: str | None = None) -> Selection | None:
        """The row `key`, or the highlighted row."""
        if key is None and self.data.visible:
            key = row_key(self.query_one("#citations", DataTable))
        return self.data.selection(key)

    def copy_target(self) -> tuple[str, str] | None:
        """The highlighted claim's passage ids (a passage row: its id), or the answer's."""
        if not self.data.visible:
            return None
        return self.data.copy_target(row_key(self.query_one("#citations", DataTable)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter (or a click) on a row: the row the event names, not wherever the cursor
        is by the time the event is handled."""
        event.stop()
        if event.row_key.value is not None:
            self._open_citation(str(event.row_key.value))

    def action_open_citation(self) -> None:
        self._open_citation()

    def _open_citation(self, key: str | None = None) -> None:
        sel = self.selected(key)
        if sel is not None and self.trace is not None:
            self.app.push_screen(EvidenceScreen(self.trace, sel.heading, sel.passages, self.holds))

    def action_timeline(self) -> None:
        t = self.trace
        chosen = self.selected()
        passages = chosen.passages if chosen is not None else (t.passages if t is not None else [])
        from tracer.tui.screens.timeline import TimelineScreen, timeline_document

        doc = timeline_document(passages)
        if doc is not None:
            self.app.push_screen(TimelineScreen(doc))

    def action_lineage(self) -> None:
        if self.trace is not None and self.trace.visible:
            self.app.push_screen(LineageScreen(self.trace))

    def action_add_note(self) -> None:
        sel = self.selected()
        if sel is None:
            return
        target = sel.target
        title = Text.assemble(
            plain("Investigator note on "), safe_line(target), plain(" (signed with your key, appended)")
        )
        self.app.push_screen(
            PromptScreen(title, placeholder="e.g. production exception omitted from the answer"),
            lambda note: self._add_note(target, note),
        )

    def _add_note(self, target: str, note: str | None) -> None:
        if note and note.strip():
            self._append_note(target, note.strip())

    @work(thread=True, exclusive=True, group="note")
    def _append_note(self, target: str, note: str) -> None:
        try:
            rows = self.data.append_note(self.engine, self.tracer_app.case_id, target, note)
        except Exception as exc:  # e.g. read-only vault: said plainly
            self.post_message(Failed("note", str(exc)))
            return
        self.app.post_message(Recorded())
        self.post_message(self.NotesChanged(rows))

    def on_answer_screen_notes_changed(self, message: NotesChanged) -> None:
        if not self.data.took_notes(message.rows, message.announce):
            return
        self._refill_claims()
        if message.announce:
            self.notify("note signed and appended to the log", markup=False)

    def action_export(self) -> None:
        if self.trace is not None and self.trace.visible:
            export.start_export(self, self.answer_id)

    def hold_subjects(self) -> list[HoldSubject]:
        """The answer, then the documents of the highlighted claim (or passage)."""
        return self.data.hold_subjects(self.selected())

    def action_hold(self) -> None:
        start_hold(self, self.hold_subjects(), self._reload_holds)

    def action_release(self) -> None:
        start_release(self, self.holds, self._reload_holds)

    @work(thread=True, exclusive=True, group="holds-reload")
    def _reload_holds(self, said: str = "") -> None:
        try:
            holds = self.data.read_holds(self.engine)
        except Exception as exc:
            self.post_message(reload_failed("holds", exc, said))
            return
        self.post_message(self.HoldsChanged(holds, said))

    async def on_answer_screen_holds_changed(self, message: HoldsChanged) -> None:
        self.data.took_holds(message.holds)
        body = self.query_one("#answer-body", VerticalScroll)
        for old in body.query("#answer-holds"):
            await old.remove()
        if self.holds:
            await body.mount(HoldNotice(self.holds, id="answer-holds"), before=0)
        self.show_head()
        self.say(message.said)
