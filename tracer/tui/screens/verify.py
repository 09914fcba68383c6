"""Full verification in a worker, with a progress bar; Enter jumps to a finding's answer.

The engine calls back per log entry; progress is posted at most every 1% (and on each
phase change) so a large vault does not flood the message queue.  Cancelling the
worker (leaving the screen, quitting) stops the scan at the next callback.
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
from tracer.tui.messages import Failed
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.text import plain, safe_line

__all__ = ["VerifyScreen"]


class _CancelledError(Exception):
    pass


class VerifyScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        Binding(
            "enter",
            "jump",
            "Go to record",
            id="tracer.jump",
            tooltip="Open the answer this finding is about",
            priority=True,
        ),
        Binding("r", "run", "Run again", id="tracer.verify_again", tooltip="Verify the whole vault again"),
    ]

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
        table: DataTable[Text] = DataTable(id="verify-findings", cursor_type="row")
        for col in ("finding", "log entry", "record", "detail"):
            table.add_column(col, key=col)
        yield table
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
        verdict = "OK: no findings" if r.ok else f"{len(r.findings)} finding(s)"
        self.query_one("#verify-result", Static).update(
            Text.assemble(
                plain(f"RESULT {verdict}", "bold reverse" if not r.ok else "bold"), plain(f"\n{counts}")
            )
        )
        table = self.query_one("#verify-findings", DataTable)
        for i, f in enumerate(r.findings):
            table.add_row(*_row(f), key=str(i))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_jump()

    def action_jump(self) -> None:
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


def _row(f: Finding) -> tuple[Text, Text, Text, Text]:
    rec = " ".join(f"{k}={v}" for k, v in f.record.items())
    return (
        plain(f.kind, "bold"),
        plain("vault" if f.seq is None else str(f.seq)),
        safe_line(rec, limit=60),
        safe_line(f.detail, limit=80),
    )
