"""The App: CSS, global bindings, the palette provider, and the unlocked session.

Kept small on purpose (frogmouth-style): screens own their flows; the app only holds
the Engine once unlocked and routes the global actions.  Screens other than unlock and
the answers list are imported when first asked for, so start-up pays only for those two.

With key and passphrase given, the unlock is already running (`tracer.tui.opening`)
when the app starts: the answers screen is drawn empty while it runs and asks for rows
only once the session exists, so the unlock stays on the record before any evidence is
shown; a refusal replaces it with the unlock screen, which names the refusal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import CommandPalette, Provider
from textual.notifications import Notify
from textual.screen import Screen
from textual.worker import get_current_worker

from tracer import tuning
from tracer.inert import inert
from tracer.tui.background import BEAT, Background
from tracer.tui.commands import ActionCommands
from tracer.tui.context import Engine, LaunchOptions
from tracer.tui.messages import Recorded
from tracer.tui.opening import Opening
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.unlock import UnlockScreen, refusable, refusal
from tracer.tui.text import plain, safe_line
from tracer.tui.theme import HIGH_CONTRAST, MONO_ANSI, THEME_NAMES
from tracer.tui.widgets.status_bar import StatusBar, origin_changed

__all__ = ["TracerApp"]

_INPUT_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)

#: how long a toast that must not be missed stays: long, not forever (a toast is dismissed
#: only by a click, and this app is keyboard-only); the status bar repeats what it says
LONG_TOAST = 30.0
#: toasts shown at once: with more, their lines took the header's at 80x24 (a hold or
#: finding banner pushed off the first screen); the least severe, oldest, gives way first
#: and the status bar repeats what must not be missed (pin, warnings, forensic)
MAX_TOASTS = 2
_SEVERITY_RANK = {"information": 0, "warning": 1, "error": 2}
#: actions that need an unlocked vault (hidden from footer and palette before)
_NEEDS_SESSION = {"verify", "impact", "access_log", "notes", "answers", "markdown_normalizer", "cases"}
#: action -> the screen it opens (by class name, so the screens load only when asked for)
_SCREEN_OF = {
    "answers": "AnswersScreen",
    "help": "HelpScreen",
    "impact": "ImpactScreen",
    "access_log": "AccessLogScreen",
    "notes": "NotesScreen",
    "cases": "CasesScreen",
}
#: keys the unlock screen's text fields take for themselves: not offered there
_NOT_ON_UNLOCK = {"help", "contrast", "quit"}


#: what the first Enter, T, i, v, C, ? and ctrl+p would otherwise import while the key
#: waits (bench/open.py: the first timeline took 0.8 s to appear, the palette 0.25 s)
_PREWARM = (
    "textual.command",
    "tracer.engine.timeline",
    "tracer.tui.screens.answer",
    "tracer.tui.screens.timeline",
    "tracer.tui.screens.impact",
    "tracer.tui.screens.verify",
    "tracer.tui.screens.cases",
    "tracer.tui.screens.notes",
    "tracer.tui.screens.help",
    "tracer.tui.screens.access_log",
    "tracer.tui.screens.hold_dialogs",
)


def _prewarm() -> None:
    """Import the screens after unlock, in a thread, so a first key never waits on one."""
    import importlib

    for name in _PREWARM:
        importlib.import_module(name)


class TracerApp(App[None]):
    CSS_PATH = "tracer.tcss"
    TITLE = "tracer"
    #: tracer's actions only: no second "Quit", no "Keys" beside "Help"
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {ActionCommands}
    #: in footer order: at 80 columns the footer keeps ?, v and q right after the screen's
    #: own keys; what follows may scroll off (every key is also in ? and the palette)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="tracer.help", tooltip="Every key on every screen"),
        Binding("v", "verify", "Verify", id="tracer.verify", tooltip="Full integrity verification"),
        Binding("q", "quit", "Quit", id="tracer.quit", tooltip="Close the vault and leave"),
        Binding("w", "answers", "Answers", id="tracer.answers", tooltip="Back to the list of answers"),
        Binding("i", "impact", "Impact", id="tracer.impact", tooltip="Answers depending on a source"),
        Binding(
            "a", "access_log", "Access", id="tracer.access", tooltip="The access log: who opened what, when"
        ),
        Binding(
            "N",
            "notes",
            "Notes",
            id="tracer.notes",
            tooltip="Investigators' signed notes on answers, and the case notes",
        ),
        Binding(
            "C",
            "cases",
            "Cases",
            id="tracer.cases",
            tooltip="The case file: choose or open a case, its notes",
        ),
        Binding("t", "contrast", "Contrast", id="tracer.contrast", tooltip="Toggle high-contrast theme"),
        Binding(
            "M",
            "markdown_normalizer",
            "Markdown-aware",
            id="tracer.normalizer",
            tooltip="Check tracer-norm/1 citations under tracer-norm/2 (Markdown-only edits stop "
            "counting); again: as recorded",
        ),
    ]

    def __init__(self, options: LaunchOptions, opening: Opening | None = None):
        super().__init__()
        self.options = options
        #: the unlock already running (see `build_app`); started on mount when not given
        self._opening = opening
        self._engine: Engine | None = None
        #: the GIL switch interval and collector thresholds before the app set its own
        #: (restored on unmount)
        self._tuned: tuning.Tuned | None = None
        #: the collector's full passes, made only while no key comes (`tracer/tuning.py`)
        self.collector: tuning.Collector | None = None
        #: the case tags and notes belong to (screens/cases.py); None: no case selected
        self.case_id: str | None = None
        #: the gate the answers list's state workers pass before each step: they step
        #: aside after a key and while this thread is behind, so the response comes first
        self.background = Background()

    def _beat(self) -> None:
        """The UI thread's heartbeat; between keys, the collector's full pass."""
        self.background.beat()
        if self.collector is not None and self.background.clear():
            self.collector.idle(away=self.background.away())

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, _INPUT_EVENTS):
            self.background.input()
        await super().on_event(event)

    def on_notify(self, _event: Notify) -> None:
        """After Textual added a toast: keep at most `MAX_TOASTS` (see there)."""
        shown = list(self._notifications)
        if len(shown) <= MAX_TOASTS:
            return
        ranked = sorted(range(len(shown)), key=lambda i: (_SEVERITY_RANK.get(shown[i].severity, 0), i))
        for i in ranked[: len(shown) - MAX_TOASTS]:
            self._unnotify(shown[i], refresh=False)
        self._refresh_notifications()

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("no vault is unlocked")
        return self._engine

    @property
    def unlocked(self) -> bool:
        return self._engine is not None

    def on_mount(self) -> None:
        self._tuned = tuning.interactive()
        self.set_interval(BEAT, self._beat, name="ui-heartbeat")
        self.register_theme(HIGH_CONTRAST)
        self._ansi_default = self.ansi_theme_dark
        self._set_contrast(self.options.theme == "high-contrast")
        o = self.options
        auto = o.key is not None and o.passphrase is not None
        if self._opening is None and not auto:
            self.push_screen(UnlockScreen(o))
            return
        self.push_screen(AnswersScreen())
        if self._opening is not None:
            self.run_worker(self._await_opening(self._opening), group="unlock", exclusive=True)
        else:
            # the unlock imports DuckDB and pyarrow: started once the first frame is drawn
            self.call_after_refresh(self._start_opening)

    def _start_opening(self) -> None:
        self._opening = Opening(self.options)
        self.run_worker(self._await_opening(self._opening), group="unlock", exclusive=True)

    async def _await_opening(self, opening: Opening) -> None:
        try:
            session = await asyncio.wrap_future(opening.future)
        except Exception as exc:
            known = refusable(exc)
            if known is None:
                raise
            self._opening = None
            self.switch_screen(UnlockScreen(self.options, refused=refusal(known)))
            return
        self._opening = None
        self.opened(Engine(session))

    def opened(self, engine: Engine) -> None:
        """Called once the engine accepted us (unlock screen or the early opening)."""
        self._engine = engine
        tuning.long_lived()
        self.collector = tuning.Collector()
        if isinstance(self.screen, AnswersScreen):
            self.screen.engine_ready()
        else:
            self.switch_screen(AnswersScreen())
        self.refresh_bindings()
        self._offer_cases()
        self.run_worker(_prewarm, thread=True, group="prewarm", exclusive=True)
        self.run_worker(self._check_views, thread=True, group="views-aside", exclusive=True)
        st = engine.session.status
        moved = origin_changed(st)
        if st.pin == "first use":
            self.notify(
                Text.assemble(
                    plain("Custodian key pinned on first use: "),
                    safe_line(st.custodian),
                    plain(f" {st.custodian_key_id}. Confirm this fingerprint out of band."),
                ).plain,
                # never a plain "first use" at a path that held another vault
                title="first use, ORIGIN CHANGED" if moved else "first use",
                severity="error" if moved else "information",
                markup=False,
                timeout=8,
            )
        for warning in st.warnings:
            loud = warning in moved
            self.notify(
                inert(warning),
                title="ORIGIN CHANGED" if loud else "",
                severity="error" if loud else "warning",
                markup=False,
                # the origin warning stays long; the status bar says it all session
                timeout=LONG_TOAST if loud else None,
            )
        if st.forensic:
            self.notify(
                inert(st.forensic_reason), title="FORENSIC", severity="error", markup=False, timeout=15
            )

    def _check_views(self) -> None:
        """The per-answer tables' check against the signed commitment, paid here in the
        background rather than by the investigator's first timeline or impact
        (`Engine.check_views_aside`)."""
        worker = get_current_worker()
        engine = self.engine
        try:
            # DuckDB hashes without the GIL: only a UI thread behind holds it back
            engine.check_views_aside(lambda: self.background.wait_for_ui(lambda: worker.is_cancelled))
        except Exception:  # what is left unchecked is checked when first read
            return

    def on_unmount(self) -> None:
        self.workers.cancel_all()
        if self._opening is not None:
            self._opening.discard()
        if self._engine is not None:
            self._engine.close()
        tuning.release(self._tuned)

    @property
    def subject_screen(self) -> Screen[Any]:
        """The screen the actions are about: the top one, or, while the command palette is
        open, the one it was opened on (the palette itself is never what "Help" or "Tag"
        would act on, so it must not decide what is offered)."""
        stack: list[Screen[Any]] = list(self.screen_stack)
        return next((s for s in reversed(stack) if not isinstance(s, CommandPalette)), self.screen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        subject = self.subject_screen
        if action in _NOT_ON_UNLOCK and isinstance(subject, UnlockScreen):
            return False  # typed into the fields there; the unlock screen has its own quit
        if action in _NEEDS_SESSION and self._engine is None:
            return False
        # not offered where it would do nothing: "Answers" on the answers list, "Help" on help
        return _SCREEN_OF.get(action) != type(subject).__name__

    def on_recorded(self, _message: Recorded) -> None:
        """An append moved the checkpoint: every status bar (not only this screen's) says so."""
        from tracer.tui.screens.answer import AnswerScreen

        for screen in self.screen_stack:
            for bar in screen.query(StatusBar):
                bar.refresh(layout=True)
            if isinstance(screen, AnswerScreen):
                screen.show_head()
                screen.refresh_notes()

    def _set_contrast(self, high: bool) -> None:
        self.theme = THEME_NAMES["high-contrast" if high else "default"]
        self.ansi_theme_dark = MONO_ANSI if high else self._ansi_default

    @property
    def high_contrast(self) -> bool:
        return self.theme == HIGH_CONTRAST.name

    def action_contrast(self) -> None:
        self._set_contrast(not self.high_contrast)

    def action_markdown_normalizer(self) -> None:
        """Switch the normalizer /1 citations are checked under; the lists are recomputed."""
        engine = self.engine
        engine.normalizer = "tracer-norm/2" if engine.normalizer == "recorded" else "recorded"
        shown = (
            "tracer-norm/2 for tracer-norm/1 citations" if engine.normalizer != "recorded" else "as recorded"
        )
        self.notify(f"currency now checked {shown}; screens opened from now on use it", markup=False)
        for screen in self.screen_stack:
            for bar in screen.query(StatusBar):
                bar.refresh(layout=True)  # the bar names the mode in use
            if isinstance(screen, AnswersScreen):
                screen.reload()

    def action_help(self) -> None:
        from tracer.tui.screens.help import HelpScreen

        subject = self.subject_screen
        if not isinstance(subject, HelpScreen):
            self.push_screen(HelpScreen(type(subject)))

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

    def _offer_cases(self) -> None:
        """The case picker after unlock, when the vault holds a case this viewer can see."""
        from tracer.tui.case_actions import offer_cases

        offer_cases(self)

    def action_cases(self) -> None:
        from tracer.tui.screens.cases import CasesScreen

        self.push_screen(CasesScreen())

    def action_notes(self) -> None:
        from tracer.tui.screens.notes import NotesScreen

        self.push_screen(NotesScreen())
