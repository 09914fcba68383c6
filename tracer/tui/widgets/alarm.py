"""Alarms shown in the place of evidence that cannot be released.

`missing` (absent with no tombstone) is evidence lost and must be loud; a checksum
mismatch means the stored text is not what was signed, so it is withheld too.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tracer.engine.evidence import TextResult
from tracer.engine.vocabulary import INTEGRITY_MEANING, Integrity
from tracer.tui.text import plain, safe_line, short

__all__ = ["MissingAlarm", "WithheldNotice"]


class MissingAlarm(Static):
    DEFAULT_CSS = "MissingAlarm { height: auto; border: heavy $error; padding: 0 1; text-style: bold; }"

    def __init__(self, result: TextResult, id: str | None = None, classes: str | None = None):  # noqa: A002 - Textual spells it `id`
        body = Text.assemble(
            plain("ALARM: MISSING", "bold reverse"),
            plain(f"\n{INTEGRITY_MEANING[Integrity.MISSING]}\nrecorded digest {result.digest}"),
        )
        super().__init__(body, id=id, classes=classes)
        self.border_title = "MISSING EVIDENCE"


class WithheldNotice(Static):
    """Checksum mismatch, out of scope, or any state whose text is not released.

    It stands under the pane's digest line (`historical.digest_line`: recorded and
    recomputed SHA-256, the verdict), so it does not repeat the two digests."""

    DEFAULT_CSS = "WithheldNotice { height: auto; border: round $warning; padding: 0 1; }"

    def __init__(self, result: TextResult, id: str | None = None, classes: str | None = None):  # noqa: A002 - Textual spells it `id`
        body = Text.assemble(
            plain(result.state.upper(), "bold"),
            plain(f": {INTEGRITY_MEANING.get(result.state, '')}; the text is not shown"),
        )
        # the engine's detail, unless it only says the two digests again
        if result.detail and not (result.recomputed and short(result.recomputed) in result.detail):
            body.append("\n")
            body.append_text(safe_line(result.detail))
        super().__init__(body, id=id, classes=classes)
