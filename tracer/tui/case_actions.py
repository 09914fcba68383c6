"""Case actions the app routes: the case picker after unlock, and tagging from an answer.

Engine work runs in thread workers (`Engine.use()`); the UI is touched only back on the
app's thread.  A tag goes on the claim (or retrieved passage) selected on the answer
screen (`g`), or on the whole answer (`G`), in the selected case when there is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from store.casefile import canonical_target
from tracer.engine.case import CaseDesk
from tracer.tui.messages import Recorded
from tracer.tui.text import plain, safe_line

if TYPE_CHECKING:
    from tracer.tui.app import TracerApp
    from tracer.tui.screens.answer import AnswerScreen

__all__ = ["case_target", "offer_cases", "start_tag"]


def offer_cases(app: TracerApp) -> None:
    def probe() -> None:
        try:
            with app.engine.use() as s:
                any_case = bool(CaseDesk(s).cases())
        except Exception:  # the picker is an offer; the C key still works
            return
        if any_case:
            app.call_from_thread(app.action_cases)

    app.run_worker(probe, thread=True, group="case-offer", exclusive=True)


def case_target(note_target: str) -> str:
    """The answer screen's selection (`claim:2`, `passage:p1`, or an older spelling such
    as `citation [2]`) as a tag target, in its one spelling."""
    return canonical_target(note_target)


def start_tag(screen: AnswerScreen, whole_answer: bool = False) -> None:
    """Ask for a tag on the selected claim (or retrieved passage), or on the whole answer."""
    from tracer.tui.screens.prompt import PromptScreen

    app = screen.tracer_app
    sel = None if whole_answer else screen.selected()  # the screen's own reading of its cursor
    target = case_target(sel.target) if sel is not None else "answer"
    shown = "the whole answer" if target == "answer" else target
    where = Text.assemble(plain("Tag "), safe_line(shown), plain(" of "), safe_line(screen.answer_id))
    if app.case_id is not None:
        where.append_text(Text.assemble(plain(" in case "), safe_line(app.case_id)))
    where.append(" (a-z 0-9 . _ -; signed)")
    if target != "answer":
        where.append("\nG on the answer screen tags the whole answer instead", style="dim")
    app.push_screen(
        PromptScreen(where, placeholder="e.g. dropped-exception"),
        lambda tag: _tag(app, screen, target, tag),
    )


def _tag(app: TracerApp, screen: AnswerScreen, target: str, tag: str | None) -> None:
    if not tag or not tag.strip():
        return
    case_id, answer_id, word = app.case_id, screen.answer_id, tag.strip()

    def append() -> None:
        try:
            with app.engine.use() as s:
                desk = CaseDesk(s)
                seq = desk.tag(case_id, answer_id, target, word)
                tags = desk.tags_of_answer(answer_id)
        except Exception as exc:  # said plainly on screen
            app.call_from_thread(
                app.notify, f"tag: {safe_line(str(exc)).plain}", severity="error", markup=False
            )
            return
        app.post_message(Recorded())
        said = f"tag {safe_line(word).plain} signed at log entry {seq}"
        screen.post_message(screen.TagsChanged(tags, said))

    app.run_worker(append, thread=True, group="tag", exclusive=True)
