"""HTML building blocks that treat every string as untrusted.

Text goes through `inert` first (control, bidi and zero-width characters become
visible markers), then `html.escape`, and only then are the markers wrapped in a span
so they stand out.  Nothing untrusted ever reaches an attribute except through
`html.escape(quote=True)`, and class names are built only from a fixed alphabet.
"""

from __future__ import annotations

import html
import re

from tracer.inert import MARK_CLOSE, MARK_OPEN, has_hidden, inert

__all__ = ["block", "esc", "keyref", "state"]

_MARKER = re.compile(re.escape(MARK_OPEN) + r"[A-Z0-9+]{1,12}" + re.escape(MARK_CLOSE))
_CLASS_SAFE = re.compile(r"[a-z_]{1,40}")


def esc(value: object, keep_newlines: bool = False) -> str:
    """Escaped, inert HTML text for any value (None shows as an em dash)."""
    if value is None:
        return "—"
    text = inert(str(value), keep_newlines=keep_newlines)
    escaped = html.escape(text, quote=True)
    return _MARKER.sub(lambda m: f'<span class="ctl">{m.group(0)}</span>', escaped)


def state(word: object) -> str:
    """A state as a word; the colour class only repeats it."""
    text = str(word)
    cls = f"st-{text}" if _CLASS_SAFE.fullmatch(text) else "st-unknown"
    return f'<span class="state {cls}">{esc(text)}</span>'


def block(slot: str, label: str, text: str) -> str:
    """A labelled text block; `slot` is "historical" or "current" and never mixed up."""
    warn = ""
    if has_hidden(text):
        warn = (
            '<div class="hidden-warning">This text contains invisible or control characters; '
            f"each is shown as a marker such as {esc(MARK_OPEN + 'ESC' + MARK_CLOSE)}.</div>"
        )
    return (
        f'<div class="block {slot}" data-slot="{slot}"><div class="label">{label}</div>'
        f"{warn}<pre>{esc(text, keep_newlines=True)}</pre></div>"
    )


def keyref(key_id: object) -> str:
    """A key id or hash, shortened to 16 hex digits (the full value is in report.json)."""
    return f"<span class='mono'>{esc(str(key_id)[:16])}…</span>"
