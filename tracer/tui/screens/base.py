"""What every screen after unlock shares: the status bar, the footer, the engine.

Workers post `Failed` instead of raising, so an engine error becomes a visible notice
on the screen that asked, never a crashed terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable

from tracer.inert import inert
from tracer.tui.context import Engine
from tracer.tui.messages import Failed
from tracer.tui.widgets.footer import TracerFooter
from tracer.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tracer.tui.app import TracerApp

__all__ = ["BACK", "COPY_ID", "HOLD", "RELEASE", "TracerScreen", "row_key"]

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
    "Release",
    id="tracer.release",
    tooltip="Release a legal hold in force here (reason asked, statement shown before it is signed)",
)


#: the copy key of every screen that shows an id or a digest (`TracerScreen.copy_target`)
COPY_ID = Binding(
    "y",
    "copy_id",
    "Copy id",
    id="tracer.copy_id",
    tooltip="Copy the whole id (or digest) of the highlighted row to the clipboard (OSC 52: "
    "the terminal's own clipboard, nothing leaves the machine)",
)


def row_key(table: DataTable[Text]) -> str | None:
    """The key of a table's highlighted row (None: the table is empty)."""
    if not table.row_count:
        return None
    value = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    return None if value is None else str(value)


class TracerScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [BACK]
    #: actions whose keys the footer keeps first after `? v q` when not all fit, in this
    #: order (`widgets/footer.py`); the screen's other keys follow, then the app's
    FOOTER_FIRST: ClassVar[tuple[str, ...]] = ()

    def copy_target(self) -> tuple[str, str] | None:
        """(what it is, the whole value) the copy key copies; None: nothing highlighted."""
        return None

    def action_copy_id(self) -> None:
        """Copy the highlighted id whole (OSC 52), and say what was copied, inert."""
        target = self.copy_target()
        if target is None:
            self.notify("nothing highlighted to copy", markup=False)
            return
        what, value = target
        self.app.copy_to_clipboard(value)
        self.notify(
            f"copied {what} {inert(value, keep_newlines=False)} to the clipboard (if the terminal allows it)",
            markup=False,
        )

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

    def say(self, said: str) -> None:
        """What a signature's worker asked to be said, once this screen shows its result
        (nothing when it asked nothing)."""
        if said:
            self.notify(said, markup=False)

    def on_failed(self, message: Failed) -> None:
        self.notify(f"{message.what}: {message.error}", severity="error", markup=False, timeout=10)
