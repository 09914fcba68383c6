"""Full verification in a worker, with a progress bar; Enter jumps to a finding's answer.

The run is an access entry (`verify`), written before the first record is read, as
the CLI does.  The engine calls back per log entry; progress is posted at most every
1% (and on each phase change) so a large vault does not flood the message queue.
Cancelling the worker (leaving the screen, quitting) stops the scan at the next callback.

What verification raises are *findings* (an investigator's signed statements are
*notes*, elsewhere).  The table keeps the finding's kind, answer and passage whole; the
pane under it shows the highlighted finding's whole record, digest included, and `c`
copies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, ProgressBar, Static
from textual.worker import get_current_worker

from tracer.engine.verify import Finding, VerifyReport, verify
from tracer.inert import inert
from tracer.tui.messages import Failed, Recorded
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.base import BACK, COPY_ID, TracerScreen
from tracer.tui.text import plain, safe, safe_line
from tracer.tui.widgets.pick_table import PickTable

__all__ = ["VerifyScreen"]


class _CancelledError(Exception):
    pass


#: not priority: Enter on the findings is the table's own (`PickTable`), after the arrows
JUMP = Binding(
    "enter", "jump", "Go to record", id="tracer.jump", tooltip="Open the answer this finding is about"
)


class FindingsTable(PickTable):
    """One row per verification finding; Enter opens the answer it is about."""

    PICKS = JUMP


class VerifyScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        JUMP,
        Binding("c", "copy", "Copy record", id="tracer.copy_record", tooltip="Copy the finding's record"),
        Binding("r", "run", "Run again", id="tracer.verify_again", tooltip="Verify the whole vault again"),
        COPY_ID,
    ]
    FOOTER_FIRST = ("jump", "back", "copy", "run", "copy_id")

    @dataclass
    class Progress(Message):
        phase: str
        done: int
        total: int

    @dataclass
    class Done(Message):
        report: VerifyReport

    def __init__(self) -> None:
        super().__init__()
        self.report: VerifyReport | None = None

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(plain("verifying…"), id="verify-phase")
        yield ProgressBar(total=None, show_eta=False, id="verify-progress")
        yield Static(id="verify-result")
        table = FindingsTable(id="verify-findings", cursor_type="row")
        for col in COLUMNS:
            table.add_column(col, key=col)
        yield table
        yield Static(id="verify-detail")
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self.action_run()

    def action_run(self) -> None:
        self.query_one("#verify-findings", DataTable).clear()
        self.query_one("#verify-result", Static).update("")
        self._verify()

    @work(thread=True, exclusive=True, group="verify")
    def _verify(self) -> None:
        worker = get_current_worker()
        last: dict[str, int] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if worker.is_cancelled:
                raise _CancelledError
            step = max(1, total // 100)
            if phase not in last or done - last[phase] >= step or done >= total:
                last[phase] = done
                self.post_message(self.Progress(phase, done, total))

        try:
            with self.engine.use() as s:
                s.record("verify", "")
                self.app.post_message(Recorded())
                report = verify(s.vault, s, progress)
        except _CancelledError:
            return
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("verify", str(exc)))
            return
        self.post_message(self.Done(report))

    def on_failed(self, message: Failed) -> None:
        """Say so where the result would have been, not only in a passing toast."""
        super().on_failed(message)
        self.query_one("#verify-phase", Static).update(
            Text.assemble(plain("failed: "), safe_line(message.error))
        )
        self.query_one("#verify-progress", ProgressBar).update(total=1, progress=0)

    def on_verify_screen_progress(self, message: Progress) -> None:
        self.query_one("#verify-phase", Static).update(
            plain(f"{message.phase}: {message.done}/{message.total}")
        )
        self.query_one("#verify-progress", ProgressBar).update(
            total=max(message.total, 1), progress=message.done
        )

    def on_verify_screen_done(self, message: Done) -> None:
        r = self.report = message.report
        self.query_one("#verify-phase", Static).update(plain(f"done at {r.computed_at}"))
        bar = self.query_one("#verify-progress", ProgressBar)
        bar.update(total=1, progress=1)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(r.counts.items()))
        verdict = "OK: no findings" if r.ok else f"{len(r.findings)} verification finding(s)"
        self.query_one("#verify-result", Static).update(
            Text.assemble(
                plain(f"RESULT {verdict}", "bold reverse" if not r.ok else "bold"), plain(f"\n{counts}")
            )
        )
        table = self.query_one("#verify-findings", DataTable)
        for i, f in enumerate(r.findings):
            table.add_row(*_row(f), key=str(i))
        table.focus()
        self._show_detail(0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _finding(self, row: int) -> Finding | None:
        if self.report is None or not 0 <= row < len(self.report.findings):
            return None
        return self.report.findings[row]

    def _show_detail(self, row: int) -> None:
        f = self._finding(row)
        pane = self.query_one("#verify-detail", Static)
        pane.update(detail_text(f) if f is not None else "")
        pane.set_class(f is not None, "-shown")

    def copy_target(self) -> tuple[str, str] | None:
        """The finding's answer id, else its passage id, else its digest or log entry."""
        f = self._finding(self.query_one("#verify-findings", DataTable).cursor_row)
        if f is None:
            return None
        for field, what in (("answer_id", "answer id"), ("passage_id", "passage id"), ("digest", "digest")):
            value = f.record.get(field)
            if value:
                return (what, str(value))
        return ("log entry", str(f.seq)) if f.seq is not None else None

    def action_copy(self) -> None:
        table = self.query_one("#verify-findings", DataTable)
        f = self._finding(table.cursor_row)
        if f is None:
            return
        self.app.copy_to_clipboard(copy_text(f))
        self.notify("finding record copied to the clipboard (if the terminal allows it)", markup=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._jump()

    def action_jump(self) -> None:
        self._jump()

    def _jump(self) -> None:
        table = self.query_one("#verify-findings", DataTable)
        if self.report is None or not table.row_count:
            return
        f = self.report.findings[table.cursor_row]
        answer_id = f.record.get("answer_id")
        if answer_id:
            self.app.push_screen(AnswerScreen(str(answer_id)))
        else:
            where = f"log entry {f.seq}" if f.seq is not None else "the vault as a whole"
            self.notify(f"this finding is about {where}, not an answer", markup=False)


#: kind, answer and passage first and never cut; the rest of the record after them
COLUMNS = ("finding", "answer", "passage", "log entry", "other record fields")
_PINNED = ("answer_id", "passage_id")


def _row(f: Finding) -> tuple[Text, Text, Text, Text, Text]:
    rest = " ".join(f"{k}={v}" for k, v in f.record.items() if k not in _PINNED)
    return (
        plain(f.kind, "bold"),
        safe_line(str(f.record.get("answer_id", "—"))),
        safe_line(str(f.record.get("passage_id", "—"))),
        plain("vault" if f.seq is None else str(f.seq)),
        safe_line(rest, limit=60),
    )


def detail_text(f: Finding) -> Text:
    """The whole finding: every record field on its own line (the digest whole), the detail."""
    out = Text.assemble(
        plain(f.kind, "bold reverse"),
        plain(f"  log entry {'vault-wide' if f.seq is None else f.seq}  ·  c copies this record\n"),
    )
    for k, v in f.record.items():
        out.append_text(plain(f"{k:<12}", "bold"))
        out.append_text(Text(inert(str(v), keep_newlines=False)))
        out.append("\n")
    out.append_text(safe(f.detail))
    return out


def copy_text(f: Finding) -> str:
    """Plain, inert text for the clipboard: what the pane shows."""
    lines = [f"{f.kind} log entry {'vault' if f.seq is None else f.seq}"]
    lines += [f"{k}: {inert(str(v), keep_newlines=False)}" for k, v in f.record.items()]
    lines.append(inert(f.detail, keep_newlines=False))
    return "\n".join(lines)
