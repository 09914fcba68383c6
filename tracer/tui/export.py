"""Report export from any screen that has an answer in hand (list, answer, evidence).

Available only once `tracer.report.export` exists; without it the export key is simply
absent (not a stub that pretends to work).  The report records its own `export` access
entry before it reads anything, so an export from the TUI is on the record like one
from the CLI.
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding

from tracer.tui.messages import Failed, Recorded
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import plain, safe_line

if TYPE_CHECKING:
    from tracer.engine.session import Session
    from tracer.tui.screens.base import TracerScreen

__all__ = ["EXPORT_BINDINGS", "available", "export_answer", "in_tui_words", "pack_check", "start_export"]


def _module() -> ModuleType | None:
    """`tracer.report.export`, imported on first use: it pulls the whole engine and DuckDB,
    which must not delay the app's first frame."""
    try:
        return importlib.import_module("tracer.report.export")
    except ModuleNotFoundError as exc:
        if exc.name in ("tracer.report", "tracer.report.export"):
            return None
        raise


def available() -> bool:
    """Whether the report package is installed, found without importing it."""
    return importlib.util.find_spec("tracer.report") is not None


FORMATS = frozenset({"md", "html", "json"})

#: the `e` binding, on every screen that knows which answer is meant
EXPORT_BINDINGS = (
    [Binding("e", "export", "Export", id="tracer.export", tooltip="Export this answer's signed report pack")]
    if available()
    else []
)


def export_answer(session: Session, answer_id: str, out_dir: Path, normalizer: str = "recorded") -> Path:
    """The signed evidence pack for one answer; the report records its own access entry.
    `normalizer`: the one the screens check currency under (key M), so the pack says what
    the screen said."""
    module = _module()
    if module is None:
        raise RuntimeError("tracer.report is not installed")
    return Path(module.export_pack(session, [answer_id], out_dir, set(FORMATS), normalizer=normalizer))


def default_directory(answer_id: str) -> str:
    return "tracer-report-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in answer_id)


def start_export(screen: TracerScreen, answer_id: str) -> None:
    """Ask for a directory, then write the pack in a worker of `screen`."""
    title = Text.assemble(plain("Export the report of "), safe_line(answer_id), plain(" into directory:"))

    def chosen(out: str | None) -> None:
        if out:
            screen.run_worker(
                partial(_export, screen, answer_id, Path(out)), thread=True, group="export", exclusive=True
            )

    screen.app.push_screen(PromptScreen(title, default_directory(answer_id)), chosen)


def in_tui_words(error: str) -> str:
    """An export error as the TUI says it: the CLI's flag names mean nothing here."""
    return error.replace("choose a new --out", "choose a new directory")


def pack_check(pack: Path) -> tuple[bool, str]:
    """The written pack checked as a third party would (`tracer verify-pack`'s own
    `verify_pack`: signatures, proofs, digests, claims), in words for a notice."""
    from tracer.report.verify import verify_pack

    v = verify_pack(pack)
    checks = sum(v.checked.values())
    if v.ok:
        return True, f"verify-pack: OK, {checks} check(s) passed, no failure"
    first = safe_line(v.failures[0].line()).plain
    return False, f"verify-pack: {len(v.failures)} FAILURE(S), first: {first}"


def _export(screen: TracerScreen, answer_id: str, out: Path) -> None:
    try:
        with screen.engine.use() as s:
            pack = export_answer(s, answer_id, out, screen.engine.normalizer)
    except Exception as exc:  # shown to the investigator instead of crashing the app
        screen.post_message(Failed("export", in_tui_words(str(exc))))
        return
    screen.app.post_message(Recorded())
    ok, checked = pack_check(pack)
    screen.notify(
        f"report pack written to {pack} (export recorded in the access log); {checked}",
        severity="information" if ok else "error",
        markup=False,
        timeout=12,
    )
