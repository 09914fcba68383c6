"""Words the CLI owes the investigator: first use is said with the fingerprint, a hold is
confirmed before the release command is offered, and plain output never points at a
pane (the CLI has none)."""

from __future__ import annotations

import json

from tests.cli.conftest import World
from tracer.cli.render import _answer_time
from tracer.engine.answertime import AnswerTime, AnswerTimeReason, AnswerTimeState


def test_first_use_is_said_on_stderr_with_the_fingerprint(vault_world: World) -> None:
    w = vault_world
    custodian = json.loads(w.pub("custodian").read_text("utf-8"))
    r = w.ok("trace", w.vault, "ans-1", "--key", w.key("ines"))
    assert "FIRST USE" in r.err and custodian["key_id"] in r.err and "out of band" in r.err
    assert "FIRST USE" not in r.out
    again = w.ok("trace", w.vault, "ans-1", "--key", w.key("ines"))
    assert "FIRST USE" not in again.err


def test_a_hold_is_confirmed_before_the_release_command(vault_world: World) -> None:
    w = vault_world
    r = w.ok("hold", w.vault, "--answer", "ans-1", "--reason", "litigation", "--key", w.key("custodian"))
    first, second = r.out.splitlines()[:2]
    assert first.startswith("legal hold on answer ans-1 signed by custodian and recorded at log entry ")
    seq = first.rsplit(" ", 1)[1]
    assert second.startswith("a purge of the held evidence is refused until `tracer release VAULT ")
    assert f"release VAULT {seq} " in second


def test_the_answer_time_note_points_at_printed_text_not_a_pane() -> None:
    at = AnswerTime(
        AnswerTimeState.SUPERSEDED,
        AnswerTimeReason.CHANGED_BEFORE_ANSWER,
        "2026-08-21T12:40:09Z",
        in_force_is_current=True,
    )
    shown = "\n".join(_answer_time(at, current_shown=True))
    assert "pane" not in shown and "printed above, under '--- current revision … ---'" in shown
    hidden = "\n".join(_answer_time(at, current_shown=False))
    assert "pane" not in hidden and "above" not in hidden and "the current one" in hidden
