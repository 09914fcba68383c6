"""The command palette lists every action that has a key on the current screen.

Bindings are the single source: each has an `id` (prefixed "tracer.") and a tooltip,
so the footer, the help screen and the palette can never disagree.  The palette shows
an action by its words ("Verify"), with the key and the tooltip as its help line; it is
the only provider (`TracerApp.COMMANDS`), so Textual's own "Quit", "Keys" and theme
commands do not stand beside tracer's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen

__all__ = ["ID_PREFIX", "Action", "ActionCommands", "screen_actions"]

ID_PREFIX = "tracer."


@dataclass(frozen=True)
class Action:
    node: DOMNode
    binding: Binding

    @property
    def title(self) -> str:
        return self.binding.description

    def help(self, app: App[object]) -> str:
        return f"key {app.get_key_display(self.binding)}: {self.binding.tooltip}"


def screen_actions(screen: Screen[Any]) -> Iterator[Action]:
    """Every enabled tracer action of `screen` and of the app.

    Walks the bindings themselves rather than `active_bindings`, where a focused
    widget's key (a table's Enter) would hide the screen action bound to that key.
    """
    seen: set[str] = set()
    for node in (screen, screen.app):
        for _key, b in node._bindings:
            if not (b.id and b.id.startswith(ID_PREFIX)) or b.id in seen:
                continue
            if node.check_action(b.action, ()) is False:
                continue
            seen.add(b.id)
            yield Action(node, b)


class ActionCommands(Provider):
    async def discover(self) -> Hits:
        for action in screen_actions(self.screen):
            yield DiscoveryHit(action.title, self._runner(action), help=action.help(self.app))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for action in screen_actions(self.screen):
            score = matcher.match(action.title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(action.title),
                    self._runner(action),
                    help=action.help(self.app),
                )

    def _runner(self, action: Action) -> Callable[[], object]:
        return partial(self.app.run_action, action.binding.action, action.node)
