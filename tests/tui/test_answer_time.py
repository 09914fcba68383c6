"""Answer-time currency in the TUI: evidence pane, answer line, revision timeline, filter, /2 toggle.

A vault of its own: a returns policy whose r2 (fourteen days) was committed three weeks
before an answer that still quoted r1 (thirty days), then r3 (seven days) after it; and a
terms page whose later revision changed only emphasis markers.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from tests.helpers import PASSPHRASE, manifest, new_case, passage, revision, signed
from tests.tui.conftest import SIZE, screen_text, settle
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.timeline import TimelineScreen
from tracer.tui.widgets.answer_time import AnswerTimePane
from tracer.tui.widgets.status_bar import StatusBar

DOC = "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within {} days of delivery.\n"
TERMS = "# Terms\n\n## Conduct\n\nYou *must not* post **adverts** in profiles.\n"


#: the same instants, as a producer in another time zone records them
OFFSETS = {
    "2026-01-05T00:00:00Z": "2026-01-05T02:00:00+02:00",
    "2026-01-11T00:00:00Z": "2026-01-11T01:00:00+01:00",
    "2026-03-01T00:00:00Z": "2026-02-28T19:00:00-05:00",
}


def make(tmp: Path, offsets: bool = False) -> TracerApp:
    at = (lambda t: OFFSETS[t]) if offsets else (lambda t: t)
    case = new_case(tmp / "vault")
    try:
        r1 = revision("returns", "r1", DOC.format("thirty"), at("2026-01-05T00:00:00Z"))
        r2 = revision("returns", "r2", DOC.format("fourteen"), at("2026-01-11T00:00:00Z"))
        r3 = revision("returns", "r3", DOC.format("seven"), at("2026-03-01T00:00:00Z"))
        t1 = revision("terms", "t1", TERMS, "2026-01-05T00:00:00Z")
        t2 = revision("terms", "t2", TERMS.replace("*must not*", "_must not_"), "2026-03-01T00:00:00Z")
        thirty = [passage(r1, "thirty")]
        lag = manifest("ans-lag", "Thirty days.", thirty, generated_at="2026-02-01T10:00:00Z")
        ok = manifest("ans-ok", "Thirty days.", [passage(r1, "thirty")], generated_at="2026-01-06T10:00:00Z")
        md = manifest("ans-md", "No adverts.", [passage(t1, "adverts")], generated_at="2026-01-06T11:00:00Z")
        assert case.ingest(r1, r2, r3, t1, t2, *(signed(case, m) for m in (lag, ok, md))).ok
    finally:
        case.close()
    keys = tmp / "keys"
    case.investigators["ines"].save(keys, PASSPHRASE)
    return TracerApp(LaunchOptions(tmp / "vault", keys / "ines.key", PASSPHRASE))


def rows(table: DataTable[object]) -> list[str]:
    return [str(k.value) for k in table.rows]


async def test_evidence_shows_the_revision_in_force_then_apart(tmp_path: Path) -> None:
    app = make(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-lag"))
        await settle(pilot)
        line = str(app.screen.query_one("#answer-time", Static).render())
        assert "at answer time SUPERSEDED" in line and "1 of 1 claim(s)" in line
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)
        pane = app.screen.query_one(AnswerTimePane)
        state = str(pane.query_one(".answer-time-state", Static).render())
        sentence = str(pane.query_one(".answer-time-sentence", Static).render())
        title = str(pane.query_one(".answer-time-title", Static).render())
        excerpt = str(pane.query_one(".answer-time-excerpt", Static).render())
        assert "SUPERSEDED (changed_before_answer)" in state and "tracer-norm/1" in state
        assert "revision r2, published 21 days before this answer, already said otherwise" in sentence
        assert title == "Revision r2 in force when the answer was generated (2026-01-11T00:00:00Z)"
        assert "fourteen" in excerpt and "thirty" not in excerpt and "seven" not in excerpt


async def test_timeline_places_answers_among_revisions_and_opens_them(tmp_path: Path) -> None:
    app = make(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-lag"))
        await settle(pilot)
        await pilot.press("T")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        table = app.screen.query_one("#timeline", DataTable)
        keys = rows(table)
        # r1, ans-ok (current then), r2, ans-lag (superseded), r3 (latest)
        assert [k[0] for k in keys] == ["r", "a", "r", "a", "r"]
        assert keys[1].endswith("ans-ok") and keys[3].endswith("ans-lag")
        assert "superseded" in str(app.screen.query_one("#timeline-summary", Static).render())
        await pilot.press("s")
        shown = rows(table)
        assert [k for k in shown if k.startswith("a")] == [keys[3]]
        await pilot.press(*["down"] * shown.index(keys[3]), "enter")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen) and app.screen.answer_id == "ans-lag"


async def test_answers_filter_selects_answered_from_superseded(tmp_path: Path) -> None:
    app = make(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        await pilot.press("slash")
        await pilot.press(*"answer-time:superseded")
        await pilot.press("enter")
        await settle(pilot)
        assert rows(app.screen.query_one("#answers", DataTable)) == ["ans-lag"]


async def test_markdown_aware_toggle_checks_v1_citations_under_v2(tmp_path: Path) -> None:
    app = make(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-md"))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswerScreen) and screen.trace is not None
        assert screen.trace.passages[0].currency.state == "stale"
        await pilot.press("M")
        await settle(pilot)
        assert app.engine.normalizer == "tracer-norm/2"
        app.push_screen(AnswerScreen("ans-md"))
        await settle(pilot)
        again = app.screen
        assert isinstance(again, AnswerScreen) and again.trace is not None
        c = again.trace.passages[0].currency
        assert (c.state, c.normalizer) == ("verified", "tracer-norm/2")
        assert "tracer-norm/2" in str(again.query_one("#answer-time", Static).render())


async def test_the_evidence_screen_spells_revision_times_in_utc(tmp_path: Path) -> None:
    """Revisions committed with an offset are echoed in UTC, as the CLI, JSON and reports do."""
    app = make(tmp_path, offsets=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-lag"))
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)
        shown = screen_text(pilot)
        for offset in ("+02:00", "+01:00", "-05:00"):
            assert offset not in shown, offset
        assert "revision r1 (2026-01-05T00:00:00Z)" in shown  # the historical pane's title
        assert "Current revision r3 (2026-03-01T00:00:00Z)" in shown
        assert "(2026-01-11T00:00:00Z)" in shown  # the revision in force at answer time


async def test_the_status_bar_names_the_normalizer_after_m(tmp_path: Path) -> None:
    app = make(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "currency under" not in str(app.screen.query_one(StatusBar).render())
        await pilot.press("M")
        await settle(pilot)
        assert "currency under tracer-norm/2" in str(app.screen.query_one(StatusBar).render())
        app.push_screen(AnswerScreen("ans-md"))
        await settle(pilot)
        assert "currency under tracer-norm/2" in str(app.screen.query_one(StatusBar).render())
        await pilot.press("M")
        await settle(pilot)
        assert "currency under" not in str(app.screen.query_one(StatusBar).render())
