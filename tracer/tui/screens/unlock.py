"""Unlock: vault, investigator key and passphrase; every refusal said plainly.

The engine decides (custodian pin, roster, rollback/fork); this screen only names the
refusal: unknown or revoked investigator, wrong passphrase, custodian changed,
rollback or fork detected.  Key derivation and the unlock run in a worker.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Checkbox, Footer, Input, Static

from store.errors import (
    AccessDeniedError,
    KeyFileError,
    StoreError,
    VaultDamagedError,
    VaultInUseError,
    damage_of,
)
from tracer.engine.trust import CustodianChangedError, ForkError, RollbackError, TrustError
from tracer.tui.context import Engine, LaunchOptions
from tracer.tui.early_keys import take_early_key
from tracer.tui.opening import OPEN_LOCK
from tracer.tui.text import plain, safe, safe_line

if TYPE_CHECKING:
    from tracer.engine.session import Session, VaultPeek
    from tracer.tui.app import TracerApp

__all__ = ["UnlockScreen", "refusable", "refusal", "refusal_headline"]


def refusal_headline(exc: BaseException) -> str:
    """A short name for the refusal; the engine's full message is shown beneath it."""
    from tracer.engine.session import RevokedInvestigatorError, UnknownInvestigatorError

    named: list[tuple[type[BaseException], str]] = [
        (KeyFileError, "REFUSED: the key file could not be opened (wrong passphrase?)"),
        (RevokedInvestigatorError, "REFUSED: revoked investigator"),
        (UnknownInvestigatorError, "REFUSED: unknown investigator"),
        (AccessDeniedError, "REFUSED: access denied"),
        (RollbackError, "REFUSED: rollback detected"),
        (ForkError, "REFUSED: fork detected"),
        (CustodianChangedError, "REFUSED: custodian key changed"),
        (TrustError, "REFUSED: trust check failed"),
    ]
    if isinstance(exc, KeyFileError) and isinstance(exc.__cause__, FileNotFoundError):
        return "REFUSED: no such key file"  # not "wrong passphrase?": nothing was tried
    if isinstance(exc, KeyFileError) and isinstance(exc.__cause__, OSError):
        return "REFUSED: the key file could not be read"
    for kind, headline in named:
        if isinstance(exc, kind):
            return headline
    if isinstance(exc, VaultInUseError):
        return "REFUSED: the vault is in use by another process"
    if isinstance(exc, VaultDamagedError):
        return "REFUSED: the vault is damaged"
    return "REFUSED: the vault could not be opened"


def forensic_label(on: bool) -> str:
    state = "ON — opened for inspection only, nothing appended" if on else "off"
    return f"Forensic (inspect a vault that failed the rollback check): {state}"


def refusable(exc: BaseException) -> BaseException | None:
    """The error an unlock failure is refused with on the card, or None for a bug (which
    stays a traceback). A damaged database page is a refusal like a damaged file."""
    if isinstance(exc, (StoreError, OSError)):
        return exc
    return damage_of(exc)


#: what to do after a rollback or fork refusal, shown under the engine's own message
WAYS_FORWARD = (
    "Ways forward: tick Forensic to open this copy for inspection only (every screen says "
    "FORENSIC and nothing is appended to the vault), or, for a rebuilt demo vault, start "
    "tracer with a scratch home: TRACER_HOME=$(mktemp -d) tracer open VAULT."
)


def refusal(exc: BaseException) -> tuple[str, str]:
    """(headline, detail) for the refusal card; a rollback or fork says what to do next."""
    detail = str(exc)
    if isinstance(exc, (RollbackError, ForkError)):
        detail += "\n\n" + WAYS_FORWARD
    return refusal_headline(exc), detail


class UnlockField(Input):
    """An unlock field whose Enter is its own submit, shown in the footer as "Unlock".

    Enter is never a screen binding here: a priority binding would run before the Input
    has taken characters that arrived in the same terminal read (a password manager's
    auto-type), and unlock with half a passphrase.  The Input's `Submitted` comes after
    every character before it.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Unlock", tooltip="Unlock with this key and passphrase"),
    ]


class UnlockScreen(Screen[None]):
    AUTO_FOCUS = "#passphrase"
    BINDINGS: ClassVar[list[BindingType]] = [
        # not priority (see UnlockField): listed for the palette and the help screen
        Binding("enter", "unlock", "Unlock", id="tracer.unlock", tooltip="Unlock with this key"),
        Binding("escape", "leave", "Quit", id="tracer.unlock_quit", tooltip="Leave without unlocking"),
    ]

    @dataclass
    class Opened(Message):
        session: Session

    @dataclass
    class Refused(Message):
        headline: str
        detail: str

    def __init__(self, options: LaunchOptions, refused: tuple[str, str] | None = None):
        """`refused`: (headline, detail) of an unlock that already failed before this screen."""
        super().__init__()
        self.options = options
        self.refused = refused
        self._peeked: Path | None = None
        self._peek_later = False

    def compose(self) -> ComposeResult:
        o = self.options
        with VerticalScroll(id="unlock-scroll"), Vertical(id="unlock-box"):
            yield Static(plain("Unlock a tracer vault", "bold"))
            yield Static(plain("Vault"), classes="field-label")
            yield UnlockField(str(o.vault), id="vault", compact=True)
            yield Static(id="custodian")
            yield Static(plain("Investigator key file"), classes="field-label")
            key = str(o.key) if o.key else os.environ.get("TRACER_KEY", "")
            yield UnlockField(
                key, id="key", compact=True, placeholder="path to your NAME.key, e.g. keys/ines.key"
            )
            yield Static(plain("Passphrase"), classes="field-label")
            yield UnlockField(password=True, id="passphrase", compact=True)
            yield Checkbox(forensic_label(o.forensic), o.forensic, id="forensic", compact=True)
            yield Static(id="refusal")
            yield Static(id="progress")
        yield Footer(compact=True)

    @dataclass
    class Peeked(Message):
        peek: VaultPeek | None
        error: str

    def _peek(self, vault: Path) -> None:
        if vault != self._peeked:
            self._peeked = vault
            self._peek_worker(vault)

    @work(thread=True, exclusive=True, group="peek")
    def _peek_worker(self, vault: Path) -> None:
        from tracer.engine.session import peek

        try:
            with OPEN_LOCK:
                self.post_message(self.Peeked(peek(vault), ""))
        except Exception as exc:
            known = refusable(exc)
            if known is None:
                raise
            self.post_message(self.Peeked(None, str(known)))

    def on_unlock_screen_peeked(self, message: Peeked) -> None:
        label = self.query_one("#custodian", Static)
        p = message.peek
        if p is None:
            label.update(Text.assemble(plain("Custodian: "), safe_line(message.error)))
            return
        verdict = {
            # only the custodian's key is compared here; signatures and the log's history
            # are checked by the unlock itself, so this line claims no more than that
            "pinned": "same key as pinned on this machine (signatures and history checked on unlock)",
            "first use": "FIRST USE: will be pinned; confirm the fingerprint out of band",
            "CHANGED": "CHANGED since this machine pinned it: unlocking will be refused",
        }[p.pin]
        if p.origin_before is not None and p.pin != "CHANGED":
            # a known path that now holds another vault: never a plain "first use"
            verdict = "ORIGIN CHANGED: not the vault this machine last opened here" + (
                "; its custodian is new here: confirm the fingerprint out of band"
                if p.pin == "first use"
                else "; its custodian key is pinned"
            )
        card = Text.assemble(
            plain("Custodian: "),
            safe_line(p.custodian),
            plain(f"  {p.custodian_key_id[:16]}…  "),
            plain(verdict, "bold" if p.pin != "pinned" or p.origin_before is not None else ""),
            plain(f"\nLog size {p.size}, origin "),
            safe_line(p.origin),
        )
        if p.origin_before is not None:
            card.append_text(Text.assemble(plain("; this machine last opened "), safe_line(p.origin_before)))
            card.append_text(plain(" here"))
        label.update(card)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        """The switch says ON or off in words: its mark alone looks the same either way."""
        event.checkbox.label = forensic_label(event.value)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "vault":
            self._peek(Path(event.value))

    def on_mount(self) -> None:
        if not self.query_one("#key", Input).value:
            # no key yet: the cursor starts where it goes, so a typed path is never masked
            self.query_one("#key", Input).focus()
        if self.refused is not None:
            self.post_message(self.Refused(*self.refused))
        elif self.options.key is not None and self.options.passphrase is not None:
            # peeked after a refusal only: while unlocking it would wait on the same lock
            self._peeked = self.options.vault
            self._peek_later = True
            self._start(self.options.passphrase)
            return
        self._peek(self.options.vault)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_unlock()

    def on_key(self, event: events.Key) -> None:
        """An auto-typed passphrase may start before the field has focus."""
        take_early_key(self, self.query_one("#passphrase", Input), event)

    def action_leave(self) -> None:
        # leaving after a refusal exits non-zero (as the CLI's refusals do); a plain Esc is 0
        refused = self.query_one("#refusal", Static).has_class("-shown")
        self.app.exit(return_code=2 if refused else 0)

    def action_unlock(self) -> None:
        self._start(self.query_one("#passphrase", Input).value.encode("utf-8"))

    def _start(self, passphrase: bytes) -> None:
        vault = Path(self.query_one("#vault", Input).value)
        key = Path(self.query_one("#key", Input).value)
        forensic = self.query_one("#forensic", Checkbox).value
        self.query_one("#progress", Static).update(plain("unlocking…"))
        self._unlock(vault, key, passphrase, forensic)

    @work(thread=True, exclusive=True, group="unlock")
    def _unlock(self, vault: Path, key: Path, passphrase: bytes, forensic: bool) -> None:
        from store.crypto import load_identity
        from tracer.engine.session import unlock

        try:
            identity = load_identity(key, passphrase)
            with OPEN_LOCK:
                session = unlock(vault, identity, forensic=forensic)
        except Exception as exc:
            known = refusable(exc)
            if known is None:
                raise
            self.post_message(self.Refused(*refusal(known)))
            return
        self.post_message(self.Opened(session))

    def on_unlock_screen_refused(self, message: Refused) -> None:
        if self._peek_later:
            self._peek_later, self._peeked = False, None
            self._peek(Path(self.query_one("#vault", Input).value))
        self.query_one("#progress", Static).update("")
        self.query_one("#refusal", Static).update(
            Text.assemble(plain(message.headline, "bold reverse"), "\n", safe(message.detail))
        )
        self.query_one("#refusal", Static).add_class("-shown")
        pw = self.query_one("#passphrase", Input)
        pw.value = ""
        key = self.query_one("#key", Input)
        (key if not key.value or message.headline == "REFUSED: no such key file" else pw).focus()

    def on_unlock_screen_opened(self, message: Opened) -> None:
        cast("TracerApp", self.app).opened(Engine(message.session))
