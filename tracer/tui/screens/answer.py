"""One answer: the stored text with numbered cited spans, and every claim's two states.

Enter on a claim opens its evidence; Escape there pops back here, and Textual restores
focus and cursor to the same claim, so the reader never loses their place.  Opening
the answer writes the engine's `open_answer` access entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from store import queries
from tracer.engine.trace import AnswerTrace, PassageTrace, Tracer
from tracer.tui import export
from tracer.tui.findings_view import FindingRow, citation_target, findings_text
from tracer.tui.messages import Failed, Recorded
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.lineage import LineageScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import hidden_note, plain, safe_line, state_word
from tracer.tui.widgets.answer_head import answer_head
from tracer.tui.widgets.answer_text import answer_with_citations
from tracer.tui.widgets.historical import HistoricalText, digest_line

__all__ = ["AnswerScreen"]

_EXPORT_BINDING = Binding(
    "e", "export", "Export", id="tracer.export", tooltip="Export this answer's report pack"
)


class AnswerScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        Binding(
            "enter",
            "open_citation",
            "Evidence",
            id="tracer.evidence",
            tooltip="Open this claim's evidence",
            priority=True,
        ),
        Binding("l", "lineage", "Lineage", id="tracer.lineage", tooltip="What this text was derived from"),
        Binding(
            "f", "add_finding", "Add finding", id="tracer.add_finding", tooltip="Note a finding on this claim"
        ),
        *([_EXPORT_BINDING] if export.available() else []),
    ]

    @dataclass
    class Loaded(Message):
        trace: AnswerTrace

    @dataclass
    class FindingsChanged(Message):
        rows: list[FindingRow]
        announce: bool = True

    def __init__(self, answer_id: str):
        super().__init__()
        self.answer_id = answer_id
        self.trace: AnswerTrace | None = None
        self.findings: list[FindingRow] = []

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield VerticalScroll(Static(plain("tracing…"), id="answer-loading"), id="answer-body")
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self._load()

    def on_screen_resume(self) -> None:
        """Findings may have been added on the evidence screen: show them here too."""
        if self.trace is not None and self.trace.visible:
            self._reload_findings()

    @work(thread=True, exclusive=True, group="findings-reload")
    def _reload_findings(self) -> None:
        try:
            with self.engine.use() as s:
                rows = queries.finding_rows(s.vault, self.answer_id)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("findings", str(exc)))
            return
        self.post_message(self.FindingsChanged(rows, announce=False))

    @work(thread=True, exclusive=True, group="trace")
    def _load(self) -> None:
        try:
            with self.engine.use() as s:
                t = Tracer(s).trace(self.answer_id)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("trace", str(exc)))
            return
        self.app.post_message(Recorded())
        self.post_message(self.Loaded(t))

    async def on_answer_screen_loaded(self, message: Loaded) -> None:
        t = self.trace = message.trace
        self.findings = list(t.findings)
        body = self.query_one("#answer-body", VerticalScroll)
        await body.remove_children()
        await body.mount_all(self._widgets(t))
        if t.visible:
            self._fill_citations(t)
            self.query_one("#citations", DataTable).focus()

    def _widgets(self, t: AnswerTrace) -> list[Widget]:
        out: list[Widget] = [Static(answer_head(t), id="answer-head")]
        if not t.visible:
            out.append(Static(plain("UNAVAILABLE: this answer is outside your scope", "bold reverse")))
            return out
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
        table: DataTable[Text] = DataTable(id="citations", cursor_type="row")
        for col in ("claim", "cited span", "integrity", "currency", "passages", "findings"):
            table.add_column(col, key=col)
        out.append(Static(plain("Claims: Enter opens the evidence", "bold")))
        out.append(table)
        out.append(Static(id="claim-findings"))
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

    def _uncited(self, t: AnswerTrace) -> list[PassageTrace]:
        cited = {p.passage_id for c in t.citations for p in c.passages}
        return [p for p in t.passages if p.passage_id not in cited]

    def _fill_citations(self, t: AnswerTrace) -> None:
        table = self.query_one("#citations", DataTable)
        table.clear()
        for c in t.citations:
            n = sum(1 for f in self.findings if f[3] == citation_target(c.index))
            span = safe_line(c.span, limit=60) if c.span is not None else plain("(span not available)")
            ids = ", ".join(c.passage_ids) + (" UNSUPPORTED" if c.unknown_passages else "")
            table.add_row(
                plain(f"[{c.index + 1}]"),
                span,
                state_word(c.integrity),
                state_word(c.currency),
                safe_line(ids, limit=30),
                plain(str(n) if n else ""),
                key=f"c{c.index}",
            )
        for p in self._uncited(t):
            table.add_row(
                plain("—"),
                plain("retrieved, not cited", "italic"),
                state_word(p.effective_integrity),
                state_word(p.effective_currency),
                safe_line(p.passage_id, limit=30),
                plain(""),
                key=f"p{p.index}",
            )
        self._show_findings()

    def _show_findings(self) -> None:
        self.query_one("#claim-findings", Static).update(
            findings_text(self.findings, "Findings on this answer")
        )

    def _selected(self) -> tuple[str, list[PassageTrace], str] | None:
        """(heading, passages, finding target) of the highlighted row."""
        t = self.trace
        if t is None or not t.visible:
            return None
        table = self.query_one("#citations", DataTable)
        if not table.row_count:
            return None
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        idx = int(key[1:])
        if key.startswith("c"):
            c = t.citations[idx]
            return f"claim [{idx + 1}]", c.passages, citation_target(idx)
        p = t.passages[idx]
        return "retrieved, not cited", [p], f"passage {p.passage_id}"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_citation()

    def action_open_citation(self) -> None:
        sel = self._selected()
        if sel is not None and self.trace is not None:
            heading, passages, _target = sel
            self.app.push_screen(EvidenceScreen(self.trace, heading, passages))

    def action_lineage(self) -> None:
        if self.trace is not None:
            self.app.push_screen(LineageScreen(self.trace))

    def action_add_finding(self) -> None:
        sel = self._selected()
        if sel is None:
            return
        target = sel[2]
        title = Text.assemble(plain("Finding on "), safe_line(target), plain(" (signed with your key)"))
        self.app.push_screen(
            PromptScreen(title, placeholder="e.g. production exception omitted from the answer"),
            lambda note: self._add_finding(target, note),
        )

    def _add_finding(self, target: str, note: str | None) -> None:
        if note and note.strip():
            self._append_finding(target, note.strip())

    @work(thread=True, exclusive=True, group="finding")
    def _append_finding(self, target: str, note: str) -> None:
        try:
            with self.engine.use() as s:
                s.add_finding(self.answer_id, target, note)
                rows = queries.finding_rows(s.vault, self.answer_id)
        except Exception as exc:  # e.g. read-only vault: said plainly
            self.post_message(Failed("finding", str(exc)))
            return
        self.app.post_message(Recorded())
        self.post_message(self.FindingsChanged(rows))

    def on_answer_screen_findings_changed(self, message: FindingsChanged) -> None:
        if message.rows == self.findings and not message.announce:
            return
        self.findings = message.rows
        table = self.query_one("#citations", DataTable)
        row = table.cursor_row
        if self.trace is not None:
            self._fill_citations(self.trace)
        table.move_cursor(row=row, animate=False)
        if message.announce:
            self.notify("finding appended to the log", markup=False)

    def action_export(self) -> None:
        title = plain("Export this answer's report into directory:")
        default = "tracer-report-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in self.answer_id)
        self.app.push_screen(PromptScreen(title, default), self._export_to)

    def _export_to(self, out: str | None) -> None:
        if out:
            self._export(Path(out))

    @work(thread=True, exclusive=True, group="export")
    def _export(self, out: Path) -> None:
        try:
            with self.engine.use() as s:
                pack = export.export_answer(s, self.answer_id, out)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("export", str(exc)))
            return
        self.app.post_message(Recorded())
        self.notify(f"report pack written to {pack}", markup=False)
