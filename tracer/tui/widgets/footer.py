"""The footer: what does not fit is the least important, never the legal hold keys.

Textual lists a screen's own keys before the app's and the footer cuts whatever passes
the right edge, so at 80 columns `H Hold` and `U Release` went past `…` on the answer
screen.  Here which keys stay is decided by rank, not by position: `? Help`, `v Verify`
and `q Quit` first, then the screen's `FOOTER_FIRST` actions in their order, then its
other keys, then the app's; keys are dropped from the lowest rank until the rest fits
whole, and stay in Textual's order on screen.  Every key dropped is in `?` and in the
palette, and at wider sizes all are shown.

A key that does not fit whole is not drawn cut (`q Qui`, `T Tim`): the keys dropped are
hidden and the footer ends in `…`, which says that more keys follow (in `?` and the
palette).
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.dom import NoScreen
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey

__all__ = ["ALWAYS", "TracerFooter"]

#: the app's keys every screen keeps on its footer at any width
ALWAYS = ("help", "verify", "quit")

#: the mark that keys follow past the edge
MORE = "…"


def _words(key: FooterKey) -> str:
    return f"{key.key_display} {key.description}" if key.description else key.key_display


def keep(keys: list[tuple[str, int, bool]], width: int) -> set[int]:
    """Which keys stay: `keys` is (action, cells, the screen's own) in footer order.

    The ranks are `ALWAYS`, then the screen's own keys in the order given (its
    `FOOTER_FIRST` first, by `rank`), then the app's; a key is dropped from the lowest
    rank until the others, with one cell between keys, fit in `width`."""
    total = sum(cells for _a, cells, _o in keys) + max(0, len(keys) - 1)
    kept = set(range(len(keys)))
    if total <= width:
        return kept
    room = width - 2  # " …"
    order = sorted(kept, key=lambda i: _rank(keys[i], i))
    for i in reversed(order):
        if total <= room:
            break
        kept.discard(i)
        total -= keys[i][1] + 1
    return kept


def _rank(key: tuple[str, int, bool], at: int) -> tuple[int, int]:
    action, _cells, own = key
    if action in ALWAYS:
        return (0, ALWAYS.index(action))
    return (1 if own else 2, at)


class TracerFooter(Footer):
    DEFAULT_CSS = """
    TracerFooter #footer-more { width: 1; display: none; }
    """

    _shown: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        self._shown = self._wanted()
        yield from super().compose()
        more = Static(MORE, id="footer-more")
        yield more
        self.styles.grid_size_columns = (self.styles.grid_size_columns or 0) + 1
        self.call_after_refresh(self._fit)

    async def recompose(self) -> None:
        """Bindings changed (a trace loaded, a screen came back): fit the new keys once they
        are mounted; the callback `compose` schedules can run before they are.

        Textual recomposes on every bindings signal (each focus change, each screen
        resumed), mostly to the same keys: rebuilding and restyling every key then is most
        of what a keypress costs.  When the keys, their words and states are what is
        shown, only the fit is redone (a pick table's Enter ranks by the focused widget)."""
        if self._shown is not None and self.children and self._wanted() == self._shown:
            self._fit()
            return
        await super().recompose()
        self._fit()

    def _wanted(self) -> tuple[object, ...] | None:
        """What `Footer.compose` draws from: each shown binding with its state, tooltip and
        key display, and the palette's key; None before the bindings are ready."""
        if not self._bindings_ready:
            return None
        active = self.screen.active_bindings
        app = self.app
        return (
            tuple(
                (key, binding, enabled, tooltip, app.get_key_display(binding))
                for key, (_node, binding, enabled, tooltip) in active.items()
                if binding.show
            ),
            self.show_command_palette,
            app.ENABLE_COMMAND_PALETTE,
            active.get(app.COMMAND_PALETTE_BINDING, (None, None, None, None))[1:],
        )

    def on_resize(self, _event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        """Hide the keys of lowest rank that do not fit; say so with `…`.

        Measured from the keys' words (a compact key is `KEY DESCRIPTION`, one cell
        between keys), not from their regions: a footer under a modal screen has none."""
        try:
            screen = self.screen
        except NoScreen:
            return  # its screen was dismissed before the refresh came: nothing to fit
        width = self.size.width or self.app.size.width
        keys = list(self.query(FooterKey))
        first: tuple[str, ...] = getattr(screen, "FOOTER_FIRST", ())
        app_actions = {b.action for _key, b in self.app._bindings}
        actions = _actions(screen, keys)

        def order(i: int) -> int:
            return first.index(actions[i]) if actions[i] in first else len(first) + i

        ranked = sorted(range(len(keys)), key=order)
        rows = [(actions[i], cell_len(_words(keys[i])), actions[i] not in app_actions) for i in ranked]
        kept = {ranked[j] for j in keep(rows, width)}
        for i, key in enumerate(keys):
            key.display = i in kept
        for more in self.query("#footer-more"):
            more.display = len(kept) < len(keys)


def _actions(screen: Screen[object], keys: list[FooterKey]) -> list[str]:
    """Each key's action; a pick table's Enter stands for a screen action
    (`widgets/pick_table.py`)."""
    picks = getattr(screen.focused, "PICKS", None)
    return [picks.action if picks is not None and k.action == "select_cursor" else k.action for k in keys]
