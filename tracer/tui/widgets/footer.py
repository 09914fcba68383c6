"""The footer, with a screen's least important keys after the global `?`, `v` and `q`.

Textual lists a screen's own keys before the app's, so a screen with many keys pushed
`? Help`, `v Verify` and `q Quit` past the right edge at 80 columns.  A screen names the
actions that matter least (`FOOTER_LATER`); here their keys move to just after `q Quit`,
so at 80 columns they are what goes past the edge first, as the least important
columns of a table do.  They stay whole at wider sizes, in `?` and in the palette.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer

__all__ = ["LAST_GLOBAL_ACTION", "TracerFooter"]

#: the global key the later keys follow (the app binds ?, v, q in this order)
LAST_GLOBAL_ACTION = "quit"


class TracerFooter(Footer):
    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        later_actions: frozenset[str] = getattr(self.screen, "FOOTER_LATER", frozenset())
        later = [k for k in keys if getattr(k, "action", None) in later_actions]
        if not later:
            yield from keys
            return
        rest = [k for k in keys if k not in later]
        at = next(
            (i + 1 for i, k in enumerate(rest) if getattr(k, "action", None) == LAST_GLOBAL_ACTION),
            len(rest),
        )
        yield from [*rest[:at], *later, *rest[at:]]
