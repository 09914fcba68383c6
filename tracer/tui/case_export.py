"""The case pack from the case file screen: three questions, as `tracer export --case`
has three options (which of the case's answers by `--tag`, empty for all; why, `--why`,
optional; and where), then the signed pack written in a worker.

The engine work runs on the screen's workers (group `case-export`: a second export
replaces the first) and touches no widget; failures are posted as `Failed`, in the TUI's
words, never a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from tracer.engine.case import CaseDesk
from tracer.tui.export import in_tui_words, pack_check
from tracer.tui.messages import Failed, Recorded
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.text import plain, safe_line

if TYPE_CHECKING:
    from tracer.tui.screens.base import TracerScreen

__all__ = ["start_case_export"]


def start_case_export(screen: TracerScreen, case_id: str) -> None:
    """Read the case's tags (offered in the first question), then ask the three."""

    def tags_for_export() -> None:
        try:
            with screen.engine.use() as s:
                tags = [t.tag for t in CaseDesk(s).view(case_id).tags]
        except Exception as exc:  # shown, never a crash
            screen.post_message(Failed("case export", in_tui_words(str(exc))))
            return
        screen.app.call_from_thread(_ask_tag, screen, case_id, list(dict.fromkeys(tags)))

    screen.run_worker(tags_for_export, thread=True, exclusive=True, group="case-export")


def _ask_tag(screen: TracerScreen, case_id: str, known: list[str]) -> None:
    title = Text.assemble(
        plain("Case pack of "),
        safe_line(case_id),
        plain(
            ": only the answers carrying this tag (empty: every answer the case tagged, "
            "annotated, found or held)"
        ),
    )
    if known:
        title.append_text(
            Text.assemble(plain("\ntags in this case: ", "dim"), safe_line(", ".join(known), "dim"))
        )

    def tagged(tag: str | None) -> None:
        if tag is not None:
            _ask_why(screen, case_id, tag.strip() or None)

    screen.app.push_screen(PromptScreen(title, placeholder="(empty: every answer of the case)"), tagged)


def _ask_why(screen: TracerScreen, case_id: str, tag: str | None) -> None:
    title = Text.assemble(plain("Why this selection? (optional; the cover page says it, or 'not stated')"))

    def why(reason: str | None) -> None:
        if reason is not None:
            _ask_where(screen, case_id, tag, reason.strip())

    screen.app.push_screen(PromptScreen(title, placeholder="(optional)"), why)


def _ask_where(screen: TracerScreen, case_id: str, tag: str | None, why: str) -> None:
    title = Text.assemble(plain("Write the case pack of "), safe_line(case_id), plain(" into directory:"))
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in case_id)

    def chosen(out: str | None) -> None:
        if out:
            screen.run_worker(
                lambda: _export_case(screen, case_id, Path(out), tag, why),
                thread=True,
                exclusive=True,
                group="case-export",
            )

    screen.app.push_screen(PromptScreen(title, f"tracer-case-{safe}"), chosen)


def _export_case(screen: TracerScreen, case_id: str, out: Path, tag: str | None, why: str) -> None:
    from tracer.report import FORMATS, export_pack
    from tracer.report.casepack import CaseSelection

    try:
        with screen.engine.use() as s:
            ids, what = CaseDesk(s).pack_answers(case_id, tag)
            if tag is not None and not ids:
                raise ValueError(
                    f"no answer of case {case_id} you may read carries tag {tag!r}; nothing exported"
                )
            pack = export_pack(
                s,
                ids,
                out,
                set(FORMATS),
                selection=what,
                case=CaseSelection(case_id, what, why),
                normalizer=screen.engine.normalizer,
            )
    except Exception as exc:  # shown to the investigator instead of crashing the app
        screen.post_message(Failed("case export", in_tui_words(str(exc))))
        return
    screen.app.post_message(Recorded())
    ok, checked = pack_check(Path(pack))
    screen.notify(
        f"case pack of {len(ids)} answer(s) written to {pack} "
        f"(signed; export recorded in the access log); {checked}",
        severity="information" if ok else "error",
        markup=False,
        timeout=12,
    )
