"""What every screen after unlock shares: the status bar, the footer, the engine.

Workers post `Failed` instead of raising, so an engine error becomes a visible notice
on the screen that asked, never a crashed terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen

from tracer.tui.context import Engine
from tracer.tui.messages import Failed
from tracer.tui.widgets.footer import TracerFooter
from tracer.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tracer.tui.app import TracerApp

__all__ = ["BACK", "HOLD", "RELEASE", "TracerScreen"]

BACK = Binding("escape", "back", "Back", id="tracer.back", tooltip="Return to where you were")
#: the hold keys of every screen that shows something a hold can cover (`tui/hold_actions.py`)
HOLD = Binding(
    "H",
    "hold",
    "Hold",
    id="tracer.hold",
    tooltip="Place a legal hold (reason asked, statement shown before it is signed)",
)
RELEASE = Binding(
    "U",
    "release",
    "Release hold",
    id="tracer.release",
    tooltip="Release a legal hold in force here (reason asked, statement shown before it is signed)",
)


class TracerScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [BACK]
    #: actions whose keys the footer shows after `? v q` (`widgets/footer.py`): at 80
    #: columns they are the ones that go past the right edge
    FOOTER_LATER: ClassVar[frozenset[str]] = frozenset()

    @property
    def tracer_app(self) -> TracerApp:
        return cast("TracerApp", self.app)

    @property
    def engine(self) -> Engine:
        return self.tracer_app.engine

    def frame_top(self) -> ComposeResult:
        yield StatusBar()

    def frame_bottom(self) -> ComposeResult:
        # compact, and no "^p palette" at the right: at 80 columns ?, v and q stay visible
        # (the palette, ctrl+p, is named on the help screen and in docs/tui.md)
        yield TracerFooter(compact=True, show_command_palette=False)

    def on_screen_resume(self) -> None:
        """The session's checkpoint is the one source; redraw it whenever we come back."""
        for bar in self.query_children(StatusBar):
            bar.refresh(layout=True)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    def on_failed(self, message: Failed) -> None:
        self.notify(f"{message.what}: {message.error}", severity="error", markup=False, timeout=10)
