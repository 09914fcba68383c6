"""No id, digest or word is cut without a mark at 80×24, on any screen.

The check compares what the terminal shows with what the widgets hold: a token on
screen (in a table, a tree, or anywhere an id-like token stands) must be a whole token
of the content, or end in `…`.  `ans-f5f07070554` where the content holds
`ans-f5f07070554a`, `cit` for `cites`, `revis` for `revision` all fail it.  A token
folded across two lines of a wrapped text counts as whole when the two parts join.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rich.text import Text
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Static, Tree
from textual.widgets._footer import FooterKey

from tests.tui.conftest import Built, screen_text, settle
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.impact import ImpactScreen
from tracer.tui.screens.lineage import LineageScreen
from tracer.tui.screens.timeline import TimelineScreen
from tracer.tui.screens.verify import VerifyScreen

SMALL = (80, 24)
ELLIPSIS = "…"
#: what separates tokens: blanks, box drawing, scroll bars, and punctuation around words
_SPLIT = re.compile(r"[\s\u2500-\u259f,;()\[\]{}\"'`<>|·▶▼▲►◀]+")
#: a token that names a record: an id of the vaults' kinds, or a run of hex (a digest or fingerprint)
_ID = re.compile(r"^(?:(?:ans|psg|run|rev)-[\w.-]+|[0-9a-f]{8,})$")


def _tokens(text: str) -> list[str]:
    return [t.strip(".:!?") for t in _SPLIT.split(text) if t.strip(".:!?")]


def _plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def _content(widget: Widget) -> Iterator[str]:
    """Everything `widget` holds, uncut: what its rendered lines are compared with."""
    if isinstance(widget, DataTable):
        for column in widget.columns.values():
            yield _plain(column.label)
        for row in widget.ordered_rows:
            yield " ".join(_plain(c) for c in widget.get_row(row.key))
    elif isinstance(widget, Tree):
        stack = [widget.root]
        while stack:
            node = stack.pop()
            yield _plain(node.label)
            stack.extend(node.children)
    elif isinstance(widget, FooterKey):
        yield f"{widget.key_display} {widget.description}"
    elif isinstance(widget, Static) or type(widget).render is not Widget.render:
        yield _plain(widget.render())  # a Static, the status bar: each draws its own text


def _whole(screen: Screen[object]) -> set[str]:
    words: set[str] = set()
    for widget in screen.query("*"):
        for text in _content(widget):
            words.update(_tokens(text))
    return words


def _cut(token: str, whole: set[str]) -> bool:
    return token not in whole and not token.endswith(ELLIPSIS)


def _widget_lines(widget: Widget) -> list[str]:
    if not widget.display or widget.region.area == 0:
        return []
    visible = widget.region.intersection(widget.screen.region)
    return [widget.render_line(y).text for y in range(visible.height)]


def cuts(pilot: Pilot[None]) -> list[str]:
    """Every token shown cut without a mark on the current screen."""
    screen = pilot.app.screen
    whole = _whole(screen)
    found: list[str] = []
    # tables and trees crop at their edge and in their cells: every token is checked
    for widget in screen.query("DataTable, Tree"):
        for line in _widget_lines(widget):
            found += [f"{widget.id}: {t!r} in {line!r}" for t in _tokens(line) if _cut(t, whole)]
    # anywhere on screen: a token that reads as an id must be whole or marked
    lines = screen_text(pilot).splitlines()
    for n, line in enumerate(lines):
        tokens = _tokens(line)
        for i, t in enumerate(tokens):
            if not _ID.match(t) or not _cut(t, whole):
                continue
            after = _tokens(lines[n + 1])[:1] if n + 1 < len(lines) else []
            if i == len(tokens) - 1 and after and t + after[0] in whole:
                continue  # folded by a wrapping text: whole across the two lines
            found.append(f"screen line {n}: {t!r} in {line!r}")
    # the footer: the last key on screen is whole, or the footer says more follow
    footer = lines[-1].rstrip() if lines else ""
    last = footer.split()[-1] if footer.split() else ""
    if last and _cut(last, whole):
        found.append(f"footer: {last!r} in {footer!r}")
    return found


async def _look(pilot: Pilot[None], where: str, seen: dict[str, list[str]]) -> None:
    await settle(pilot)
    seen[where] = cuts(pilot)


async def test_no_screen_cuts_an_id_or_a_word_without_a_mark_at_80x24(built: Built) -> None:
    app = built.app()
    seen: dict[str, list[str]] = {}
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        await _look(pilot, "answers", seen)
        for key, name in (("a", "access log"), ("N", "notes"), ("C", "cases"), ("question_mark", "help")):
            await pilot.press(key)
            await _look(pilot, name, seen)
            await pilot.press("escape")
            await settle(pilot)
        await pilot.press("i")
        await _look(pilot, "impact targets", seen)
        for row in range(4):
            await pilot.press("enter")
            await _look(pilot, f"impact target {row}", seen)
            await pilot.press("down")
        await pilot.press("escape")
        await settle(pilot)
        for answer_id in ("ans-stale", "ans-purged", "ans-hostile", "ans-missing"):
            app.push_screen(AnswerScreen(answer_id))
            await _look(pilot, f"answer {answer_id}", seen)
            assert isinstance(app.screen, AnswerScreen)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, EvidenceScreen)
            await _look(pilot, f"evidence {answer_id}", seen)
            await pilot.press("T")
            await settle(pilot)
            if isinstance(app.screen, TimelineScreen):
                await _look(pilot, f"timeline {answer_id}", seen)
                await pilot.press("escape")
            await pilot.press("escape")
            await settle(pilot)
            await pilot.press("l")
            await settle(pilot)
            assert isinstance(app.screen, LineageScreen)
            await _look(pilot, f"lineage {answer_id}", seen)
            await pilot.press("escape", "escape")
            await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, VerifyScreen)
        await _look(pilot, "verify", seen)
        assert not isinstance(app.screen, ImpactScreen)
    bad = {where: found for where, found in seen.items() if found}
    assert not bad, "\n".join(f"{w}:\n  " + "\n  ".join(f) for w, f in bad.items())


async def test_end_and_home_go_to_the_last_and_first_row(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, ImpactScreen)
        table = app.screen.query_one("#impact-targets", DataTable)
        assert table.row_count > 2
        await pilot.press("end")
        await settle(pilot)
        assert table.cursor_row == table.row_count - 1 and table.scroll_x == 0
        await pilot.press("home")
        await settle(pilot)
        assert table.cursor_row == 0


async def test_a_toast_takes_its_own_lines_and_covers_no_data(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(pilot)
        words = (
            "case pack of 1 answer(s) written to tracer-case-INC-27 (signed; export recorded in "
            "the access log); verify-pack: OK, 53 check(s) passed, no failure"
        )
        app.notify(words)
        await settle(pilot)
        for _ in range(20):
            if app.screen.query("Toast"):
                break
            await pilot.pause()
        toast = app.screen.query_one("Toast").region
        assert toast.height >= 2
        # its last line is not under the footer (a scroll bar column made it a line short)
        assert "no failure" in screen_text(pilot)
        rack = app.screen.query_one("ToastRack")
        for widget in app.screen.query("DataTable, Static, StatusBar, TracerFooter"):
            if widget.display and widget.region.area and rack not in widget.ancestors:
                assert not widget.region.overlaps(toast), (widget, widget.region, toast)
