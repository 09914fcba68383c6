"""The high-contrast (monochrome) theme.

States are words; colour only repeats them.  This theme makes every accent white on
black, and maps the 16 ANSI colours used by state styles to white too, so what is left
is the word plus bold/reverse — which is exactly what must still carry the meaning.
"""

from __future__ import annotations

from rich.terminal_theme import TerminalTheme
from textual.theme import Theme

__all__ = ["HIGH_CONTRAST", "MONO_ANSI", "THEME_NAMES"]

_WHITE = "#ffffff"
_BLACK = "#000000"

HIGH_CONTRAST = Theme(
    name="tracer-high-contrast",
    primary=_WHITE,
    secondary=_WHITE,
    accent=_WHITE,
    warning=_WHITE,
    error=_WHITE,
    success=_WHITE,
    foreground=_WHITE,
    background=_BLACK,
    surface=_BLACK,
    panel=_BLACK,
    boost=_BLACK,
    dark=True,
)

_W = (255, 255, 255)
MONO_ANSI = TerminalTheme((0, 0, 0), _W, [(0, 0, 0), *[_W] * 7], [(128, 128, 128), *[_W] * 7])

#: `--theme` choices: name on the command line -> Textual theme name
THEME_NAMES = {"default": "textual-dark", "high-contrast": HIGH_CONTRAST.name}
