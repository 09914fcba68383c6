"""The case file: pick the case you work on, open one, and read and write its notes.

The list shows every case you can see (`tracer.engine.case`: a case whose opener
could read more than you is not shown, not even counted).  Enter selects a case: from
then on tags (key `T` on an answer) and notes belong to it, the status bar names it,
and the selection itself is a signed access entry under the case.  The lower pane is
the selected case in log order: its notes in full (multi-line), its tags, holds and
conclusion, every string drawn inert.
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
from textual.widgets import DataTable, Static

from store.casefile import CaseRecord, case_id_problem
from tracer.engine.case import CaseDesk, CaseView
from tracer.tui.case_export import start_case_export
from tracer.tui.hold_actions import HoldSubject, start_hold, start_release
from tracer.tui.messages import Failed, Recorded, reload_failed
from tracer.tui.screens.base import BACK, HOLD, RELEASE, TracerScreen
from tracer.tui.screens.note_editor import NoteEditor
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import plain, safe_line
from tracer.tui.widgets.hold import case_part, reason_part, release_reason_part
from tracer.tui.widgets.pick_table import PickTable

__all__ = ["CasesScreen", "case_text"]


def _lines(text: str) -> Text:
    """A multi-line signed text, each line inert, on its own line and indented."""
    out = Text()
    for line in text.split("\n"):
        out.append("\n   ")
        out.append_text(safe_line(line))
    return out


def _notes_part(v: CaseView) -> Text:
    out = Text()
    out.append(f"\n\nNotes ({len(v.notes)}), oldest first\n", style="bold")
    for n in v.notes:
        about = f" on {n.answer_id}" if n.answer_id else ""
        out.append_text(plain(f"— {n.at} (entry {n.seq}) "))
        out.append_text(safe_line(v.person(n.investigator).label() + about))
        out.append_text(_lines(n.text))
        out.append("\n")
    return out


def _holds_part(v: CaseView) -> Text:
    out = Text()
    out.append(f"\nLegal holds ({len(v.holds)})\n", style="bold")
    for h in v.holds:
        state = "IN FORCE" if h.hold.in_force else "released"
        out.append(f"{state} ", style="bold")
        out.append_text(safe_line(f"{h.hold.subject_kind} {h.hold.subject}: "))
        out.append_text(reason_part(h))  # the engine's words, marked, when withheld
        out.append_text(Text.assemble(plain(" ("), safe_line(h.signer.label()), plain(")")))
        out.append_text(case_part(h))
        if h.hold.release is not None and h.released_by is not None:
            out.append_text(
                Text.assemble(plain("; released by "), safe_line(h.released_by.label()), plain(": "))
            )
            out.append_text(release_reason_part(h))
        out.append("\n")
    return out


def case_text(v: CaseView) -> Text:
    """One case as the lower pane shows it; every untrusted string through `safe_line`."""
    r = v.record
    out = Text.assemble(
        plain("Case ", "bold"),
        safe_line(r.case_id),
        plain(": ", "bold"),
        safe_line(r.title),
        plain(f"\nopened {r.opened_at} by "),
        safe_line(v.opened_by.label()),
        plain("\npurpose:"),
    )
    out.append_text(_lines(r.purpose))  # wrapped and on its lines, as the notes are
    out.append_text(_notes_part(v))
    out.append(f"\nTags ({len(v.tags)})\n", style="bold")
    for t in v.tags:
        out.append_text(safe_line(f"{t.tag}  {t.answer_id} {t.target}  by {v.person(t.investigator).name}"))
        out.append("\n")
    out.append_text(_holds_part(v))
    out.append("\nConclusion\n", style="bold")
    if v.conclusion is None:
        out.append("none signed yet\n")
    else:
        for line in v.conclusion.text.split("\n"):
            out.append_text(safe_line(line))
            out.append("\n")
    return out


#: not priority: Enter on the cases is the table's own (`PickTable`), after the arrows
SELECT_CASE = Binding(
    "enter",
    "select",
    "Select case",
    id="tracer.case_select",
    tooltip="Work on this case: tags and notes belong to it from now on",
)


class CasesTable(PickTable):
    """One row per case the viewer can see; Enter works on the row's case."""

    PICKS = SELECT_CASE


class CasesScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        SELECT_CASE,
        # short words: at 80 columns every case key and ?, v, q fit (the tooltips say more)
        Binding("o", "open_case", "New", id="tracer.case_open", tooltip="Open a new case (signed)"),
        Binding(
            "n",
            "note",
            "Note",
            id="tracer.case_note",
            tooltip="Write a signed, multi-line note in the selected case",
        ),
        Binding("x", "clear", "No case", id="tracer.case_clear", tooltip="Work without a case"),
        Binding(
            "E",
            "export_case",
            "Export",
            id="tracer.case_export",
            tooltip="Write the signed case pack (cover page, verification, every answer, notes, holds)",
        ),
        HOLD,
        RELEASE,
    ]
    FOOTER_FIRST = ("select", "back", "hold", "release", "open_case", "note")

    @dataclass
    class Loaded(Message):
        cases: list[CaseRecord]
        view: CaseView | None
        names: dict[str, str]
        said: str = ""

    def __init__(self) -> None:
        super().__init__()
        self.cases: list[CaseRecord] = []
        #: the selected case as this viewer sees it (None: no case selected)
        self.view: CaseView | None = None

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(plain("Cases you can see (Enter selects, o opens a new one)", "bold"), id="cases-head")
        table = CasesTable(id="cases", cursor_type="row")
        # what names the case first: at 80 columns the title is whole, the time goes past
        # the edge first (the pane below repeats it)
        for col in ("case", "title", "by", "opened"):
            table.add_column(col, key=col)
        yield table
        with VerticalScroll(id="case-pane"):
            yield Static(plain("no case selected"), id="case-detail")
        yield from self.frame_bottom()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self._load()

    @property
    def current(self) -> str | None:
        return self.tracer_app.case_id

    @work(thread=True, exclusive=True, group="cases")
    def _load(self, said: str = "") -> None:
        try:
            with self.engine.use() as s:
                desk = CaseDesk(s)
                cases = desk.cases()
                view = desk.view(self.current) if self.current in {c.case_id for c in cases} else None
                names = {c.opened_by: desk.person(c.opened_by).name for c in cases}
        except Exception as exc:  # shown, never a crash
            self.post_message(reload_failed("cases", exc, said))
            return
        self.post_message(self.Loaded(cases, view, names, said))

    def on_cases_screen_loaded(self, message: Loaded) -> None:
        self.cases = message.cases
        self.view = message.view
        table = self.query_one("#cases", DataTable)
        table.clear()
        names = message.names
        for c in self.cases:
            mark = "▶ " if c.case_id == self.current else "  "
            table.add_row(
                Text.assemble(plain(mark), safe_line(c.case_id)),
                safe_line(c.title, limit=60),
                safe_line(names[c.opened_by]),
                plain(c.opened_at),
                key=c.case_id,
            )
        detail = self.query_one("#case-detail", Static)
        detail.update(case_text(message.view) if message.view is not None else plain("no case selected"))
        table.focus()
        self.say(message.said)

    def _row_case(self) -> str | None:
        table = self.query_one("#cases", DataTable)
        if not self.cases or not table.row_count:
            return None
        return self.cases[table.cursor_row].case_id

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_select()

    def action_select(self) -> None:
        case_id = self._row_case()
        if case_id is not None:
            self._select(case_id)

    @work(thread=True, exclusive=True, group="case-write")
    def _select(self, case_id: str) -> None:
        try:
            with self.engine.use() as s:
                CaseDesk(s).record(case_id, "case_select", case_id)
        except Exception as exc:
            self.post_message(Failed("case", str(exc)))
            return
        self.app.call_from_thread(self._selected, case_id)

    def _selected(self, case_id: str) -> None:
        self.tracer_app.case_id = case_id
        self.app.post_message(Recorded())
        self.notify(f"working on case {safe_line(case_id).plain}", markup=False)
        self._load()

    def action_hold(self) -> None:
        """A hold on one of the selected case's answers, placed under the case."""
        v = self.view
        if v is None:
            self.notify(
                "select a case first (Enter): a hold from here is on one of its answers", markup=False
            )
            return
        subjects = [HoldSubject("answer", aid, f"answer {aid}") for aid in v.answer_ids()]
        start_hold(self, subjects, self._load)

    def action_release(self) -> None:
        v = self.view
        if v is None:
            self.notify("select a case first (Enter): its holds are listed below it", markup=False)
            return
        start_release(self, v.holds, self._load)

    def action_clear(self) -> None:
        self.tracer_app.case_id = None
        with self.engine.use() as s:
            s.case_id = None  # what the session records from now on belongs to no case
        self.app.post_message(Recorded())
        self._load()

    def action_open_case(self) -> None:
        self.app.push_screen(
            PromptScreen(plain("New case id (A-Z a-z 0-9 . _ -)"), placeholder="INC-4711"), self._got_id
        )

    def _got_id(self, case_id: str | None) -> None:
        if case_id and case_id.strip():
            cid = case_id.strip()
            # checked now, before a title and a purpose are typed and then lost
            problem = case_id_problem(cid)
            if problem is None and cid in {c.case_id for c in self.cases}:
                problem = f"case {cid!r} already exists: choose another id"
            if problem is not None:
                self.notify(f"case id: {safe_line(problem).plain}", severity="error", markup=False)
                self.app.push_screen(
                    PromptScreen(plain("New case id (A-Z a-z 0-9 . _ -)"), cid, placeholder="INC-4711"),
                    self._got_id,
                )
                return
            self.app.push_screen(
                PromptScreen(plain("Title of the case"), placeholder="Payments restart during settlement"),
                lambda title: self._got_title(cid, title),
            )

    def _got_title(self, case_id: str, title: str | None) -> None:
        if title and title.strip():
            self.app.push_screen(
                NoteEditor(plain("Purpose of the case: why it was opened, what it must establish")),
                lambda purpose: self._open(case_id, title.strip(), purpose),
            )

    def _open(self, case_id: str, title: str, purpose: str | None) -> None:
        if purpose and purpose.strip():
            self._append_open(case_id, title, purpose.strip())

    @work(thread=True, exclusive=True, group="case-write")
    def _append_open(self, case_id: str, title: str, purpose: str) -> None:
        try:
            with self.engine.use() as s:
                desk = CaseDesk(s)
                desk.open_case(case_id, title, purpose)
                desk.record(case_id, "case_select", case_id)
        except Exception as exc:
            self.post_message(Failed("case", str(exc)))
            return
        self.app.call_from_thread(self._selected, case_id)

    def action_export_case(self) -> None:
        """Three questions, as `tracer export --case` has three options: which of the case's
        answers (`--tag`, empty for all), why (`--why`, optional), and where."""
        case_id = self.current or self._row_case()
        if case_id is None:
            self.notify("no case to export", markup=False)
            return
        start_case_export(self, case_id)

    def action_note(self) -> None:
        case_id = self.current
        if case_id is None:
            self.notify("select a case first (Enter on it)", markup=False)
            return
        title = Text.assemble(plain("Note in case "), safe_line(case_id), plain(" (signed with your key)"))
        self.app.push_screen(NoteEditor(title), lambda text: self._note(case_id, text))

    def _note(self, case_id: str, text: str | None) -> None:
        if text and text.strip():
            self._append_note(case_id, text.strip("\n"))

    @work(thread=True, exclusive=True, group="case-write")
    def _append_note(self, case_id: str, text: str) -> None:
        try:
            with self.engine.use() as s:
                CaseDesk(s).note(case_id, text)
        except Exception as exc:
            self.post_message(Failed("note", str(exc)))
            return
        self.app.post_message(Recorded())
        self.app.call_from_thread(self._load)
