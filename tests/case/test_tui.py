"""The case file in the TUI, driven from the keyboard through the real engine: open a
case, select it (the status bar names it), write a multi-line note, tag a claim from the
answer screen, and the picker offered after unlock when a case exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from store.crypto import load_identity
from tests.case.world import World, build_world
from tests.helpers import PASSPHRASE
from tests.tui.conftest import SIZE, Built, screen_text, settle, until
from tests.tui.fixture_vault import make_vault
from tracer.engine.case import CaseDesk, CaseView, HoldView
from tracer.engine.session import unlock
from tracer.engine.trust import TrustStore
from tracer.tui.app import TracerApp
from tracer.tui.commands import screen_actions
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.cases import CasesScreen
from tracer.tui.screens.hold_dialogs import ChooseScreen, ConfirmStatement, HoldRefused
from tracer.tui.screens.note_editor import NoteEditor
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.widgets.status_bar import StatusBar

CLOCK = "2026-11-29T12:00:00Z"


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Built:
    monkeypatch.setenv("TRACER_CLOCK", CLOCK)
    keys = make_vault(tmp_path)
    return Built(tmp_path / "vault", keys)


def _desk_view(built: Built, case_id: str) -> object:
    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore(), read_only=True) as s:
        return CaseDesk(s).view(case_id)


async def _picker(pilot: Pilot[None]) -> None:
    """Wait for the case picker offered after unlock, with its rows drawn: unlock, then
    the probe worker, then the screen's own load (each starts after the one before)."""
    app = pilot.app
    for _ in range(3000):  # a state to reach, however loaded the machine: no time budget
        await settle(pilot)
        screen = app.screen
        shown = isinstance(screen, CasesScreen) and screen.query_one("#cases", DataTable).row_count
        if isinstance(screen, CasesScreen) and screen.cases and shown:
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError(f"the case picker never showed its rows; the screen is {app.screen!r}")


async def _type(pilot: Pilot[None], text: str) -> None:
    for ch in text:
        await pilot.press("enter" if ch == "\n" else ch)


async def test_open_select_note_and_tag_from_the_keyboard(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)  # no case yet: no picker
        assert "tracer.cases" in {a.binding.id for a in screen_actions(app.screen)}
        await pilot.press("C")
        await settle(pilot)
        assert isinstance(app.screen, CasesScreen)
        ids = {a.binding.id for a in screen_actions(app.screen)}
        assert {"tracer.case_select", "tracer.case_open", "tracer.case_note", "tracer.case_clear"} <= ids
        await pilot.press("o")
        assert isinstance(app.screen, PromptScreen)
        await _type(pilot, "INC-9")
        await pilot.press("enter")
        await _type(pilot, "Stale refunds")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NoteEditor)
        await _type(pilot, "Why did it quote\nthirty days?")
        await pilot.press("f2")
        await settle(pilot)
        assert isinstance(app.screen, CasesScreen) and app.case_id == "INC-9"
        bar = str(app.screen.query_one(StatusBar).render())
        assert "case INC-9" in bar
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, NoteEditor)
        await _type(pilot, "First line\nsecond [bold]line[/bold]")
        await pilot.press("f2")
        await settle(pilot)
        shown = str(app.screen.query_one("#case-detail", Static).render())
        assert "First line" in shown and "second [bold]line[/bold]" in shown
        # tag a claim on an answer: the key is offered there only
        assert "tracer.tag" not in {a.binding.id for a in screen_actions(app.screen)}
        app.push_screen(AnswerScreen("ans-stale"))
        await settle(pilot)
        assert "tracer.tag" in {a.binding.id for a in screen_actions(app.screen)}
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        await _type(pilot, "stale-quote")
        await pilot.press("enter")
        await settle(pilot)
    view = _desk_view(built, "INC-9")
    assert [(t.answer_id, t.target, t.tag) for t in view.tags] == [("ans-stale", "claim:1", "stale-quote")]
    assert view.record.purpose == "Why did it quote\nthirty days?"
    assert [n.text for n in view.notes] == ["First line\nsecond [bold]line[/bold]"]
    # looks at evidence made while the case is selected are the case's activity too
    assert [a.action for a in view.activity] == ["case_select", "open_answer"]


async def test_the_case_picker_comes_after_unlock_when_a_case_exists(built: Built) -> None:
    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        CaseDesk(s).open_case("INC-1", "Hostile \x1b[31m title \u202e", "p")
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await _picker(pilot)
        assert isinstance(app.screen, CasesScreen)
        table = app.screen.query_one("#cases", DataTable)
        assert table.row_count == 1
        cells = "".join(getattr(c, "plain", str(c)) for c in table.get_row_at(0))
        assert "\x1b" not in cells and "\u202e" not in cells
        assert "⟨ESC⟩[31m title" in cells and "⟨U+202E⟩" in cells
        await pilot.press("enter")
        await settle(pilot)
        assert app.case_id == "INC-1"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        assert "case INC-1" in str(app.screen.query_one(StatusBar).render())


async def test_a_viewer_without_the_openers_scope_is_offered_nothing(built: Built) -> None:
    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        CaseDesk(s).open_case("INC-1", "Legal matter", "p")
    app: TracerApp = built.app(built.keys.rita)  # support only
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        await pilot.press("C")
        await settle(pilot)
        assert app.screen.query_one("#cases", DataTable).row_count == 0
        assert "Legal matter" not in screen_text(pilot)


async def test_the_answers_filter_keeps_what_a_tag_names(built: Built) -> None:
    from textual.widgets import Input

    from tracer.tui.filtering import FilterError, parse_filter

    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        desk = CaseDesk(s)
        desk.open_case("INC-7", "Runbook", "p")
        desk.tag("INC-7", "ans-runbook", "answer", "dropped-exception")
        desk.tag("INC-7", "ans-stale", "answer", "stale-quote")
    with pytest.raises(FilterError, match="needs a tag"):
        parse_filter("tag:")
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await _picker(pilot)
        await pilot.press("escape")  # leave the picker without selecting: every visible tag counts
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswersScreen)
        await pilot.press("slash")
        await settle(pilot)
        app.screen.query_one(Input).value = "tag:dropped-exception"
        await pilot.press("enter")
        await settle(pilot)
        table = screen.query_one("#answers", DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["ans-runbook"]
        await pilot.press("slash")
        await settle(pilot)
        app.screen.query_one(Input).value = "tag:dropped-exception tag:stale-quote"
        await pilot.press("enter")
        await settle(pilot)
        assert table.row_count == 0  # both tags: no answer carries both


async def test_a_hold_is_shown_on_the_answer_and_on_its_evidence(built: Built) -> None:
    from store.crypto import Identity
    from tracer.tui.screens.evidence import EvidenceScreen

    cust = Identity.from_seed("custodian", b"custodian")  # the fixture vault's custodian
    with unlock(built.vault, cust, trust=TrustStore()) as s:
        CaseDesk(s).hold("answer", "ans-runbook", "litigation \x1b[31m hold")
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-runbook"))
        await settle(pilot)
        shown = screen_text(pilot)
        assert "LEGAL HOLD in force" in shown and "on answer ans-runbook" in shown
        assert "\x1b" not in shown and "⟨ESC⟩[31m" in shown
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)
        assert "LEGAL HOLD in force" in screen_text(pilot)
        app.push_screen(AnswerScreen("ans-verified"))
        await settle(pilot)
        assert "LEGAL HOLD" not in screen_text(pilot)


async def test_the_case_pack_is_written_from_the_cases_screen(built: Built, tmp_path: Path) -> None:
    from textual.widgets import Input

    from tracer.cli.main import main

    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        desk = CaseDesk(s)
        desk.open_case("INC-8", "Runbook", "why")
        desk.tag("INC-8", "ans-runbook", "answer", "dropped-exception")
    app = built.app()
    out = tmp_path / "case-pack"
    async with app.run_test(size=SIZE) as pilot:
        await _picker(pilot)
        assert isinstance(app.screen, CasesScreen)
        ids = {a.binding.id for a in screen_actions(app.screen)}
        assert "tracer.case_export" in ids
        # three questions, as `tracer export --case` has three options: --tag, --why, --out
        for answer in ("dropped-exception", "the runbook answer [bold]dropped[/bold] it", str(out)):
            if answer == "dropped-exception":
                await pilot.press("E")
            else:
                await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, PromptScreen)
            if answer == "dropped-exception":
                assert "tags in this case: dropped-exception" in screen_text(pilot)
            app.screen.query_one(Input).value = answer
        await pilot.press("enter")
        said: list[str] = []
        for _ in range(20):
            await settle(pilot)
            said = [n.message for n in app._notifications]
            if any("verify-pack:" in m for m in said):
                break
        # the pack was checked in the TUI by verify-pack's own function
        assert any("verify-pack: OK" in m and "no failure" in m for m in said), said
    report = (out / "report.md").read_text(encoding="utf-8")
    assert report.count("INC-8") >= 1
    assert "tagged dropped-exception" in report
    assert "the runbook answer" in report and "not stated" not in report
    assert main(["verify-pack", str(out)]) == 0


async def test_a_case_pack_of_a_tag_nothing_carries_is_refused(built: Built, tmp_path: Path) -> None:
    from textual.widgets import Input

    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        CaseDesk(s).open_case("INC-8", "Runbook", "why")
    app = built.app()
    out = tmp_path / "case-pack"
    async with app.run_test(size=SIZE) as pilot:
        await _picker(pilot)
        await pilot.press("E")
        for answer in ("no-such-tag", "", str(out)):
            await settle(pilot)
            app.screen.query_one(Input).value = answer
            await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CasesScreen)
        said = [n.message for n in app._notifications]
        assert any("carries tag 'no-such-tag'; nothing exported" in m for m in said), said
    assert not (out / "report.json").exists()


def _palette_titles(app: TracerApp) -> list[str]:
    from textual.command import CommandList, CommandPalette

    assert isinstance(app.screen, CommandPalette)
    options = app.screen.query_one(CommandList)
    return [str(options.get_option_at_index(i).prompt).split("\n")[0] for i in range(options.option_count)]


def _searched(app: App[None], query: str) -> bool:
    """The palette shows what it found for `query`: typed, no search still gathering,
    and the last one's results dropped into the list."""
    from textual.command import CommandInput, CommandPalette

    palette = app.screen
    if not isinstance(palette, CommandPalette) or palette.query_one(CommandInput).value.strip() != query:
        return False
    group = CommandPalette._GATHER_COMMANDS_GROUP
    return palette.has_class("-ready") and not any(w.group == group for w in app.workers)


async def _palette(pilot: Pilot[None], query: str) -> None:
    await pilot.press("ctrl+p")
    await settle(pilot)
    for ch in query:
        await pilot.press(ch)
    # the palette searches in its own worker, one per keystroke (a newer one cancels the older)
    await until(pilot, lambda: _searched(pilot.app, query))


async def test_the_palette_offers_what_the_screen_it_was_opened_on_offers(built: Built) -> None:
    """The palette asks what to offer about the screen it was opened on, not about itself:
    on the answers list no "Answers" and no "Tag"; on an answer its Tag, which runs there."""
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _palette(pilot, "")
        titles = _palette_titles(app)
        assert "Answers" not in titles and "Help" in titles and "Tag" not in titles, titles
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        app.push_screen(AnswerScreen("ans-stale"))
        await settle(pilot)
        await _palette(pilot, "tag")
        titles = _palette_titles(app)
        assert "Tag" in titles and "Tag answer" in titles, titles
        await pilot.press("escape")
        await settle(pilot)
        await _palette(pilot, "")
        titles = _palette_titles(app)
        # offered: the answer's own actions and the app's; "Answers" and "Help" are not
        # withheld because the palette is on top
        assert {"Evidence", "Lineage", "Tag", "Note", "Help", "Answers", "Verify"} <= set(titles), titles
        await pilot.press("escape")
        await settle(pilot)
        await _palette(pilot, "tag")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)  # the palette's Tag runs the answer's tag
        assert "Tag claim:1 of ans-stale" in screen_text(pilot)


async def test_case_notes_are_listed_on_the_notes_screen_apart_from_answer_notes(built: Built) -> None:
    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        desk = CaseDesk(s)
        desk.open_case("INC-1", "Runbook", "p")
        desk.open_case("INC-2", "Refunds", "p")
        desk.note("INC-1", "first line\nsecond \x1b[31m [bold]line[/bold]", answer="ans-runbook")
        desk.note("INC-2", "refunds note")
        s.add_finding("ans-stale", "citation [1]", "an investigator note on a claim")
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await _picker(pilot)
        await pilot.press("escape")  # no case selected: every case's notes
        await settle(pilot)
        await pilot.press("N")
        await settle(pilot)
        shown = screen_text(pilot)
        assert "Investigator notes on answers: 1" in shown
        assert "Case notes of every case you can see (no case selected): 2" in shown
        case_pane = str(app.screen.query_one("#case-notes", Static).render())
        assert "first line" in case_pane and "second ⟨ESC⟩[31m [bold]line[/bold]" in case_pane
        assert "\x1b" not in case_pane and "refunds note" in case_pane and "on ans-runbook" in case_pane
        await pilot.press("C")  # select INC-1: only its notes
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("N")
        await settle(pilot)
        case_pane = str(app.screen.query_one("#case-notes", Static).render())
        assert "Case notes of case INC-1: 1" in case_pane
        assert "first line" in case_pane and "refunds note" not in case_pane


async def test_the_case_title_is_whole_at_80_columns(built: Built) -> None:
    title = "Northstar: refund windows and the Brightwater complaint"  # 55 characters
    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        CaseDesk(s).open_case("NS-2026-014", title, "p")
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _picker(pilot)
        rows = [line for line in screen_text(pilot).splitlines() if "NS-2026-014" in line]
        assert rows and title in rows[0], rows


async def test_tags_show_on_the_answer_and_g_tags_the_whole_answer(built: Built) -> None:
    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        desk = CaseDesk(s)
        desk.open_case("INC-3", "Stale", "p")
        desk.tag("INC-3", "ans-stale", "claim:1", "stale-quote")
    app = built.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _picker(pilot)
        await pilot.press("enter")  # work on INC-3
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-stale"))
        await settle(pilot)
        head = str(app.screen.query_one("#answer-head", Static).render())
        assert "tags on the answer" not in head  # the tag is on claim 1, not the answer
        table = app.screen.query_one("#citations", DataTable)
        assert str(table.get_cell("c0", "tags")) == "stale-quote"
        await pilot.press("G")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        assert "Tag the whole answer of ans-stale in case INC-3" in screen_text(pilot)
        await _type(pilot, "whole-answer")
        await pilot.press("enter")
        await settle(pilot)
        head = str(app.screen.query_one("#answer-head", Static).render())
        assert "tags on the answer whole-answer" in head
    view = _desk_view(built, "INC-3")
    assert isinstance(view, CaseView)
    assert [(t.target, t.tag) for t in view.tags] == [("claim:1", "stale-quote"), ("answer", "whole-answer")]


# -- legal holds from the TUI -------------------------------------------------------------

SMALL = (80, 24)


def _world_app(tmp_path: Path, who: str) -> tuple[World, TracerApp]:
    """The case world (ines may hold, pat may not) with `who`'s key file; the world's own
    vault handle is closed, so the TUI's session is the only one (as in real use)."""
    world = build_world(tmp_path)
    ident = world.case.investigators[who]
    ident.save(tmp_path / "keys", PASSPHRASE)
    world.case.vault.close()
    return world, TracerApp(LaunchOptions(world.case.path, tmp_path / "keys" / f"{who}.key", PASSPHRASE))


def _desk_holds(world: World) -> list[HoldView]:
    with world.session() as s:
        return CaseDesk(s).holds(in_force_only=True)


async def _open(pilot: Pilot[None], answer_id: str) -> AnswerScreen:
    app = pilot.app
    app.push_screen(AnswerScreen(answer_id))
    await settle(pilot)
    assert isinstance(app.screen, AnswerScreen) and app.screen.trace is not None
    return app.screen


async def test_a_hold_is_placed_and_released_from_the_answer_screen_at_80x24(tmp_path: Path) -> None:
    world, app = _world_app(tmp_path, "ines")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        answer = await _open(pilot, "ans-restart")
        ids = {a.binding.id for a in screen_actions(answer)}
        assert {"tracer.hold", "tracer.release"} <= ids  # footer, palette and ? share them
        banner_when_said: dict[str, bool] = {}
        notify = answer.notify

        def noting(message: str, **kw: Any) -> None:  # what the banner showed as the toast came
            banner_when_said[message] = bool(answer.query("#answer-holds"))
            notify(message, **kw)

        answer.notify = noting  # type: ignore[method-assign]
        await pilot.press("H")
        await settle(pilot)
        assert isinstance(app.screen, ChooseScreen)  # the answer, or the claim's document
        await pilot.press("enter")  # the first: the answer
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        await _type(pilot, "litigation [bold]x[/bold]")
        await pilot.press("enter")
        await settle(pilot)
        # the statement, whole and inert, before anything is signed
        assert isinstance(app.screen, ConfirmStatement)
        shown = screen_text(pilot)
        assert '"reason": "litigation [bold]x[/bold]"' in shown and '"id": "ans-restart"' in shown
        await pilot.press("f2")
        await settle(pilot)
        assert app.screen is answer and len(answer.holds) == 1  # type: ignore[comparison-overlap]
        # on the first screen at 80x24, whatever the claims table scrolled to
        first = screen_text(pilot)
        assert "LEGAL HOLD in force" in first and f"log entry {answer.holds[0].hold.seq}" in first
        seq = answer.holds[0].hold.seq
        await pilot.press("U")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)  # one hold: no choice to make
        await _type(pilot, "settled")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmStatement)
        assert f'"hold_seq": {seq}' in screen_text(pilot)
        await pilot.press("f2")
        await settle(pilot)
        assert app.screen is answer and answer.holds == []  # type: ignore[comparison-overlap]
        assert "LEGAL HOLD" not in screen_text(pilot)
        # each toast came with the state it announces, never ahead of it
        assert banner_when_said == {
            f"legal hold signed at log entry {seq}": True,
            f"hold release signed at log entry {seq + 1}": False,
        }
    assert _desk_holds(world) == []
    with world.session() as s:
        (h,) = CaseDesk(s).holds()
    assert h.hold.reason == "litigation [bold]x[/bold]" and h.hold.release is not None
    assert h.hold.release.reason == "settled"


async def test_escape_at_the_statement_signs_nothing(tmp_path: Path) -> None:
    world, app = _world_app(tmp_path, "ines")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await _open(pilot, "ans-restart")
        await pilot.press("H", "down", "enter")  # the claim's document
        await settle(pilot)
        await _type(pilot, "why")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmStatement)
        assert '"kind": "document"' in screen_text(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen)
    assert _desk_holds(world) == []


async def test_without_the_hold_right_the_refusal_names_who_can_and_records_a_request(
    tmp_path: Path,
) -> None:
    world, app = _world_app(tmp_path, "pat")
    world.case.reopen()
    with world.session("pat") as s:
        CaseDesk(s).open_case("INC-7", "Restart", "why")
    async with app.run_test(size=SMALL) as pilot:
        await _picker(pilot)
        await pilot.press("enter")  # select INC-7
        await settle(pilot)
        assert app.case_id == "INC-7"
        await _open(pilot, "ans-restart")
        await pilot.press("H")
        await settle(pilot)
        assert isinstance(app.screen, HoldRefused)
        shown = screen_text(pilot)
        assert "may not place or release a legal hold" in shown
        assert "ines" in shown and "custodian" in shown
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, NoteEditor)
        await pilot.press("f2")
        await settle(pilot)
        assert isinstance(app.screen, AnswerScreen)
    assert _desk_holds(world) == []
    with world.session("pat") as s:
        notes = CaseDesk(s).view("INC-7").notes
    assert [n.text for n in notes] == [
        "HOLD REQUEST: please place a legal hold on answer ans-restart. Reason:"
    ]


async def test_a_bad_case_id_is_refused_before_title_and_purpose(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("C")
        await settle(pilot)
        await pilot.press("o")
        await _type(pilot, "bad id!")
        await pilot.press("enter")
        await settle(pilot)
        prompt = app.screen
        assert isinstance(prompt, PromptScreen) and prompt.value == "bad id!"  # asked again, kept
        assert "Title" not in str(prompt.title_text)


async def test_a_case_purpose_wraps_on_its_lines(built: Built) -> None:
    ident = load_identity(built.keys.ines, PASSPHRASE)
    with unlock(built.vault, ident, trust=TrustStore()) as s:
        CaseDesk(s).open_case("INC-2", "t", "refunds\nand returns")
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await _picker(pilot)
        await pilot.press("enter")
        await settle(pilot)
        shown = str(app.screen.query_one("#case-detail", Static).render())
        assert "⟨LF⟩" not in shown and "refunds\n" in shown and "and returns" in shown
