"""What stands in the place of purged evidence: the tombstone, never other text."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from store.queries import TombstoneRow
from tracer.tui.text import plain, safe_line

__all__ = ["TombstoneCard"]


class TombstoneCard(Static):
    DEFAULT_CSS = "TombstoneCard { height: auto; border: heavy $warning; padding: 0 1; }"

    def __init__(self, digest: str, tomb: TombstoneRow, id: str | None = None, classes: str | None = None):  # noqa: A002 - Textual spells it `id`
        super().__init__(self._body(digest, tomb), id=id, classes=classes)
        self.tomb = tomb
        self.border_title = "TOMBSTONE: purged under a retention policy"

    @staticmethod
    def _body(digest: str, t: TombstoneRow) -> Text:
        rows = (
            ("digest", digest),
            ("policy", t.policy),
            ("reason", t.reason),
            ("authorizer", t.authorizer),
            ("effective", t.effective_at),
            ("log entry", str(t.seq)),
        )
        out = Text()
        for label, value in rows:
            out.append_text(plain(f"{label:<11}", "bold"))
            out.append_text(safe_line(value))
            out.append("\n")
        out.append("The text was deleted; nothing else is shown in its place.", style="italic")
        return out
