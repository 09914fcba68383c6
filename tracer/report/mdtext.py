"""Markdown building blocks that treat every string as untrusted.

Inline values are made inert and every character Markdown or HTML could act on is
backslash-escaped (CommonMark allows escaping any ASCII punctuation), so `<script>`
renders as text and `|` cannot break a table.  Verbatim texts go in a fenced block
whose fence is longer than any backtick run inside, so nothing in the text can close it.
"""

from __future__ import annotations

import re

from tracer.inert import MARK_CLOSE, MARK_OPEN, has_hidden, inert

__all__ = ["fence", "md"]

_SPECIAL = re.compile(r"([\\`*_\[\]{}<>|&!#~])")
_TICKS = re.compile(r"`+")


def md(value: object) -> str:
    """One inline value: inert, on one line, with Markdown/HTML specials escaped."""
    if value is None:
        return "—"
    return _SPECIAL.sub(r"\\\1", inert(str(value), keep_newlines=False))


def fence(label: str, text: str) -> str:
    """A labelled verbatim block (the label is already-escaped Markdown)."""
    body = inert(text, keep_newlines=True)
    longest = max((len(m.group(0)) for m in _TICKS.finditer(body)), default=0)
    ticks = "`" * max(3, longest + 1)
    warn = ""
    if has_hidden(text):
        warn = (
            f"\n\n*This text contains invisible or control characters, each shown as a marker "
            f"such as {MARK_OPEN}ESC{MARK_CLOSE}.*"
        )
    return f"**{label}**{warn}\n\n{ticks}text\n{body}\n{ticks}\n"
