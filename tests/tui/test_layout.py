"""Every fact whole at 80×24 and 160×48: state words, the footer's keys, the unlock card."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.tui.conftest import Built, screen_text, settle, until
from tests.tui.fixture_vault import ANSWER_IDS
from tracer.engine.answertime import ANSWER_TIME
from tracer.engine.trace import Summary
from tracer.engine.vocabulary import Currency, Integrity
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen, Looked
from tracer.tui.screens.impact import ImpactScreen
from tracer.tui.screens.unlock import UnlockScreen

SIZES = [(80, 24), (160, 48)]


INTEGRITY, CURRENCY = tuple(Integrity), tuple(Currency)


def _pairs() -> list[tuple[Integrity, Currency]]:
    """Every word of both axes, paired so that each appears at least once."""
    n = max(len(INTEGRITY), len(CURRENCY))
    return [(INTEGRITY[i % len(INTEGRITY)], CURRENCY[i % len(CURRENCY)]) for i in range(n)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_state_word_is_cut_in_the_answers_list(built: Built, size: tuple[int, int]) -> None:
    app = built.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswersScreen)
        pairs = _pairs()
        ids = list(ANSWER_IDS[: len(pairs)])
        # the engine's words are put in by the screen's own message: what is tested is
        # the layout, for words the fixture vault does not happen to produce
        states = {a: Looked(Summary(a, i, c, True), None) for a, (i, c) in zip(ids, pairs, strict=True)}
        screen.post_message(AnswersScreen.States(screen.generation, states))

        def drawn() -> bool:  # states are drawn in batches (`answers.REDRAW`): wait on them
            return all(
                screen.table.get_cell(a, "integrity").plain == i
                for a, (i, _c) in zip(ids, pairs, strict=True)
            )

        await until(pilot, drawn)
        lines = screen_text(pilot).splitlines()
        for answer_id, (integrity, currency) in zip(ids, pairs, strict=True):
            row = next(line for line in lines if answer_id in line)
            words = row.split()
            assert integrity in words and currency in words, (size, row)


def _longest(words: tuple[str, ...]) -> str:
    return max(words, key=len)


async def _words_on_row(pilot: Pilot[None], table_id: str, cells: dict[str, str], must: str) -> str:
    """Put `cells` (column key -> word) into the first row of `table_id` and return the
    line holding the word `must` as the terminal shows it: the layout is what is tested,
    for the longest words of each vocabulary."""
    table = pilot.app.screen.query_one(f"#{table_id}", DataTable)
    row = table.ordered_rows[0].key
    for column, word in cells.items():
        table.update_cell(row, column, Text(word), update_width=False)
    table.scroll_visible(animate=False)  # at 80x24 the claims sit low in the answer's body
    await settle(pilot)
    line = next((x for x in screen_text(pilot).splitlines() if must in x.split()), "")
    for word in cells.values():
        assert word in line.split(), (table_id, word, line)
    return line


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_state_word_is_cut_in_the_claims_impact_and_timeline(
    built: Built, size: tuple[int, int]
) -> None:
    longest = {"integrity": _longest(INTEGRITY), "currency": _longest(CURRENCY)}
    app = built.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-stale"))
        await settle(pilot)
        claims = app.screen.query_one("#citations", DataTable)
        # the states come right after the claim number, before long ids and spans
        assert [str(c.key.value) for c in claims.columns.values()][:3] == ["claim", "integrity", "currency"]
        await _words_on_row(pilot, "citations", longest, "[1]")

        await pilot.press("T")  # the cited document's timeline: time, both states, then the id
        await settle(pilot)
        at_answer = _longest(tuple(w.upper() for w in ANSWER_TIME))
        cells = {"at answer": at_answer, "today": longest["currency"]}
        line = await _words_on_row(pilot, "timeline", cells, "2026-01-05T00:00:00")
        assert "new revision" in line  # the first row is revision A; now an answer row
        timeline = app.screen.query_one("#timeline", DataTable)
        timeline.move_cursor(row=1)
        await pilot.pause()
        await _words_on_row(pilot, "timeline", cells, "2026-01-05T00:00:00")
        answer_row = next(x for x in screen_text(pilot).splitlines() if "ans-stale" in x)
        assert "ans-stale" in answer_row.split()  # the id whole
        passage = answer_row.split()[answer_row.split().index("ans-stale") + 1]
        assert passage == "p1", answer_row  # and the passage beside it: rows never look alike
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("i")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ImpactScreen)
        targets = screen.query_one("#impact-targets", DataTable)
        targets.move_cursor(row=[(t.kind, t.document) for t in screen.targets].index(("document", "returns")))
        await pilot.press("enter")
        await settle(pilot)
        line = await _words_on_row(pilot, "impact-answers", longest, "ans-stale")
        assert "ans-stale" in line.split()


#: how to reach each screen from the answers list: (answer to open first, keys to press)
ROUTES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "AnswersScreen": (None, ()),
    "AnswerScreen": ("ans-stale", ()),
    "EvidenceScreen": ("ans-stale", ("enter",)),
    "LineageScreen": ("ans-derived", ("l",)),
    "TimelineScreen": ("ans-stale", ("T",)),
    "ImpactScreen": (None, ("i",)),
    "AccessLogScreen": (None, ("a",)),
    "VerifyScreen": (None, ("v",)),
    "NotesScreen": (None, ("N",)),
    "CasesScreen": (None, ("C",)),
    "HelpScreen": (None, ("question_mark",)),
}
#: the keys every screen after unlock keeps on its 80-column footer (Help is not offered
#: on the help screen itself: it would do nothing there)
GLOBAL_KEYS = ("? Help", "v Verify", "q Quit")
#: and the screen's own keys that must be there too, whole: on every screen a hold can
#: cover, placing and releasing one (`widgets/footer.py` ranks them before the rest)
OWN_KEYS: dict[str, tuple[str, ...]] = {
    "AnswersScreen": ("⏎ Open", "/ Filter", "e Export", "y Copy id"),
    "AnswerScreen": ("⏎ Evidence", "esc Back", "l Lineage", "n Note", "H Hold", "U Release"),
    "EvidenceScreen": ("esc Back", "n Note", "T Timeline", "e Export", "H Hold", "U Release"),
    "LineageScreen": ("esc Back",),
    "TimelineScreen": ("⏎ Open answer", "esc Back", "H Hold", "U Release", "y Copy id"),
    "ImpactScreen": ("⏎ Select", "esc Back", "y Copy id"),
    "AccessLogScreen": ("esc Back", "y Copy id"),
    "VerifyScreen": ("⏎ Go to record", "esc Back", "c Copy record", "r Run again"),
    "NotesScreen": ("⏎ Open answer", "esc Back"),
    "CasesScreen": ("⏎ Select case", "esc Back", "o New", "n Note", "H Hold", "U Release"),
    "HelpScreen": ("esc Back",),
}


def test_every_screen_has_a_route() -> None:
    """A new screen must be added to the footer test below."""
    from tracer.tui.screens.base import TracerScreen
    from tracer.tui.screens.help import SCREENS  # imports every screen

    listed = {cls.__name__ for _name, cls in SCREENS}

    def subclasses(cls: type[object]) -> set[str]:
        out: set[str] = set()
        sub: type[object]
        for sub in cls.__subclasses__():
            out |= {sub.__name__} | subclasses(sub)
        return out

    assert subclasses(TracerScreen) == set(ROUTES)
    # and the help screen lists the keys of each (itself aside)
    assert set(ROUTES) - {"HelpScreen"} <= listed


async def test_every_footer_keeps_its_keys_and_help_verify_quit_at_80(built: Built) -> None:
    """Every screen's footer, each reached by its route from the answers list of one app
    (a fresh app per screen drew the same footers; a screen resumed must keep its keys
    too).  Every screen is looked at before the test fails, naming each one short."""
    app = built.app()
    short: dict[str, list[str]] = {}
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for name in sorted(ROUTES):
            for _ in range(4):  # back to the answers list: at most answer, evidence, timeline
                if isinstance(app.screen, AnswersScreen):
                    break
                await pilot.press("escape")
                await settle(pilot)
            assert isinstance(app.screen, AnswersScreen), (name, app.screen)
            answer, keys = ROUTES[name]
            if answer is not None:
                app.push_screen(AnswerScreen(answer))
                await settle(pilot)
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
            assert type(app.screen).__name__ == name
            footer = screen_text(pilot).splitlines()[-1]
            wanted = [k for k in GLOBAL_KEYS if not (name == "HelpScreen" and k == "? Help")]
            short[name] = [key for key in (*OWN_KEYS[name], *wanted) if f"{key} " not in f"{footer} "]
            short[name] += [footer] if short[name] else []
    assert set(short) == set(ROUTES)
    assert not any(short.values()), {name: keys for name, keys in short.items() if keys}


async def test_an_answer_outside_your_scope_offers_no_action_on_it(built: Built) -> None:
    app = built.app(built.keys.rita)  # support only: note-1 cites a restricted draft
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("note-1"))
        await settle(pilot)
        assert "UNAVAILABLE" in screen_text(pilot)
        footer = screen_text(pilot).splitlines()[-1]
        for key in ("⏎ Evidence", "l Lineage", "T Timeline", "n Note", "g Tag", "G Tag answer", "e Export"):
            assert key not in footer, (key, footer)
        for key in ("esc Back", *GLOBAL_KEYS):
            assert key in footer, (key, footer)


async def test_the_unlock_card_and_its_footer_are_whole_at_80x24(built: Built) -> None:
    app = built.app(passphrase=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        text = screen_text(pilot)
        for label in ("Unlock a tracer vault", "Vault", "Custodian:", "Investigator key file", "Passphrase"):
            assert label in text, label
        assert "Forensic (inspect a vault that failed the rollback check): off" in text
        footer = text.splitlines()[-1]
        # the fields take printable keys: q is not offered here, Escape quits; and the
        # footer keeps Unlock and Quit at 80 columns
        assert "q Quit" not in footer and "esc Quit" in footer, footer
        assert "⏎ Unlock" in footer, footer


async def test_the_answer_header_stays_while_the_body_scrolls(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-hostile"))
        await settle(pilot)
        body = app.screen.query_one("#answer-body")
        body.scroll_end(animate=False)
        await pilot.pause()
        text = screen_text(pilot)
        assert "answer ans-hostile" in text and "states computed" in text
