"""Who opened what, when: the access entries of the log, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from store import queries
from store.queries import AccessRow
from tracer.tui.messages import Failed
from tracer.tui.screens.base import BACK, TracerScreen
from tracer.tui.signers import signer, signer_names
from tracer.tui.text import plain, safe_line
from tracer.tui.widgets.edge_mark import MarkedTable

__all__ = ["AccessLogScreen"]

LIMIT = 2000


class AccessLogScreen(TracerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [BACK]

    @dataclass
    class Loaded(Message):
        rows: list[AccessRow]
        names: dict[str, str]

    def compose(self) -> ComposeResult:
        yield from self.frame_top()
        yield Static(plain("Access log: loading…", "bold"), id="access-title")
        table = MarkedTable(id="access", cursor_type="row")
        for col in ("entry", "time", "investigator", "action", "target", "forensic"):
            table.add_column(col, key=col)
        yield table
        yield from self.frame_bottom()

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="access")
    def _load(self) -> None:
        try:
            with self.engine.use() as s:
                rows = queries.access_rows(s.vault, LIMIT)
                names = signer_names(s)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self.post_message(Failed("access log", str(exc)))
            return
        self.post_message(self.Loaded(rows, names))

    def on_access_log_screen_loaded(self, message: Loaded) -> None:
        table = self.query_one("#access", DataTable)
        shown = len(message.rows)
        cap = f", the newest {LIMIT}" if shown >= LIMIT else ""
        self.query_one("#access-title", Static).update(
            plain(f"Access log: {shown} entr{'y' if shown == 1 else 'ies'}{cap}, newest first", "bold")
        )
        for r in message.rows:
            table.add_row(
                plain(str(r.seq)),
                plain(r.at),
                signer(r.investigator, message.names),
                safe_line(r.action),
                safe_line(r.target, limit=60),
                plain("FORENSIC" if r.forensic else ""),
                key=str(r.seq),
            )
        table.focus()
