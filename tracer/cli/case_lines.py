"""The case file beside the evidence in plain output: holds and tags, one line each.

Shared by `tracer trace` (the answer's holds and tags) and `tracer impact` (the holds on
the document and on the answers listed).  Everything people wrote is made inert; a
hold's reason withheld from the viewer says so (`HoldView.reason_text`).
"""

from __future__ import annotations

from tracer.engine.case import CaseDesk, HoldView
from tracer.inert import inert

__all__ = ["hold_line_short", "impact_hold_lines", "tag_lines", "trace_case_lines"]


def hold_line_short(hv: HoldView) -> str:
    h = hv.hold
    return (
        f"LEGAL HOLD in force on {h.subject_kind} {inert(h.subject, False)}: {inert(hv.reason_text, False)}; "
        f"placed by {inert(hv.signer.label(), False)} at {inert(h.at, False)}, log entry {h.seq}"
    )


def tag_lines(desk: CaseDesk, answer_id: str) -> list[str]:
    """Tags in force on the answer, its claims and passages, in every case the viewer sees."""
    out = []
    for t in desk.tags_of_answer(answer_id):
        case = f" [case {inert(t.case_id, False)}]" if t.case_id else ""
        out.append(
            f"TAG {inert(t.tag, False)} on {inert(t.target, False)}{case} by "
            f"{inert(desk.person(t.investigator).label(), False)}, log entry {t.seq}"
        )
    return out


def trace_case_lines(desk: CaseDesk, answer_id: str) -> list[str]:
    """What `tracer trace` prints under the answer's header: holds, then tags."""
    lines = [hold_line_short(hv) for hv in desk.holds_on_answer(answer_id)]
    return lines + tag_lines(desk, answer_id)


def impact_hold_lines(held: list[tuple[HoldView, list[str]]], listed: int) -> list[str]:
    if not held:
        return []
    out = ["legal holds in force over this evidence (a purge of what they hold is refused):"]
    for hv, aids in held:
        if not aids:
            covers = "none of the answers listed"
        elif len(aids) <= 3:
            covers = ", ".join(inert(a, False) for a in aids)
        elif len(aids) == listed:
            covers = f"all {listed} answers listed"
        else:
            covers = f"{len(aids)} of the {listed} answer(s) listed"
        out.append(f"  {hold_line_short(hv)}; covers {covers}")
    return out
