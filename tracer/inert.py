"""Make untrusted text inert and visibly marked.

Passages, answers, titles and paths come from producers and source systems we do not
control.  Before any of it reaches a terminal, a report or the TUI, control characters,
escape sequences, bidi overrides and zero-width characters are replaced by visible
markers such as ``⟨ESC⟩`` or ``⟨U+202E⟩``.  The original is never altered in the vault;
only its display is.  Rich/Textual markup needs no escaping here because display code
never parses untrusted text as markup (it uses Text/Content objects).
"""

from __future__ import annotations

import json
from typing import Any

from store.textrules import BIDI as _BIDI_SET
from store.textrules import ZERO_WIDTH as _ZERO_WIDTH_SET
from store.textrules import hidden_pattern, is_hidden

__all__ = ["MARK_CLOSE", "MARK_OPEN", "has_hidden", "inert", "json_inert"]

MARK_OPEN = "⟨"
MARK_CLOSE = "⟩"

_NAMED = {
    0x1B: "ESC",
    0x0D: "CR",
    0x07: "BEL",
    0x08: "BS",
    0x00: "NUL",
    0x7F: "DEL",
    0x9B: "CSI",
    0x9D: "OSC",
}
_BIDI = _BIDI_SET
_ZERO_WIDTH = _ZERO_WIDTH_SET
_is_hidden = is_hidden


def _marker(cp: int) -> str:
    name = _NAMED.get(cp)
    if name is None:
        name = "LF" if cp == 0x0A else f"U+{cp:04X}"
    return f"{MARK_OPEN}{name}{MARK_CLOSE}"


def inert(text: str, keep_newlines: bool = True) -> str:
    """`text` with every invisible or controlling character replaced by a visible marker."""
    if text.isprintable() or (keep_newlines and text.replace("\n", "").isprintable()):
        if not any(ord(c) in _BIDI or ord(c) in _ZERO_WIDTH for c in text):
            return text
    return "".join(_marker(ord(c)) if _is_hidden(ord(c), keep_newlines) else c for c in text)


def has_hidden(text: str) -> bool:
    """True when `inert` would change the text: show a warning beside it."""
    return inert(text) != text


def _escape(match: Any) -> str:
    cp = ord(match.group(0))
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    cp -= 0x10000
    return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"


def json_inert(value: Any, indent: int | None = 2) -> str:
    """JSON text for untrusted values: UTF-8 kept readable, but every hidden character
    (C1 controls, bidi controls, zero-width, U+2028/2029, format and private-use
    characters) written as a `\\uXXXX` escape, so a terminal or a log viewer reading
    the output cannot be steered by it.  `json.loads` gives back the exact values."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    if text.isascii():
        return text
    return hidden_pattern().sub(_escape, text)
