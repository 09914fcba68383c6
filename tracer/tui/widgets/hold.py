"""A legal hold in force, shown wherever the evidence it holds is shown.

A viewer who sees a hold's subject but does not cover its author sees the hold with its
reason (and, when they cannot see that case, its case id) withheld (`HoldView`): the
engine's words stand in their place, marked, never an empty reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from tracer.engine.case import HoldView
from tracer.tui.text import plain, safe_line

__all__ = ["HoldNotice", "case_part", "impact_holds", "reason_part", "release_reason_part"]

#: how a withheld field is marked: it must not read as the author's own words
WITHHELD_STYLE = "italic reverse"


def reason_part(hv: HoldView) -> Text:
    """The hold's reason, inert; or, withheld, the engine's words for it, marked."""
    if "reason" in hv.withheld:
        return plain(hv.reason_text, WITHHELD_STYLE)
    return safe_line(hv.reason_text)


def release_reason_part(hv: HoldView) -> Text:
    if "release.reason" in hv.withheld:
        return plain(hv.release_reason_text, WITHHELD_STYLE)
    return safe_line(hv.release_reason_text)


def case_part(hv: HoldView) -> Text:
    """` · case ID`, ` · case withheld` (marked), or nothing when placed under no case."""
    if "case_id" in hv.withheld:
        return Text.assemble(plain(" · "), plain("case withheld", WITHHELD_STYLE))
    if hv.hold.case_id:
        return Text.assemble(plain(" · case "), safe_line(hv.hold.case_id))
    return Text()


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
                reason_part(hv),
                plain("  · placed by "),
                safe_line(hv.signer.name, "bold"),
                plain(f" ({hv.signer.key_id[:12]}) at "),
                safe_line(h.at),
                plain(f", log entry {h.seq}"),
                case_part(hv),
            ]
        return Text.assemble(*parts)


def impact_holds(held: Sequence[tuple[HoldView, list[str]]], listed: int) -> Text:
    """The holds in force over an impact's evidence (`CaseDesk.holds_over`), each with
    the answers listed that it covers, as `tracer impact` prints them."""
    out = Text.assemble(
        plain(f"Legal holds in force over this evidence: {len(held)}", "bold"),
        plain(" (a purge of what they hold is refused)"),
    )
    for hv, aids in held:
        out.append("\n")
        out.append_text(HoldNotice.render_holds([hv]))
        if not aids:
            covers = "none of the answers listed"
        elif len(aids) <= 3:
            covers = ", ".join(aids)
        elif len(aids) == listed:
            covers = f"all {listed} answers listed"
        else:
            covers = f"{len(aids)} of the {listed} answer(s) listed"
        out.append_text(Text.assemble(plain("; covers "), safe_line(covers)))
    return out
