"""The footer, with a screen's least important keys after the global `?`, `v` and `q`.

Textual lists a screen's own keys before the app's, so a screen with many keys pushed
`? Help`, `v Verify` and `q Quit` past the right edge at 80 columns.  A screen names the
actions that matter least (`FOOTER_LATER`); here their keys move to just after `q Quit`,
so at 80 columns they are what goes past the edge first, as the least important
columns of a table do.  They stay whole at wider sizes, in `?` and in the palette.

A key that does not fit whole is not drawn cut (`q Qui`, `T Tim`): once laid out,
the keys past the edge are hidden and the footer ends in `…`, which says that more
keys follow (in `?` and the palette).
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey

__all__ = ["LAST_GLOBAL_ACTION", "TracerFooter"]

#: the global key the later keys follow (the app binds ?, v, q in this order)
LAST_GLOBAL_ACTION = "quit"


#: the mark that keys follow past the edge
MORE = "…"


class TracerFooter(Footer):
    DEFAULT_CSS = """
    TracerFooter #footer-more { width: 1; display: none; }
    """

    def compose(self) -> ComposeResult:
        yield from self._ordered()
        more = Static(MORE, id="footer-more")
        yield more
        self.styles.grid_size_columns = (self.styles.grid_size_columns or 0) + 1
        self.call_after_refresh(self._fit)

    def on_resize(self, _event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        """Hide every key that would be cut by the right edge; say so with `…`.

        Measured from the keys' words (a compact key is `KEY DESCRIPTION`, one cell
        between keys), not from their regions: a footer under a modal screen has none."""
        width = self.size.width or self.app.size.width
        keys = list(self.query(FooterKey))
        ends, at = [], 0
        for key in keys:
            words = f"{key.key_display} {key.description}" if key.description else key.key_display
            at += cell_len(words) + (1 if at else 0)
            ends.append(at)
        fits = not ends or ends[-1] <= width
        for key, end in zip(keys, ends, strict=True):
            key.display = fits or end <= width - 2  # room for " …"
        for more in self.query("#footer-more"):
            more.display = not fits

    def _ordered(self) -> ComposeResult:
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
