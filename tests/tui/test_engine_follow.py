"""The TUI follows the engine and CLI: withheld hold reasons, one spelling of note targets,
M reaching exports and the lineage, holds over an impact, the /2 diff, a changed origin
at a known path, and an imported answer's header.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import textual.notifications
from textual.widgets import DataTable, Input, Static

from store import admin, queries
from store.crypto import Identity, load_identity
from store.vault import Vault
from tests.helpers import PASSPHRASE, T0, manifest, new_case, passage, revision, signed
from tests.tui.conftest import SIZE, Built, screen_text, settle, until
from tests.tui.test_answer_time import make as make_time_vault
from tests.tui.test_imported import make as make_imported
from tracer.engine.case import CaseDesk
from tracer.engine.session import Session, unlock
from tracer.engine.trust import TrustStore
from tracer.tui import export
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.screens.cases import CasesScreen
from tracer.tui.screens.evidence import EvidenceScreen
from tracer.tui.screens.impact import ImpactScreen
from tracer.tui.screens.lineage import LineageScreen, LNode
from tracer.tui.screens.prompt import PromptScreen
from tracer.tui.screens.unlock import UnlockScreen
from tracer.tui.widgets.current import CurrentRevisionPane
from tracer.tui.widgets.diff import MARK_OPEN
from tracer.tui.widgets.historical import HistoricalText
from tracer.tui.widgets.hold import HoldNotice
from tracer.tui.widgets.status_bar import StatusBar

#: an answer in `support`: omar (no `legal`) sees it
FAQ = "ans-fc62f4dec0ed"
CUSTODIAN_PASSPHRASE = b"northstar-custodian"


def _custodian_session(vault: Path) -> Session:
    ident = load_identity(vault / "keys" / "custodian.key", CUSTODIAN_PASSPHRASE)
    return unlock(vault, ident, trust=TrustStore())


def _omar(vault: Path) -> TracerApp:
    return TracerApp(LaunchOptions(vault, vault / "keys" / "omar.key", b"omar-demo"))


# -- 1. a hold whose author reads collections the viewer cannot ---------------------------


async def test_omar_sees_the_custodians_hold_with_its_reason_and_case_withheld(sample_vault: Path) -> None:
    with _custodian_session(sample_vault) as s:
        desk = CaseDesk(s)
        desk.open_case("LIT-1", "Litigation", "the legal team's own")
        desk.hold("answer", FAQ, "privileged: counsel's litigation strategy", case_id="LIT-1")
    app = _omar(sample_vault)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen(FAQ))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnswerScreen)
        shown = str(screen.query_one("#answer-holds", HoldNotice).render())
        assert "LEGAL HOLD in force" in shown and FAQ in shown
        assert "reason withheld: written by someone who may read collections you cannot" in shown
        assert "case withheld" in shown
        assert "counsel" not in shown and "LIT-1" not in shown
        # marked: the words are the engine's, drawn apart from anything an author wrote
        text = HoldNotice.render_holds(screen.holds)
        for words in ("reason withheld", "case withheld"):
            at = text.plain.index(words)
            assert any(sp.start <= at < sp.end and "reverse" in str(sp.style) for sp in text.spans), words
        assert "counsel" not in screen_text(pilot)


async def test_a_withheld_hold_reason_in_the_case_pane(sample_vault: Path) -> None:
    omar = load_identity(sample_vault / "keys" / "omar.key", b"omar-demo")
    with unlock(sample_vault, omar, trust=TrustStore()) as s:
        CaseDesk(s).open_case("SUP-1", "Support review", "omar's case")
    with _custodian_session(sample_vault) as s:
        CaseDesk(s).hold("answer", FAQ, "privileged: counsel asked", case_id="SUP-1")
    app = _omar(sample_vault)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(20):
            await settle(pilot)
            if isinstance(app.screen, CasesScreen) and app.screen.cases:
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, CasesScreen)
        await pilot.press("enter")
        await settle(pilot)
        pane = str(app.screen.query_one("#case-detail", Static).render())
        assert "Legal holds (1)" in pane
        assert "reason withheld: written by someone who may read collections you cannot" in pane
        assert "counsel" not in pane
        assert "case SUP-1" in pane  # a case omar can see is not withheld


# -- 2. note targets in their one spelling ---------------------------------------------------


async def test_notes_are_written_as_claim_n_and_old_spellings_still_count(built: Built) -> None:
    with unlock(built.vault, load_identity(built.keys.ines, PASSPHRASE), trust=TrustStore()) as s:
        admin.record_finding(s.vault, s.identity, "ans-runbook", "citation [1]", "an older note", T0)
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-runbook"))
        await settle(pilot)
        answer = app.screen
        assert isinstance(answer, AnswerScreen)
        table = answer.query_one("#citations", DataTable)
        assert str(table.get_row_at(0)[3]) == "1"  # `citation [1]` is claim:1
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = "a new note"
        await pilot.press("enter")
        await settle(pilot)
        assert str(table.get_row_at(0)[3]) == "2"
    with Vault.open(built.vault) as v:
        targets = [r.target for r in queries.finding_rows(v, "ans-runbook")]
    assert targets == ["citation [1]", "claim:1"]


async def test_a_tag_on_an_old_spelling_is_canonical() -> None:
    from tracer.tui.case_actions import case_target

    assert case_target("citation [2]") == "claim:2"
    assert case_target("claim:2") == "claim:2"
    assert case_target("passage p1") == "passage:p1"
    assert case_target("passage:p1") == "passage:p1"


# -- 3. M reaches the export and the lineage -------------------------------------------------


async def test_after_m_the_export_records_tracer_norm_2(tmp_path: Path) -> None:
    if not export.available():
        return
    app = make_time_vault(tmp_path)
    out = tmp_path / "pack"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("M")
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-md"))
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["normalizer"] == "tracer-norm/2"


def _lineage_vault(tmp: Path) -> TracerApp:
    """A note citing a page whose later revision changed emphasis only (stale under /1,
    verified under /2), and an answer derived from the note."""
    terms = "# Terms\n\n## Conduct\n\nYou *must not* post **adverts** in profiles.\n"
    case = new_case(tmp / "vault")
    try:
        t1 = revision("terms", "t1", terms, "2026-01-05T00:00:00Z")
        t2 = revision("terms", "t2", terms.replace("*must not*", "_must not_"), "2026-03-01T00:00:00Z")
        note = manifest(
            "note-md",
            "No adverts.",
            [passage(t1, "adverts")],
            kind="note",
            generated_at="2026-01-06T10:00:00Z",
        )
        derived = passage(t1, "adverts")
        derived.update(derived_from="note-md", retrieved_text="No adverts.")
        ans = manifest("ans-from-note", "No adverts.", [derived], generated_at="2026-01-07T10:00:00Z")
        assert case.ingest(t1, t2, signed(case, note), signed(case, ans)).ok
    finally:
        case.close()
    keys = tmp / "keys"
    case.investigators["ines"].save(keys, PASSPHRASE)
    return TracerApp(LaunchOptions(tmp / "vault", keys / "ines.key", PASSPHRASE))


def _find(node: LNode, ident: str) -> LNode | None:
    if node.ident == ident:
        return node
    return next((f for c in node.children if (f := _find(c, ident)) is not None), None)


async def test_after_m_the_lineage_walks_under_tracer_norm_2(tmp_path: Path) -> None:
    app = _lineage_vault(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        states = []
        for _ in range(2):
            app.push_screen(AnswerScreen("ans-from-note"))
            await settle(pilot)
            await pilot.press("l")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, LineageScreen) and screen.root is not None
            note = _find(screen.root, "note-md")
            assert note is not None and note.children
            states.append(note.children[0].currency)
            await pilot.press("escape", "escape")
            await settle(pilot)
            await pilot.press("M")
            await settle(pilot)
        assert states == ["stale", "verified"]


# -- 4. holds over an impact -----------------------------------------------------------------


async def test_the_impact_screen_lists_the_holds_over_its_evidence(built: Built) -> None:
    cust = Identity.from_seed("custodian", b"custodian")  # the fixture vault's custodian
    with unlock(built.vault, cust, trust=TrustStore()) as s:
        CaseDesk(s).hold("answer", "ans-runbook", "litigation \x1b[31m hold")
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(ImpactScreen())
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ImpactScreen)
        row = next(
            i for i, t in enumerate(screen.targets) if t.kind == "document" and t.document == "runbook"
        )
        await pilot.press(*["down"] * row, "enter")
        await settle(pilot)
        holds = screen.query_one("#impact-holds", Static)
        assert holds.has_class("-shown") and holds.display
        text = str(holds.render())
        assert "Legal holds in force over this evidence: 1" in text
        assert "LEGAL HOLD in force" in text and "ans-runbook" in text and "covers ans-runbook" in text
        assert "\x1b" not in text


# -- 5. the /2 diff marks nothing spurious ---------------------------------------------------


async def test_under_norm_2_markdown_markers_are_not_marked_as_deleted(tmp_path: Path) -> None:
    """A bulleted, emphasised quote whose page later changed one word: under /2 the diff is
    against the quote as carried into /2, so only the word is marked; the historical pane
    still shows the recorded text, markers and all."""
    doc = "# Terms\n\n## Conduct\n\n- You *must not* post **adverts** in profiles.\n"
    later = doc.replace("in profiles", "in comments")
    case = new_case(tmp_path / "vault")
    try:
        t1 = revision("terms", "t1", doc, "2026-01-05T00:00:00Z")
        t2 = revision("terms", "t2", later, "2026-03-01T00:00:00Z")
        m = manifest("ans-bul", "No adverts.", [passage(t1, "adverts")], generated_at="2026-01-06T10:00:00Z")
        assert case.ingest(t1, t2, signed(case, m)).ok
    finally:
        case.close()
    keys = tmp_path / "keys"
    case.investigators["ines"].save(keys, PASSPHRASE)
    app = TracerApp(LaunchOptions(tmp_path / "vault", keys / "ines.key", PASSPHRASE))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("M")
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-bul"))
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)
        p = app.screen.passages[0]
        assert p.currency.normalizer == "tracer-norm/2" and p.currency.state == "stale", p.currency
        hist = app.screen.query_one(HistoricalText)
        body = str(hist.query_one(".historical-body", Static).render())
        assert "- You *must not* post **adverts**" in body  # the recorded text, markers and all
        assert MARK_OPEN not in body  # the recorded text, unmarked: the /2 quote is not it
        cur = app.screen.query_one(CurrentRevisionPane)
        marked = str(cur.query_one(".current-body", Static).render())
        assert marked.count(MARK_OPEN) == 1 and "⟦comments" in marked, marked
        assert "carried into tracer-norm/2" in str(cur.query_one(".carried", Static).render())


# -- 6. a known path that now holds another vault ---------------------------------------------


def _two_vaults_at_one_path(tmp: Path) -> tuple[Path, Path]:
    """Open one vault at `tmp/v` on this machine, then put another (new origin) there."""
    first = new_case(tmp / "v")
    first.session().close()
    first.close()
    shutil.rmtree(tmp / "v")
    second = new_case(tmp / "v")
    second.vault.close()
    shutil.rmtree(tmp / "v")
    Vault.create(tmp / "v", second.custodian, "2026-01-01T00:00:00Z", origin="tracer.test/other").close()
    keys = tmp / "keys"
    second.custodian.save(keys, PASSPHRASE)
    return tmp / "v", keys / f"{second.custodian.name}.key"


async def test_the_unlock_card_says_origin_changed_not_first_use(tmp_path: Path) -> None:
    vault, key = _two_vaults_at_one_path(tmp_path)
    app = TracerApp(LaunchOptions(vault, key, None))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        card = str(app.screen.query_one("#custodian", Static).render())
        assert "ORIGIN CHANGED" in card and "FIRST USE" not in card
        assert "tracer.test/vault" in card  # the vault this machine opened here before


async def test_after_unlock_the_origin_change_stays_in_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, key = _two_vaults_at_one_path(tmp_path)
    app = TracerApp(LaunchOptions(vault, key, PASSPHRASE))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        bar = str(app.screen.query_one(StatusBar).render())
        assert "ORIGIN CHANGED" in bar
        loud = [n for n in app._notifications if "ORIGIN CHANGED" in n.message or "ORIGIN" in n.title]
        assert loud and max(n.timeout for n in loud) >= 30
        assert all(n.title != "first use" for n in app._notifications)
        # past the default toast timeout, the warning is still up: the clock the notifications
        # expire by is moved on and the toasts drawn again from what is left (no sleep)
        later = time.time() + app.NOTIFICATION_TIMEOUT + 1
        monkeypatch.setattr(textual.notifications, "time", lambda: later)
        app._refresh_notifications()
        await settle(pilot)
        assert not any(n.timeout <= app.NOTIFICATION_TIMEOUT for n in app._notifications)  # those went
        assert any("ORIGIN CHANGED at" in n.message for n in app._notifications)
        assert "ORIGIN CHANGED" in screen_text(pilot)  # and the status bar says it


# -- 7. an imported answer's header at 80x24 ------------------------------------------------


async def test_at_80x24_the_imported_answer_header_says_where_it_came_from(tmp_path: Path) -> None:
    """The header is on the first screen whole, toasts or not: as many toasts as come in
    (here more than are shown at once), never pushing a line of it off."""
    app, answer_ids = make_imported(tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen(answer_ids[0]))
        await until(pilot, lambda: isinstance(app.screen, AnswerScreen) and app.screen.trace is not None)
        for i in range(5):
            app.notify(
                f"notice {i}: " + "words that wrap at eighty columns " * 3, title="first use", timeout=60
            )
        await until(pilot, lambda: 0 < len(app.screen.query("Toast")) == len(app._notifications))
        head = app.screen.query_one("#answer-head", Static)
        await until(pilot, lambda: "states computed" in screen_text(pilot))
        lines = screen_text(pilot).splitlines()
        assert head.region.y >= 0 and head.region.bottom <= len(lines)
        # the header's own lines, joined as they wrap at 80 columns
        shown = " ".join(line.strip() for line in lines[head.region.y : head.region.bottom])
        assert "IMPORTED — NOT ATTESTED BY THE PRODUCER" in shown
        assert "signed by the importer" in shown
        assert "question [" in shown and "answer [" in shown and "model [" in shown
        assert "states computed" in shown  # the header's last line is not cut
        # the toasts took lines below it: none overlaps the header or the status bar
        for toast in app.screen.query("Toast"):
            assert not toast.region.overlaps(head.region)
            assert toast.region.y > head.region.bottom - 1
