"""At answer time: had the cited revision already been superseded when the answer was given?

Words first (the engine's sentence), then, only when the revision in force then is not
the current one, what it said, under its own title "Revision R in force when the answer
was generated (date)" — never inside a historical pane, never as the current text.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tracer.engine.answertime import answer_time_sentence
from tracer.engine.times import utc
from tracer.engine.trace import AnswerTrace, PassageTrace
from tracer.tui.text import plain, safe, safe_line

__all__ = ["AnswerTimePane", "answer_time_line", "answer_time_summary", "answer_time_word"]

#: colour only repeats the word
_STYLE = {"current": "green", "unknown": "yellow", "superseded": "bold yellow"}


def answer_time_word(state: str) -> Text:
    """The answer-time state alone, as a table cell shows it (its column says what it is)."""
    return plain(state.upper(), _STYLE.get(state, ""))


def answer_time_line(state: str) -> Text:
    return Text.assemble(plain("at answer time "), answer_time_word(state))


def answer_time_summary(t: AnswerTrace) -> Text:
    """The answer's answer-time state and how many of its claims were given from a superseded revision."""
    out = answer_time_line(t.answer_time)
    superseded = sum(1 for c in t.citations if c.answer_time == "superseded")
    out.append(f"  {superseded} of {len(t.citations)} claim(s) given from a revision already superseded then")
    versions = sorted({p.currency.normalizer for p in t.passages if p.visible and p.currency.normalizer})
    if versions:
        out.append(f"; currency checked under {', '.join(versions)}")
    return out


class AnswerTimePane(Vertical):
    DEFAULT_CSS = "AnswerTimePane { height: auto; margin: 1 0 0 0; }"

    def __init__(self, passage: PassageTrace, id: str | None = None):  # noqa: A002 - Textual spells it `id`
        super().__init__(id=id, classes="answer-time")
        self.passage = passage

    def compose(self) -> ComposeResult:
        p = self.passage
        at = p.currency.answer_time if p.visible else None
        if at is None:
            yield Static(answer_time_line("unknown"), classes="answer-time-state")
            return
        head = answer_time_line(at.state)
        head.append(f" ({at.reason})")
        if p.currency.normalizer:
            head.append(f"   currency checked under {p.currency.normalizer}")
        yield Static(head, classes="answer-time-state")
        yield Static(safe_line(answer_time_sentence(at)), classes="answer-time-sentence")
        excerpt, rev = at.excerpt, at.in_force
        if excerpt is not None and rev is not None:
            title = Text.assemble(
                plain("Revision "),
                safe_line(rev.revision),
                plain(f" in force when the answer was generated ({utc(rev.committed_at)})", "bold"),
            )
            yield Static(title, classes="pane-title answer-time-title")
            yield Static(safe(excerpt), classes="answer-time-excerpt")
