"""Unlock: success with a typed passphrase, and every refusal said plainly."""

from __future__ import annotations

from textual.widgets import Checkbox, Input, Static

from store.crypto import Identity, load_identity
from tests.helpers import PASSPHRASE, damage_a_block
from tests.tui.conftest import SIZE, Built, settle
from tracer.engine.trust import Seen, TrustStore
from tracer.tui.app import TracerApp
from tracer.tui.context import LaunchOptions
from tracer.tui.screens.answers import AnswersScreen
from tracer.tui.screens.unlock import UnlockScreen
from tracer.tui.widgets.status_bar import StatusBar


async def _refusal(built: Built, **kw: object) -> str:
    app = built.app(**kw)  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        assert not app.unlocked
        return str(app.screen.query_one("#refusal", Static).render())


async def test_typed_passphrase_unlocks_and_shows_who(built: Built) -> None:
    app = built.app(passphrase=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        assert app.focused is app.screen.query_one("#passphrase", Input)
        app.screen.query_one("#passphrase", Input).value = PASSPHRASE.decode()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        bar = str(app.screen.query_one(StatusBar).render())
        assert "ines (investigator" in bar and "checkpoint size" in bar and "first use" in bar


async def test_unknown_investigator_is_refused(built: Built) -> None:
    text = await _refusal(built, key=built.keys.stranger)
    assert "REFUSED: unknown investigator" in text and "not an investigator" in text


async def test_revoked_investigator_is_refused(built: Built) -> None:
    text = await _refusal(built, key=built.keys.olaf)
    assert "REFUSED: revoked investigator" in text and "revoked at" in text


async def test_wrong_passphrase_is_refused(built: Built) -> None:
    text = await _refusal(built, passphrase=b"not the passphrase")
    assert "wrong passphrase" in text


def _remember_future(built: Built) -> None:
    ines = load_identity(built.keys.ines, PASSPHRASE)
    custodian = Identity.from_seed("custodian", b"custodian")
    TrustStore().check_custodian("tracer.test/vault", custodian.key_id, custodian.name)
    TrustStore().remember("tracer.test/vault", ines.key_id, Seen(10_000, "00" * 32, "2026-11-01T00:00:00Z"))


async def test_rollback_is_refused(built: Built) -> None:
    _remember_future(built)
    text = await _refusal(built)
    assert "REFUSED: rollback detected" in text and "ROLLBACK" in text


async def test_forensic_opening_is_labelled_everywhere(built: Built) -> None:
    _remember_future(built)
    app = built.app(forensic=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        bar = app.screen.query_one(StatusBar)
        assert "FORENSIC" in str(bar.render()) and bar.has_class("-forensic")
        await pilot.press("v")
        await settle(pilot)
        assert "FORENSIC" in str(app.screen.query_one(StatusBar).render())


async def test_custodian_fingerprint_and_pin_state_shown_before_unlock(built: Built) -> None:
    app = built.app(passphrase=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        label = str(app.screen.query_one("#custodian", Static).render())
        assert "Custodian: custodian" in label and "FIRST USE" in label
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:  # unlocking pins the custodian
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
    app = built.app(passphrase=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        label = str(app.screen.query_one("#custodian", Static).render())
        # only the key was compared: the card must not claim the history checked out
        assert "same key as pinned on this machine" in label and "checked on unlock" in label
        assert "matches this machine's record" not in label


async def test_passphrase_and_enter_in_one_burst_unlocks(built: Built) -> None:
    """A password manager's auto-type: every character and Enter arrive in one read.

    All the key events are queued before any is handled; Enter must wait for the
    characters before it (the Input's own Submitted), never unlock with half of them.
    """
    from textual import events

    app = built.app(passphrase=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        for ch in PASSPHRASE.decode():
            app.post_message(events.Key(ch, ch))
        app.post_message(events.Key("enter", "\r"))
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen), str(app.screen.query_one("#refusal", Static).render())


async def test_rollback_refusal_names_the_ways_forward(built: Built) -> None:
    _remember_future(built)
    text = await _refusal(built)
    assert "--forensic" in text or "Forensic" in text
    assert "TRACER_HOME" in text


async def test_a_damaged_page_is_refused_on_the_card(built: Built) -> None:
    """A log page whose checksum fails while unlock reads it: the refusal card says the
    vault is damaged (never a traceback, never an exit that looks clean)."""
    damage_a_block(built.vault / "vault.duckdb", "log")
    text = await _refusal(built)
    assert "REFUSED: the vault is damaged" in text and "could not be read" in text


async def test_without_a_key_the_cursor_starts_in_the_key_field(built: Built) -> None:
    app = TracerApp(LaunchOptions(built.vault))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, UnlockScreen)
        key = app.screen.query_one("#key", Input)
        assert app.focused is key and key.placeholder  # a typed path is never masked
        await pilot.press(*"nope.key")
        assert key.value == "nope.key"
        assert app.screen.query_one("#passphrase", Input).value == ""


async def test_a_missing_key_file_says_so_not_wrong_passphrase(built: Built) -> None:
    text = await _refusal(built, key=built.vault.parent / "no-such.key")
    assert "no such key file" in text and "No such file or directory" in text
    assert "wrong passphrase" not in text


async def test_the_forensic_switch_says_on_or_off_in_words(built: Built) -> None:
    app = built.app(passphrase=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#forensic", Checkbox)
        assert str(box.label).endswith(": off")
        box.toggle()
        await settle(pilot)
        assert ": ON" in str(box.label)
