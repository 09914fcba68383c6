"""Mark what differs between a historical quote and the current excerpt.

Word-level, whitespace-insensitive (a re-wrapped paragraph is not a change).  Each
differing run is bracketed with ⟦ ⟧ as well as styled, so the marks survive the
monochrome theme and a copy-paste.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from rich.text import Text

from tracer.inert import inert

__all__ = ["MARK_CLOSE", "MARK_OPEN", "mark_differences"]

MARK_OPEN = "⟦"
MARK_CLOSE = "⟧"
OLD_STYLE = "bold red underline"
NEW_STYLE = "bold green underline"
_TOKEN = re.compile(r"\s+|\S+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _key(token: str) -> str:
    return " " if token.isspace() else token


def _emit(out: Text, tokens: list[str], style: str | None) -> None:
    chunk = inert("".join(tokens))
    if style is None:
        out.append(chunk)
        return
    if not chunk.strip():
        return
    out.append(MARK_OPEN, style=style)
    out.append(chunk, style=style)
    out.append(MARK_CLOSE, style=style)


def mark_differences(old: str, new: str) -> tuple[Text, Text]:
    """(old with its differing runs marked, new with its differing runs marked)."""
    a, b = _tokens(old), _tokens(new)
    sm = SequenceMatcher(a=[_key(t) for t in a], b=[_key(t) for t in b], autojunk=False)
    left, right = Text(), Text()
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            _emit(left, a[i1:i2], None)
            _emit(right, b[j1:j2], None)
        else:
            _emit(left, a[i1:i2], OLD_STYLE)
            _emit(right, b[j1:j2], NEW_STYLE)
    return left, right
