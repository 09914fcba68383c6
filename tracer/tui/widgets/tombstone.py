"""What stands in the place of purged evidence: the tombstone, never other text.

Every field wraps rather than being cut: the full digest, the policy, the reason and
the authorizer are what an auditor checks, at any terminal width.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from store.queries import TombstoneRow
from tracer.inert import inert
from tracer.tui.text import plain

__all__ = ["TombstoneCard", "tombstone_fields"]


def tombstone_fields(digest: str, t: TombstoneRow) -> tuple[tuple[str, str], ...]:
    return (
        ("digest", digest),
        ("policy", t.policy),
        ("reason", t.reason),
        ("authorizer", t.authorizer),
        ("effective", t.effective_at),
        ("log entry", str(t.seq)),
    )


class TombstoneCard(Static):
    DEFAULT_CSS = "TombstoneCard { height: auto; border: heavy $warning; padding: 0 1; }"

    def __init__(self, digest: str, tomb: TombstoneRow, id: str | None = None, classes: str | None = None):  # noqa: A002 - Textual spells it `id`
        super().__init__(self._body(digest, tomb), id=id, classes=classes)
        self.tomb = tomb
        self.border_title = "TOMBSTONE"

    @staticmethod
    def _body(digest: str, t: TombstoneRow) -> Text:
        out = Text.assemble(plain("TOMBSTONE: purged under a retention policy", "bold reverse"), "\n")
        for label, value in tombstone_fields(digest, t):
            out.append_text(plain(f"{label:<11}", "bold"))
            # wraps (a long digest folds) instead of being cut at the card's edge
            out.append_text(Text(inert(value, keep_newlines=False)))
            out.append("\n")
        out.append("The text was deleted; nothing else is shown in its place.", style="italic")
        return out
