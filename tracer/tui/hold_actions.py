"""Placing and releasing legal holds from the TUI, through the TUI's own session.

The same code path as `tracer hold` / `tracer release`: `CaseDesk.hold_statement`
checks the subject and builds the statement, the investigator reads it whole, and
`CaseDesk.sign_hold` appends exactly that statement (the store checks the hold right
again as it signs).  Because the open session signs, there is no second writer and so
no "vault is in use" clash.

A viewer without the hold right is told so before typing anything, with who may
(`tracer.engine.holdright`), and may record a hold request as a note in the selected
case instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from rich.text import Text

from store.statements import HoldStatement, ReleaseStatement
from tracer.engine.case import CaseDesk, HoldView
from tracer.engine.holdright import hold_request_text, hold_right
from tracer.tui.messages import Recorded
from tracer.tui.text import plain, safe, safe_line

if TYPE_CHECKING:
    from tracer.tui.screens.base import TracerScreen

__all__ = ["HoldSubject", "start_hold", "start_release"]

#: the statement a dialog builds, shows and signs
_S = TypeVar("_S", HoldStatement, ReleaseStatement)


@dataclass(frozen=True, slots=True)
class HoldSubject:
    """Something a hold can be placed on: `kind` is `answer`, `document` or `digest`."""

    kind: str
    id: str
    label: str


def _statement_text(stmt: Mapping[str, object]) -> Text:
    """The statement's fields, every string inert (a reason is typed text; an id is data)."""
    return safe(json.dumps(stmt, indent=2, sort_keys=True, ensure_ascii=False))


def _fail(screen: TracerScreen, what: str, exc: Exception) -> None:
    screen.app.call_from_thread(
        screen.notify, f"{what}: {safe_line(str(exc)).plain}", severity="error", markup=False, timeout=12
    )


def _check_right(screen: TracerScreen, subject: str, then: Callable[[], None]) -> None:
    """Run `then` on the app's thread when this session may hold; else say who may."""
    app = screen.tracer_app

    def probe() -> None:
        try:
            with app.engine.use() as s:
                desk = CaseDesk(s)
                right = hold_right(desk)
                me = desk.person(s.identity.key_id).label()
        except Exception as exc:
            _fail(screen, "hold", exc)
            return
        if right.allowed:
            app.call_from_thread(then)
        else:
            app.call_from_thread(_refused, screen, right.refusal(me), subject)

    app.run_worker(probe, thread=True, group="hold-right", exclusive=True)


def _refused(screen: TracerScreen, why: str, subject: str) -> None:
    from tracer.tui.screens.hold_dialogs import HoldRefused
    from tracer.tui.screens.note_editor import NoteEditor

    app = screen.tracer_app
    case_id = app.case_id

    def noted(text: str | None) -> None:
        if not text or not text.strip() or case_id is None:
            return
        body = text.strip()

        def append() -> None:
            try:
                with app.engine.use() as s:
                    seq = CaseDesk(s).note(case_id, body)
            except Exception as exc:
                _fail(screen, "hold request", exc)
                return
            app.post_message(Recorded())
            app.call_from_thread(
                screen.notify, f"hold request signed as a case note at log entry {seq}", markup=False
            )

        app.run_worker(append, thread=True, group="hold-request", exclusive=True)

    def chose(note: bool | None) -> None:
        if note and case_id is not None:
            title = Text.assemble(
                plain("Hold request, a note in case "), safe_line(case_id), plain(" (signed with your key)")
            )
            app.push_screen(NoteEditor(title, subject), noted)

    app.push_screen(HoldRefused(safe(why), case_id is not None), chose)


def _pick(
    screen: TracerScreen, title: str, choices: list[tuple[str, Text]], then: Callable[[str], None]
) -> None:
    from tracer.tui.screens.hold_dialogs import ChooseScreen

    if len(choices) == 1:
        then(choices[0][0])
        return

    def chosen(key: str | None) -> None:
        if key is not None:
            then(key)

    screen.app.push_screen(ChooseScreen(plain(title, "bold"), choices), chosen)


def _ask_reason(
    screen: TracerScreen, title: Text, then: Callable[[str], None], example: str = "litigation: Brightwater"
) -> None:
    from tracer.tui.screens.prompt import PromptScreen

    def typed(reason: str | None) -> None:
        if reason and reason.strip():
            then(reason.strip())
        elif reason is not None:
            screen.notify("a hold needs a reason; nothing was signed", severity="warning", markup=False)

    screen.app.push_screen(
        PromptScreen(title, placeholder="e.g. litigation: Brightwater v. Northstar"), typed
    )


def _confirm_and_sign(
    screen: TracerScreen,
    what: str,
    build: Callable[[CaseDesk], _S],
    sign: Callable[[CaseDesk, _S], int],
    done: Callable[[str], object],
) -> None:
    """Build the statement (checked) in a worker, show it, and sign exactly it on F2.

    `done(said)` reloads the screen and says `said` only once the new state shows, so the
    toast never announces a hold the banner does not show yet (or a release it still does)."""
    from tracer.tui.screens.hold_dialogs import ConfirmStatement

    app = screen.tracer_app

    def built(stmt: _S, signer: str) -> None:
        title = Text.assemble(
            plain(f"Sign this {what} statement?", "bold"),
            plain("\nsigned with your key as "),
            safe_line(signer, "bold"),
            plain(", appended to the log, covered by a new checkpoint (RFC 8785 bytes of:)"),
        )

        def answered(yes: bool | None) -> None:
            if yes:
                run_sign(stmt)
            else:
                screen.notify(f"{what}: nothing was signed", markup=False)

        app.push_screen(ConfirmStatement(title, _statement_text(stmt)), answered)

    def run_build() -> None:
        try:
            with app.engine.use() as s:
                stmt = build(CaseDesk(s))
                signer = CaseDesk(s).person(s.identity.key_id).label()
        except Exception as exc:
            _fail(screen, what, exc)
            return
        app.call_from_thread(built, stmt, signer)

    def run_sign(stmt: _S) -> None:
        def append() -> None:
            try:
                with app.engine.use() as s:
                    seq = sign(CaseDesk(s), stmt)
            except Exception as exc:
                _fail(screen, what, exc)
                return
            app.post_message(Recorded())
            said = f"{what} signed at log entry {seq}"
            if screen.is_attached:
                app.call_from_thread(done, said)
            else:  # the screen was left meanwhile: the signature is still said
                app.call_from_thread(app.notify, said, markup=False)

        app.run_worker(append, thread=True, group="hold-sign", exclusive=True)

    app.run_worker(run_build, thread=True, group="hold-build", exclusive=True)


def start_hold(screen: TracerScreen, subjects: Sequence[HoldSubject], done: Callable[[str], object]) -> None:
    """Place a legal hold on one of `subjects` (asked when several), in the selected case."""
    if not subjects:
        screen.notify("nothing here a hold can be placed on", markup=False)
        return
    by_key = {f"{s.kind}:{s.id}": s for s in subjects}
    first = subjects[0]
    request = hold_request_text(first.kind, first.id, "")
    case_id = screen.tracer_app.case_id

    def with_subject(key: str) -> None:
        subj = by_key[key]
        title = Text.assemble(
            plain("Legal hold on "),
            safe_line(f"{subj.kind} {subj.id}", "bold"),
            plain(" — why? (the reason is signed)"),
        )
        if case_id is not None:
            title.append_text(Text.assemble(plain("\nunder case "), safe_line(case_id)))

        def with_reason(reason: str) -> None:
            _confirm_and_sign(
                screen,
                "legal hold",
                lambda desk: desk.hold_statement(subj.kind, subj.id, reason, case_id),
                lambda desk, stmt: desk.sign_hold(stmt),
                done,
            )

        _ask_reason(screen, title, with_reason)

    def allowed() -> None:
        choices = [(key, safe_line(s.label)) for key, s in by_key.items()]
        _pick(screen, "Place a legal hold on:", choices, with_subject)

    _check_right(screen, request, allowed)


def start_release(screen: TracerScreen, holds: Sequence[HoldView], done: Callable[[str], object]) -> None:
    """Release one of the holds in force shown on this screen (asked when several)."""
    in_force = [h for h in holds if h.hold.in_force]
    if not in_force:
        screen.notify("no legal hold in force here to release", markup=False)
        return
    case_id = screen.tracer_app.case_id
    by_key = {str(h.hold.seq): h for h in in_force}

    def with_hold(key: str) -> None:
        hv = by_key[key]
        title = Text.assemble(
            plain(f"Release the legal hold at log entry {hv.hold.seq} on "),
            safe_line(f"{hv.hold.subject_kind} {hv.hold.subject}", "bold"),
            plain(" — why? (the reason is signed)"),
        )

        def with_reason(reason: str) -> None:
            _confirm_and_sign(
                screen,
                "hold release",
                lambda desk: desk.release_statement(hv.hold.seq, reason, case_id),
                lambda desk, stmt: desk.sign_release(stmt),
                done,
            )

        _ask_reason(screen, title, with_reason, "matter settled on 2026-12-01")

    def allowed() -> None:
        choices = [
            (
                key,
                Text.assemble(
                    plain(f"log entry {h.hold.seq}: "), safe_line(f"{h.hold.subject_kind} {h.hold.subject}")
                ),
            )
            for key, h in by_key.items()
        ]
        _pick(screen, "Release which legal hold?", choices, with_hold)

    request = (
        f"HOLD RELEASE REQUEST: please release the legal hold at log entry {in_force[0].hold.seq}. Reason: "
    )
    _check_right(screen, request, allowed)
