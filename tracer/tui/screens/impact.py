"""Impact: pick a document, one revision, or a tombstone; see every answer that depends on it.

Targets and results come from the engine (`queries.documents`, `revisions_of`,
`tombstones`, `catalog.impact`); Tab moves between the two tables, Enter selects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from store import queries
from tracer.engine.catalog import Revalidation, impact
from tracer.tui.messages import Failed
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.text import plain, safe_line, short, state_word

__all__ = ["ImpactScreen", "Target"]


@dataclass(frozen=True)
class Target:
    kind: str  # document | revision | tombstone
    document: str = ""
    revision: str | None = None
    digest: str = ""
    label: str = ""


class ImpactScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        Binding(
            "enter",
            "select",
            "Select",
            id="tracer.impact_select",
            tooltip="Left: list dependent answers; right: open the answer",
            priority=True,
        ),
    ]

    @dataclass
    class Targets(Message):
        targets: list[Target]

    @dataclass
    class Result(Message):
        result: Revalidation

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[Target] = []
        self.result: Revalidation | None = None

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        with Horizontal(id="impact"):
            with Vertical(id="impact-left"):
                yield Static(plain("Documents, revisions, tombstones (Enter: show dependants)", "bold"))
                targets: DataTable[Text] = DataTable(id="impact-targets", cursor_type="row")
                for col in ("kind", "target", "detail"):
                    targets.add_column(col, key=col)
                yield targets
            with Vertical(id="impact-right"):
                yield Static(plain("Pick a target on the left"), id="impact-head")
                answers: DataTable[Text] = DataTable(id="impact-answers", cursor_type="row")
                for col in ("answer", "generated at", "integrity", "currency"):
                    answers.add_column(col, key=col)
                yield answers
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self._load_targets()

    @work(thread=True, exclusive=True, group="impact-targets")
    def _load_targets(self) -> None:
        out: list[Target] = []
        try:
            with self.engine.use() as s:
                for doc_id, title, _coll, n, latest in queries.documents(s.vault):
                    out.append(
                        Target("document", doc_id, label=f"{title} · {n} revision(s), latest {latest}")
                    )
                    for r in queries.revisions_of(s.vault, doc_id):
                        out.append(
                            Target("revision", doc_id, r.revision, label=f"committed {r.committed_at}")
                        )
                for t in queries.tombstones(s.vault):
                    out.append(Target("tombstone", digest=t.digest, label=f"{t.policy} · {t.effective_at}"))
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("impact targets", str(exc)))
            return
        self.post_message(self.Targets(out))

    def on_impact_screen_targets(self, message: Targets) -> None:
        self.targets = message.targets
        table = self.query_one("#impact-targets", DataTable)
        for i, t in enumerate(self.targets):
            name = {"document": t.document, "revision": f"{t.document} @ {t.revision}"}.get(
                t.kind, short(t.digest)
            )
            table.add_row(plain(t.kind), safe_line(name, limit=22), safe_line(t.label, limit=20), key=str(i))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._select(event.data_table)

    def action_select(self) -> None:
        if isinstance(self.focused, DataTable):
            self._select(self.focused)

    def _select(self, table: DataTable[Text]) -> None:
        if not table.row_count:
            return
        if table.id == "impact-targets":
            self._impact(self.targets[table.cursor_row])
        elif self.result is not None and self.result.answers:
            self.app.push_screen(AnswerScreen(self.result.answers[table.cursor_row].row.answer_id))

    @work(thread=True, exclusive=True, group="impact")
    def _impact(self, t: Target) -> None:
        try:
            with self.engine.use() as s:
                if t.kind == "tombstone":
                    result = impact(s, digest=t.digest)
                else:
                    result = impact(s, document=t.document, revision=t.revision)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("impact", str(exc)))
            return
        self.post_message(self.Result(result))

    def on_impact_screen_result(self, message: Result) -> None:
        r = self.result = message.result
        head = Text.assemble(
            plain("Impact of "),
            safe_line(r.target),
            plain(f": {len(r.answers)} answer(s), computed {r.computed_at}"),
        )
        self.query_one("#impact-head", Static).update(head)
        table = self.query_one("#impact-answers", DataTable)
        table.clear()
        for i, a in enumerate(r.answers):
            table.add_row(
                safe_line(a.row.answer_id, limit=24),
                plain(a.row.generated_at),
                state_word(a.summary.integrity),
                state_word(a.summary.currency),
                key=str(i),
            )
        if r.answers:
            table.focus()
