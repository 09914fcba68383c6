"""Investigator notes shown beside what they are about: a claim (`claim:N`) or a passage.

A note is what an investigator signs and appends (`Session.add_finding`, log kind
`finding`).  It is never called a finding on screen: that word would collide with
what verification raises, which the TUI calls an alarm.  Targets are written in their
one spelling (`answer`, `claim:N`, `passage:ID`: `store.casefile.canonical_target`);
notes written before it (`citation [N]`, `passage ID`) are read as the same target.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias

from rich.text import Text

from tracer.tui.signers import signer
from tracer.tui.text import plain, safe, safe_line

__all__ = ["NoteRow", "citation_target", "notes_text", "passage_target"]

if TYPE_CHECKING:
    from store.queries import FindingRow

#: an investigator note as the store lists it (the store is imported only when read)
NoteRow: TypeAlias = "FindingRow"


def citation_target(index: int) -> str:
    """Claim `index` (from 0) as a note or tag target: `claim:N`, N counted from 1."""
    return f"claim:{index + 1}"


def passage_target(passage_id: str) -> str:
    return f"passage:{passage_id}"


def notes_text(rows: list[NoteRow], heading: str, names: Mapping[str, str]) -> Text:
    out = Text(f"{heading}: {len(rows)}\n", style="bold")
    for r in rows:
        out.append_text(plain(f"  log entry {r.seq}  {r.at}  signed by "))
        out.append_text(signer(r.investigator, names))
        out.append_text(plain("  on "))
        out.append_text(safe_line(r.target))
        out.append("\n    ")
        out.append_text(safe(r.note))
        out.append("\n")
    return out
