"""The App: CSS, global bindings, the palette provider, and the unlocked session.

Kept small on purpose (frogmouth-style): screens own their flows; the app only holds
the Engine once unlocked and routes the global actions.  Screens other than unlock and
the answers list are imported when first asked for, so start-up pays only for those two.
"""

from __future__ import annotations

import sys
import time
from typing import ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType

from tracer.tui.commands import ActionCommands
from tracer.tui.context import Engine, LaunchOptions
from tracer.tui.messages import Recorded
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.unlock import UnlockScreen
from tracer.tui.theme import HIGH_CONTRAST, MONO_ANSI, THEME_NAMES
from tracer.tui.widgets.status_bar import StatusBar

__all__ = ["TracerApp"]

_SWITCH_INTERVAL = 0.001
_INPUT_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)

#: actions that need an unlocked vault (hidden from footer and palette before)
_NEEDS_SESSION = {"verify", "impact", "access_log", "findings", "answers"}


class TracerApp(App[None]):
    CSS_PATH = "tracer.tcss"
    TITLE = "tracer"
    COMMANDS = App.COMMANDS | {ActionCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="tracer.help", tooltip="Every key on every screen"),
        Binding("w", "answers", "Answers", id="tracer.answers", tooltip="Back to the list of answers"),
        Binding("v", "verify", "Verify", id="tracer.verify", tooltip="Full integrity verification"),
        Binding("i", "impact", "Impact", id="tracer.impact", tooltip="Answers depending on a source"),
        Binding("a", "access_log", "Access log", id="tracer.access", tooltip="Who opened what, when"),
        Binding("F", "findings", "Findings", id="tracer.findings", tooltip="All findings in the vault"),
        Binding("t", "contrast", "Contrast", id="tracer.contrast", tooltip="Toggle high-contrast theme"),
        Binding("q", "quit", "Quit", id="tracer.quit", tooltip="Close the vault and leave"),
    ]

    def __init__(self, options: LaunchOptions):
        super().__init__()
        self.options = options
        self._engine: Engine | None = None
        #: time.monotonic() of the last key or mouse action; background workers (the
        #: state counts) step aside for a moment after it so the response comes first
        self.input_at = 0.0

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, _INPUT_EVENTS):
            self.input_at = time.monotonic()
        await super().on_event(event)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("no vault is unlocked")
        return self._engine

    @property
    def unlocked(self) -> bool:
        return self._engine is not None

    def on_mount(self) -> None:
        # Engine workers are CPU-bound Python threads; a short GIL switch interval lets
        # the UI thread in within ~1 ms of a key event instead of the default 5 ms, many
        # times over per keystroke.
        sys.setswitchinterval(_SWITCH_INTERVAL)
        self.register_theme(HIGH_CONTRAST)
        self._ansi_default = self.ansi_theme_dark
        self._set_contrast(self.options.theme == "high-contrast")
        self.push_screen(UnlockScreen(self.options))

    def opened(self, engine: Engine) -> None:
        """Called by the unlock screen once the engine accepted us."""
        self._engine = engine
        self.switch_screen(AnswersScreen())

    def on_unmount(self) -> None:
        self.workers.cancel_all()
        if self._engine is not None:
            self._engine.close()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in _NEEDS_SESSION and self._engine is None)

    def on_recorded(self, _message: Recorded) -> None:
        for bar in self.screen.query_children(StatusBar):
            bar.refresh()

    def _set_contrast(self, high: bool) -> None:
        self.theme = THEME_NAMES["high-contrast" if high else "default"]
        self.ansi_theme_dark = MONO_ANSI if high else self._ansi_default

    @property
    def high_contrast(self) -> bool:
        return self.theme == HIGH_CONTRAST.name

    def action_contrast(self) -> None:
        self._set_contrast(not self.high_contrast)

    def action_help(self) -> None:
        from tracer.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(type(self.screen)))

    def action_answers(self) -> None:
        while len(self.screen_stack) > 2 and not isinstance(self.screen, AnswersScreen):
            self.pop_screen()

    def action_verify(self) -> None:
        from tracer.tui.screens.verify import VerifyScreen

        self.push_screen(VerifyScreen())

    def action_impact(self) -> None:
        from tracer.tui.screens.impact import ImpactScreen

        self.push_screen(ImpactScreen())

    def action_access_log(self) -> None:
        from tracer.tui.screens.access_log import AccessLogScreen

        self.push_screen(AccessLogScreen())

    def action_findings(self) -> None:
        from tracer.tui.screens.findings import FindingsScreen

        self.push_screen(FindingsScreen())
