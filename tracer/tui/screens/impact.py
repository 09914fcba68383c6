"""Impact: pick a document, one revision, or a tombstone; see every answer that depends on it.

Targets and results come from the engine (`queries.documents`, `revisions_of`,
`deletions_of_many`, `tombstones`, `catalog.impact`); Tab moves between the two tables,
Enter selects.  The highlighted target is shown whole under the list: a tombstone as
its full card, a deleted document with when and why.  Above the dependants: the legal
holds in force over the target and over the answers listed (`CaseDesk.holds_over`).
Documents outside the viewer's scope are not listed (not even their titles).  Each
impact run is an access entry, as from the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from store import queries
from store.queries import TombstoneRow
from tracer.engine.case import CaseDesk, HoldView
from tracer.engine.catalog import Revalidation, impact
from tracer.engine.session import Session
from tracer.engine.times import utc
from tracer.inert import inert
from tracer.tui.messages import Failed, Recorded
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.text import STATE_WIDTH, plain, safe_line, short, state_word
from tracer.tui.widgets.hold import impact_holds
from tracer.tui.widgets.pick_table import PickTable
from tracer.tui.widgets.tombstone import TombstoneCard

__all__ = ["ImpactScreen", "Target"]


@dataclass(frozen=True)
class Target:
    kind: str  # document | revision | tombstone
    document: str = ""
    revision: str | None = None
    digest: str = ""
    #: every fact about the target, shown whole under the list
    facts: tuple[tuple[str, str], ...] = ()
    tombstone: TombstoneRow | None = None
    deleted: bool = False

    @property
    def name(self) -> str:
        if self.kind == "document":
            return self.document
        if self.kind == "revision":
            return f"{self.document} @ {self.revision}"
        return short(self.digest)

    @property
    def access_target(self) -> str:
        if self.kind == "tombstone":
            return f"digest:{self.digest}"
        return f"document:{self.document}@{self.revision or '*'}"


def _targets(s: Session) -> list[Target]:
    out: list[Target] = []
    docs = [d for d in queries.documents(s.vault) if s.can_read(d.collection)]
    deletions = queries.deletions_of_many(s.vault, [d.document_id for d in docs])
    for d in docs:
        doc_id = d.document_id
        facts = [
            ("title", d.title),
            ("collection", d.collection),
            ("revisions", str(d.revisions)),
            ("latest", utc(d.latest_committed_at)),
        ]
        gone = deletions.get(doc_id)
        if gone is not None:
            facts.append(("DELETED", f"at {gone[1]} (log entry {gone[0]}): {gone[2]}"))
        out.append(Target("document", doc_id, facts=tuple(facts), deleted=gone is not None))
        for r in queries.revisions_of(s.vault, doc_id):
            rfacts = (
                ("committed", utc(r.committed_at)),
                ("source", f"{r.source_system}:{r.path} revision {r.source_revision}"),
                ("title", r.title),
                ("content sha256", r.content_sha256),
            )
            out.append(Target("revision", doc_id, r.revision, r.content_sha256, rfacts))
    # a tombstone is shown only to viewers who may read a record citing the purged text:
    # its policy and reason say something about evidence outside another viewer's scope
    cited_in = queries.tombstone_collections(s.vault)
    for t in queries.tombstones(s.vault):
        if any(s.can_read(c) for c in cited_in.get(t.digest, ())):
            out.append(Target("tombstone", digest=t.digest, tombstone=t))
    return out


#: not priority: Enter on either table is the table's own (`PickTable`), after the arrows
SELECT = Binding(
    "enter",
    "select",
    "Select",
    id="tracer.impact_select",
    tooltip="Left: list dependent answers; right: open the answer",
)


class ImpactTable(PickTable):
    """Targets (left) or their dependent answers (right); Enter selects the row."""

    PICKS = SELECT


class ImpactScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        SELECT,
    ]

    @dataclass
    class Targets(Message):
        targets: list[Target]

    @dataclass
    class Result(Message):
        result: Revalidation
        #: holds in force over the target and the answers listed, each with those it covers
        held: list[tuple[HoldView, list[str]]]

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[Target] = []
        self.result: Revalidation | None = None
        #: the target row a highlight asked for, not drawn yet (see row_highlighted)
        self._pending_row: int | None = None

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        with Horizontal(id="impact"):
            with Vertical(id="impact-left"):
                # short: at 80 columns the left pane is a third of the width
                yield Static(plain("Pick a target (Enter)", "bold"))
                targets = ImpactTable(id="impact-targets", cursor_type="row")
                for col in ("target", "kind"):  # the name first; the pane below says all
                    targets.add_column(col, key=col)
                yield targets
                yield VerticalScroll(id="impact-target")
            with Vertical(id="impact-right"):
                yield Static(plain("Pick a target on the left"), id="impact-head")
                yield Static(id="impact-holds", classes="hold")
                answers = ImpactTable(id="impact-answers", cursor_type="row")
                answers.add_column("answer", key="answer")
                answers.add_column("integrity", key="integrity", width=STATE_WIDTH["integrity"])
                answers.add_column("currency", key="currency", width=STATE_WIDTH["currency"])
                for col in ("depends", "generated at"):
                    answers.add_column(col, key=col)
                yield answers
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self._load_targets()

    @work(thread=True, exclusive=True, group="impact-targets")
    def _load_targets(self) -> None:
        try:
            with self.engine.use() as s:
                out = _targets(s)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("impact targets", str(exc)))
            return
        self.post_message(self.Targets(out))

    def on_impact_screen_targets(self, message: Targets) -> None:
        self.targets = message.targets
        table = self.query_one("#impact-targets", DataTable)
        for i, t in enumerate(self.targets):
            kind = "document (deleted)" if t.deleted else t.kind
            # a revision under its document's row, so at 80 columns the revision is on screen
            label = f"  @ {t.revision}" if t.kind == "revision" else t.name
            table.add_row(safe_line(label), plain(kind), key=str(i))
        table.focus()
        if self.targets:
            self._show_target(0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Held ↓ queues many highlights: the pane is drawn once, for the last of them, so
        the cursor keeps up with the keys (bench/open.py `impact_down_*`)."""
        if event.data_table.id == "impact-targets":
            first = self._pending_row is None
            self._pending_row = event.cursor_row
            if first:
                self.call_after_refresh(self._show_pending)

    def _show_pending(self) -> None:
        row, self._pending_row = self._pending_row, None
        if row is not None:
            self._show_target(row)

    def _show_target(self, row: int) -> None:
        if not 0 <= row < len(self.targets):
            return
        t = self.targets[row]
        pane = self.query_one("#impact-target", VerticalScroll)
        for card in pane.query(TombstoneCard):
            card.remove()
        text = pane.query("#impact-target-text")
        if not text:
            pane.mount(Static(id="impact-target-text"))
            text = pane.query("#impact-target-text")
        shown = text.first(Static)
        if t.tombstone is not None:
            shown.display = False
            pane.mount(TombstoneCard(t.digest, t.tombstone))
        else:
            shown.display = True
            shown.update(target_text(t))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._select(event.data_table)

    def action_select(self) -> None:
        table = self.focused
        if isinstance(table, DataTable):
            self._select(table)

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
                s.record("impact", t.access_target)
                if t.kind == "tombstone":
                    result = impact(s, digest=t.digest)
                else:
                    result = impact(s, document=t.document, revision=t.revision)
                seen = [a.row.answer_id for a in result.answers if a.summary.visible]
                document = None if t.kind == "tombstone" else t.document
                held = CaseDesk(s).holds_over(document, seen)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("impact", str(exc)))
            return
        self.app.post_message(Recorded())
        self.post_message(self.Result(result, held))

    def on_impact_screen_result(self, message: Result) -> None:
        r = self.result = message.result
        head = Text.assemble(
            plain("Impact of "),
            safe_line(r.target),
            plain(f": {len(r.answers)} answer(s), computed {r.computed_at}"),
        )
        self.query_one("#impact-head", Static).update(head)
        holds = self.query_one("#impact-holds", Static)
        holds.update(impact_holds(message.held, len(r.answers)) if message.held else "")
        holds.set_class(bool(message.held), "-shown")
        table = self.query_one("#impact-answers", DataTable)
        table.clear()
        for i, a in enumerate(r.answers):
            direct = r.direct is None or a.row.answer_id in r.direct
            table.add_row(
                safe_line(a.row.answer_id),
                state_word(a.summary.integrity),
                state_word(a.summary.currency),
                plain("cites it" if direct else "lineage"),
                plain(utc(a.row.generated_at)),
                key=str(i),
            )
        if r.answers:
            table.focus()


def target_text(t: Target) -> Text:
    """Every fact of a target, each value whole (it wraps) and inert."""
    out = Text.assemble(plain(f"{t.kind} ", "bold"), safe_line(t.name, "bold"), "\n")
    for label, value in t.facts:
        # "label: value", not a padded column: the pane is a third of 80 columns
        out.append_text(plain(f"{label}:", "bold reverse" if label == "DELETED" else "bold"))
        out.append(" ")
        out.append_text(Text(inert(value, keep_newlines=False)))
        out.append("\n")
    return out
