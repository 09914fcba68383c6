"""Who is unlocked, the checkpoint and the custodian pin, on every screen; the selected
case, and the normalizer currency is checked under when it is not the recorded one.

When the vault was opened for forensic inspection the bar says FORENSIC and why, so
no screen can be mistaken for a normal, trusted opening; and when the vault at this path
is not the one this machine last opened there, it says ORIGIN CHANGED beside the pin, on
every screen, for as long as the session lasts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.widget import Widget

from tracer.tui.text import plain, safe_line

if TYPE_CHECKING:
    from tracer.engine.session import OpenStatus
    from tracer.tui.app import TracerApp

__all__ = ["StatusBar", "origin_changed"]


def origin_changed(st: OpenStatus) -> list[str]:
    """The unlock's ORIGIN CHANGED warnings (`TrustStore.check_custodian`), as the CLI
    picks them out to say them loudly."""
    return [st.origin_changed] if st.origin_changed else []


class StatusBar(Widget):
    DEFAULT_CSS = "StatusBar { dock: top; height: auto; max-height: 3; }"

    def render(self) -> Text:
        app = cast("TracerApp", self.app)
        if not app.unlocked:
            return plain("locked: no vault unlocked yet")
        s = app.engine.session
        st = s.status
        self.set_class(st.forensic, "-forensic")
        out = Text.assemble(
            safe_line(s.who),
            plain(
                f"  ·  checkpoint size {st.checkpoint_size} root {st.checkpoint_root[:12]}…  ·  custodian "
            ),
            safe_line(st.custodian),
            plain(f" {st.custodian_key_id[:8]} ({st.pin})"),
        )
        if origin_changed(st):
            # never "(first use)" alone at a path that held another vault
            out.append(" ")
            out.append("ORIGIN CHANGED", style="bold reverse")
            out.append(": another vault than this machine last opened here")
        if app.case_id is not None:
            out.append("  ·  case ")
            out.append_text(safe_line(app.case_id))
        if app.engine.normalizer != "recorded":
            # key M: the screens opened since check tracer-norm/1 citations under this one
            out.append("  ·  ")
            out.append(f"currency under {app.engine.normalizer}", style="bold")
            out.append(" (M: as recorded)")
        if st.journal is not None:
            out.append("  ·  read-only: access journalled locally")
        if st.forensic:
            out.append("\n")
            out.append("FORENSIC", style="bold reverse")
            out.append(" inspection only: ")
            out.append_text(safe_line(st.forensic_reason))
        return out
