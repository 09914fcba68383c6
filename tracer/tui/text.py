"""Untrusted text and state words as Rich `Text`, never as markup.

Textual parses plain `str` as markup in Static, DataTable cells and Tree labels, so a
passage containing "[@click=app.quit]" would become a live link.  Everything that came
from a producer or a source system goes through `safe` (which also makes control,
bidi and zero-width characters visible via `inert`) and is handed over as `Text`.
"""

from __future__ import annotations

from rich.text import Text

from tracer.engine.vocabulary import Currency, Integrity, SignatureState
from tracer.inert import has_hidden, inert

__all__ = ["STATE_STYLES", "STATE_WIDTH", "hidden_note", "plain", "safe", "safe_line", "short", "state_word"]

#: Colour only repeats the word; the monochrome theme maps all of these to white,
#: and bold/reverse keep the alarms distinct without colour.
STATE_STYLES: dict[str, str] = {
    Integrity.INTACT: "green",
    Currency.VERIFIED: "green",
    SignatureState.VALID: "green",
    Currency.MOVED: "cyan",
    Integrity.PURGED: "yellow",
    Currency.UNCHECKED: "yellow",
    Currency.AMBIGUOUS: "bold magenta",
    Currency.STALE: "bold yellow",
    Integrity.UNAVAILABLE: "bold blue",
    Integrity.CHECKSUM_MISMATCH: "bold reverse red",
    Integrity.SIGNATURE_INVALID: "bold reverse red",
    Integrity.MISSING: "bold reverse red",
}


#: a state column is as wide as the longest word of its axis, so no word is ever cut
STATE_WIDTH: dict[str, int] = {
    "integrity": max(len(w) for w in Integrity),
    "currency": max(len(w) for w in Currency),
}


def plain(text: str, style: str = "") -> Text:
    """Our own literal text (labels, headings): still a Text so no markup is parsed."""
    return Text(text, style=style)


def safe(text: str, style: str = "") -> Text:
    """Untrusted multi-line text, inert and visibly marked."""
    return Text(inert(text), style=style)


def safe_line(text: str, style: str = "", limit: int | None = None) -> Text:
    """Untrusted text for one line (table cells, tree labels): newlines are marked too."""
    shown = inert(text, keep_newlines=False)
    if limit is not None and len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    # a cell narrower than its text ends in "…": an id cut short must not look whole
    return Text(shown, style=style, no_wrap=True, overflow="ellipsis")


def state_word(word: str) -> Text:
    return Text(word, style=STATE_STYLES.get(word, "bold"), overflow="ellipsis")


def short(digest: str | None, n: int = 16) -> str:
    return "—" if not digest else f"{digest[:n]}…"


def hidden_note(text: str) -> Text | None:
    """A warning to show beside text whose hidden characters were made visible."""
    if not has_hidden(text):
        return None
    return plain("⚠ contains control, bidi or zero-width characters, shown as ⟨…⟩", "bold")
