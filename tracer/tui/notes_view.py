"""Findings shown beside what they are about: a claim ("citation [n]") or a passage."""

from __future__ import annotations

from rich.text import Text

from tracer.tui.text import plain, safe, safe_line

__all__ = ["FindingRow", "citation_target", "findings_text", "passage_target"]

FindingRow = tuple[int, str, str, str, str, str]


def citation_target(index: int) -> str:
    return f"citation [{index + 1}]"


def passage_target(passage_id: str) -> str:
    return f"passage {passage_id}"


def findings_text(rows: list[FindingRow], heading: str) -> Text:
    out = Text(f"{heading}: {len(rows)}\n", style="bold")
    for seq, who, _aid, target, note, at in rows:
        out.append_text(plain(f"  entry {seq}  {at}  {who[:12]}  on "))
        out.append_text(safe_line(target))
        out.append("\n    ")
        out.append_text(safe(note))
        out.append("\n")
    return out
