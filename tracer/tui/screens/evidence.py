"""The evidence behind one claim: retained passages, their chain, and what the source says now.

Historical text comes only through `HistoricalText` (verified text, tombstone, or
alarm).  For moved/stale/ambiguous the current excerpt sits beside it in its own pane
titled "Current revision R (date)", with the differences marked in both; when the
current revision's text is purged or unreadable, that pane holds its tombstone card or
alarm instead.  Opening this screen writes an `open_passage` access entry for each
passage shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from store import queries
from tracer.engine.case import CaseDesk, HoldView
from tracer.engine.evidence import TextResult
from tracer.engine.trace import AnswerTrace, PassageTrace
from tracer.tui import export
from tracer.tui.hold_actions import HoldSubject, start_hold, start_release
from tracer.tui.messages import Failed, Recorded, reload_failed
from tracer.tui.notes_view import passage_target
from tracer.tui.screens.base import BACK, COPY_ID, HOLD, RELEASE, TracerScreen
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import plain, safe_line
from tracer.tui.widgets.answer_head import alerts, passage_texts
from tracer.tui.widgets.answer_time import AnswerTimePane
from tracer.tui.widgets.hold import HoldNotice
from tracer.tui.widgets.imported import imported_run_context
from tracer.tui.widgets.passage import PassageView, needs_current_content

__all__ = ["EvidenceScreen"]


class EvidenceScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        Binding(
            "n",
            "add_note",
            "Note",
            id="tracer.add_passage_note",
            tooltip="Sign and append an investigator note on this passage",
        ),
        Binding(
            "T",
            "timeline",
            "Timeline",
            id="tracer.evidence_timeline",
            tooltip="This passage's document: revisions in commit order, with the answers citing it",
        ),
        *export.EXPORT_BINDINGS,
        HOLD,
        RELEASE,
        COPY_ID,
    ]
    FOOTER_FIRST = ("back", "hold", "release", "add_note", "timeline", "export", "copy_id")

    @dataclass
    class HoldsChanged(Message):
        holds: list[HoldView]
        said: str = ""

    @dataclass
    class CurrentContent(Message):
        """Verdicts of current revisions whose text is gone, by passage index."""

        results: dict[int, TextResult]

    def __init__(
        self,
        trace: AnswerTrace,
        heading: str,
        passages: list[PassageTrace],
        holds: Sequence[HoldView] = (),
    ):
        super().__init__()
        self.trace = trace
        self.heading = heading
        self.passages = passages
        #: legal holds in force over this answer's evidence (shown above it)
        self.holds = list(holds)

    def compose(self) -> ComposeResult:
        t = self.trace
        yield from self.frame_top()
        # above the scrolling body, not in it: however far the passages are scrolled, the
        # screen still says whose evidence this is
        yield Static(self._head(), id="evidence-head")
        with VerticalScroll(id="evidence"):
            if self.holds:
                yield HoldNotice(self.holds, id="evidence-holds")
            for p in self.passages:
                yield PassageView(p)
                yield AnswerTimePane(p)
            if not self.passages:
                yield Static(
                    plain("UNSUPPORTED: this claim names no passage in the manifest", "bold reverse")
                )
            yield Static(self._run_context(t), id="run-context")
        yield from self.frame_bottom()

    def _head(self) -> Text:
        """Whose evidence this is, then any hold, tombstone or alarm over it: never scrolled away."""
        t = self.trace
        if self.heading == "retrieved, not cited" and len(self.passages) == 1:
            what = Text.assemble(
                plain("passage "), safe_line(self.passages[0].passage_id), plain(" (retrieved, not cited)")
            )
        else:
            what = plain(self.heading)
        out = Text.assemble(
            plain("Evidence for "), what, plain(" of answer "), safe_line(t.answer_id, "bold")
        )
        found = alerts(passage_texts(self.passages), self.holds)
        if found is not None:
            out.append("\n")
            out.append_text(found)
        return out

    def hold_subjects(self) -> list[HoldSubject]:
        """Each passage's retained text (by digest) and document, then the whole answer."""
        out: list[HoldSubject] = []
        for p in self.passages:
            if not p.visible:
                continue
            out.append(
                HoldSubject(
                    "digest",
                    p.retrieved.digest,
                    f"the retrieved text of passage {p.passage_id} ({p.retrieved.digest})",
                )
            )
            doc = p.document_id
            if doc is not None and all(s.id != doc for s in out):
                out.append(
                    HoldSubject("document", doc, f"document {doc} (every revision, every passage quoted)")
                )
        aid = self.trace.answer_id
        out.append(HoldSubject("answer", aid, f"the answer {aid} (its texts, passages, revisions)"))
        return out

    def action_hold(self) -> None:
        start_hold(self, self.hold_subjects(), self._reload_holds)

    def action_release(self) -> None:
        start_release(self, self.holds, self._reload_holds)

    @work(thread=True, exclusive=True, group="holds-reload")
    def _reload_holds(self, said: str = "") -> None:
        try:
            with self.engine.use() as s:
                holds = CaseDesk(s).holds_on_answer(self.trace.answer_id)
        except Exception as exc:
            self.post_message(reload_failed("holds", exc, said))
            return
        self.post_message(self.HoldsChanged(holds, said))

    async def on_evidence_screen_holds_changed(self, message: HoldsChanged) -> None:
        self.holds = message.holds
        self.query_one("#evidence-head", Static).update(self._head())
        body = self.query_one("#evidence", VerticalScroll)
        for old in body.query("#evidence-holds"):
            await old.remove()
        if self.holds:
            await body.mount(HoldNotice(self.holds, id="evidence-holds"), before=0)
        self.say(message.said)

    @staticmethod
    def _run_context(t: AnswerTrace) -> Text:
        if not t.visible:
            return plain("")
        if t.imported is not None:  # no producer signed a runtime: each fact with its state
            return imported_run_context(t)
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

    def action_timeline(self) -> None:
        from tracer.tui.screens.timeline import TimelineScreen, timeline_document

        doc = timeline_document(self.passages)
        if doc is not None:
            self.app.push_screen(TimelineScreen(doc))

    def on_mount(self) -> None:
        # the page itself has focus, so Down / PageDown scroll it (not a chain tree's cursor)
        self.query_one("#evidence", VerticalScroll).focus()
        self._record([p.passage_id for p in self.passages if p.visible])
        wanted = [p for p in self.passages if needs_current_content(p)]
        if wanted:
            self._current_content(wanted)

    @work(thread=True, exclusive=True, group="current-content")
    def _current_content(self, passages: list[PassageTrace]) -> None:
        """The engine's verdict on each current revision's content (a purge: its tombstone)."""
        out: dict[int, TextResult] = {}
        try:
            with self.engine.use() as s:
                for p in passages:
                    cur = p.currency.current
                    if cur is not None:
                        out[p.index] = s.text(cur.content_sha256, cur.collection)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("current revision", str(exc)))
            return
        self.post_message(self.CurrentContent(out))

    def on_evidence_screen_current_content(self, message: CurrentContent) -> None:
        for view in self.query(PassageView):
            found = message.results.get(view.passage.index)
            if found is not None:
                view.show_current_content(found)

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

    def copy_target(self) -> tuple[str, str] | None:
        """The focused passage's id (the first visible one when none has focus)."""
        p = self._focused_passage()
        return None if p is None or not p.visible else ("passage id", p.passage_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("add_note", "export", "hold", "release", "copy_id"):
            return self.trace.visible and any(p.visible for p in self.passages)
        return True

    def action_export(self) -> None:
        export.start_export(self, self.trace.answer_id)

    def action_add_note(self) -> None:
        p = self._focused_passage()
        if p is None:
            return
        target = passage_target(p.passage_id)
        title = Text.assemble(
            plain("Investigator note on "), safe_line(target), plain(" (signed with your key, appended)")
        )
        self.app.push_screen(PromptScreen(title), lambda note: self._add(target, note))

    def _add(self, target: str, note: str | None) -> None:
        if note and note.strip():
            self._append(target, note.strip())

    @work(thread=True, exclusive=True, group="note")
    def _append(self, target: str, note: str) -> None:
        try:
            with self.engine.use() as s:
                CaseDesk(s).finding(self.tracer_app.case_id, self.trace.answer_id, target, note)
                n = len(queries.finding_rows(s.vault, self.trace.answer_id))
        except Exception as exc:  # e.g. read-only vault: said plainly
            self.post_message(Failed("note", str(exc)))
            return
        self.app.post_message(Recorded())
        self.notify(f"note signed and appended ({n} on this answer)", markup=False)
