"""A legal hold in force, shown wherever the evidence it holds is shown."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from tracer.engine.case import HoldView
from tracer.tui.text import plain, safe_line

__all__ = ["HoldNotice"]


class HoldNotice(Static):
    """One line per hold in force over an answer's evidence: what, why, who, when."""

    def __init__(self, holds: Sequence[HoldView], **kw: object) -> None:
        super().__init__(self.render_holds(holds), classes="hold", **kw)  # type: ignore[arg-type]

    @staticmethod
    def render_holds(holds: Sequence[HoldView]) -> Text:
        parts: list[Text] = []
        for hv in holds:
            h = hv.hold
            if parts:
                parts.append(plain("\n"))
            parts += [
                plain("LEGAL HOLD in force", "bold reverse"),
                plain(f"  on {h.subject_kind} "),
                safe_line(h.subject, "bold"),
                plain(": "),
                safe_line(h.reason),
                plain("  · placed by "),
                safe_line(hv.signer.name, "bold"),
                plain(f" ({hv.signer.key_id[:12]}) at "),
                safe_line(h.at),
                plain(f", log entry {h.seq}"),
            ]
            if h.case_id:
                parts += [plain(" · case "), safe_line(h.case_id)]
        return Text.assemble(*parts)
