"""The evidence behind one claim: retained passages, their chain, and what the source says now.

Historical text comes only through `HistoricalText` (verified text, tombstone, or
alarm).  For moved/stale/ambiguous the current excerpt sits beside it in its own pane
titled "Current revision R (date)", with the differences marked in both.  Opening this
screen writes an `open_passage` access entry for each passage shown.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from store import queries
from tracer.engine.trace import AnswerTrace, PassageTrace
from tracer.tui.findings_view import passage_target
from tracer.tui.messages import Failed, Recorded
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import plain, safe_line
from tracer.tui.widgets.passage import PassageView

__all__ = ["EvidenceScreen"]


class EvidenceScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        Binding(
            "f",
            "add_finding",
            "Add finding",
            id="tracer.add_passage_finding",
            tooltip="Note a finding on this passage",
        ),
    ]

    def __init__(self, trace: AnswerTrace, heading: str, passages: list[PassageTrace]):
        super().__init__()
        self.trace = trace
        self.heading = heading
        self.passages = passages

    def compose(self) -> ComposeResult:
        t = self.trace
        yield from self.frame_top()
        with VerticalScroll(id="evidence"):
            yield Static(
                Text.assemble(
                    plain(f"Evidence for {self.heading} of answer "), safe_line(t.answer_id, "bold")
                ),
                id="evidence-head",
            )
            for p in self.passages:
                yield PassageView(p)
            if not self.passages:
                yield Static(
                    plain("UNSUPPORTED: this claim names no passage in the manifest", "bold reverse")
                )
            yield Static(self._run_context(t), id="run-context")
        yield from self.frame_bottom()

    @staticmethod
    def _run_context(t: AnswerTrace) -> Text:
        if not t.visible:
            return plain("")
        rt, az = t.runtime, t.authorization
        return Text.assemble(
            plain("Runtime context  ", "bold"),
            plain("model "),
            safe_line(str(rt.get("model"))),
            plain("  prompt "),
            safe_line(str(rt.get("prompt_template_version"))),
            plain("  pipeline "),
            safe_line(str(rt.get("pipeline_version"))),
            plain("  parameters "),
            safe_line(str(rt.get("parameters"))),
            plain("\nAuthorization at run time — data, not a grant  ", "bold"),
            plain("principal "),
            safe_line(str(az.get("principal"))),
            plain("  policy "),
            safe_line(str(az.get("policy_version"))),
            plain("  decision "),
            safe_line(str(az.get("decision"))),
        )

    def on_mount(self) -> None:
        self._record([p.passage_id for p in self.passages if p.visible])

    @work(thread=True, exclusive=True, group="record")
    def _record(self, passage_ids: list[str]) -> None:
        try:
            with self.engine.use() as s:
                for pid in passage_ids:
                    s.record("open_passage", f"{self.trace.answer_id}/{pid}")
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("access record", str(exc)))
            return
        self.app.post_message(Recorded())

    def _focused_passage(self) -> PassageTrace | None:
        node: Widget | None = self.focused
        while node is not None:
            if isinstance(node, PassageView):
                return node.passage
            node = node.parent if isinstance(node.parent, Widget) else None
        return next((p for p in self.passages if p.visible), None)

    def action_add_finding(self) -> None:
        p = self._focused_passage()
        if p is None:
            return
        target = passage_target(p.passage_id)
        title = Text.assemble(plain("Finding on "), safe_line(target), plain(" (signed with your key)"))
        self.app.push_screen(PromptScreen(title), lambda note: self._add(target, note))

    def _add(self, target: str, note: str | None) -> None:
        if note and note.strip():
            self._append(target, note.strip())

    @work(thread=True, exclusive=True, group="finding")
    def _append(self, target: str, note: str) -> None:
        try:
            with self.engine.use() as s:
                s.add_finding(self.trace.answer_id, target, note)
                n = len(queries.finding_rows(s.vault, self.trace.answer_id))
        except Exception as exc:  # e.g. read-only vault: said plainly
            self.post_message(Failed("finding", str(exc)))
            return
        self.app.post_message(Recorded())
        self.notify(f"finding appended ({n} on this answer)", markup=False)
