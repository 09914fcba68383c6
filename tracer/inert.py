"""Make untrusted text inert and visibly marked.

Passages, answers, titles and paths come from producers and source systems we do not
control.  Before any of it reaches a terminal, a report or the TUI, control characters,
escape sequences, bidi overrides and zero-width characters are replaced by visible
markers such as ``⟨ESC⟩`` or ``⟨U+202E⟩``.  The original is never altered in the vault;
only its display is.  Rich/Textual markup needs no escaping here because display code
never parses untrusted text as markup (it uses Text/Content objects).
"""

from __future__ import annotations

import unicodedata

__all__ = ["MARK_CLOSE", "MARK_OPEN", "has_hidden", "inert"]

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
_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}
_ZERO_WIDTH = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E, 0x00AD}


def _is_hidden(cp: int, keep_newlines: bool) -> bool:
    if cp == 0x0A:
        return not keep_newlines
    if cp == 0x09:
        return False
    if cp < 0x20 or 0x7F <= cp <= 0x9F:
        return True
    if cp in _BIDI or cp in _ZERO_WIDTH:
        return True
    return unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")


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
