"""Cases, tags, notes and holds as signed statements: appended, folded, refused."""

from __future__ import annotations

import pytest

from store import admin
from store.casefile import load_casefile
from store.entries import EntryKind
from store.errors import AccessDeniedError, VaultError
from tests.case.world import World
from tracer.engine.case import CaseDesk, CaseError
from tracer.engine.verify import verify


def test_a_case_with_tags_notes_and_a_conclusion_folds_from_the_log(world: World) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    desk.open_case("INC-7", "Payments restart", "Why was payments restarted during settlement?")
    desk.tag("INC-7", "ans-restart", "claim:1", "dropped-exception")
    desk.tag("INC-7", "ans-other", "answer", "context")
    desk.note("INC-7", "First look.\nThe runbook exception is missing.", "ans-restart")
    desk.finding("INC-7", "ans-restart", "passage:p1", "condition dropped")
    desk.conclude("INC-7", "The assistant dropped the condition.")
    v = desk.view("INC-7")
    assert v.record.title == "Payments restart"
    assert [(t.answer_id, t.target, t.tag) for t in v.tags] == [
        ("ans-restart", "claim:1", "dropped-exception"),
        ("ans-other", "answer", "context"),
    ]
    assert v.notes[0].text == "First look.\nThe runbook exception is missing."
    assert v.findings[0].note == "condition dropped"
    assert v.conclusion is not None and v.conclusion.text.startswith("The assistant")
    assert [p.name for p in v.investigators] == ["ines"]
    assert desk.answers_tagged("dropped-exception") == ["ans-restart"]
    desk.tag("INC-7", "ans-restart", "claim:1", "dropped-exception", remove=True)
    assert desk.answers_tagged("dropped-exception") == []
    # every entry is signed, placed and checkpointed: verify finds nothing and the views match
    report = verify(s.vault, s)
    assert report.ok, [f.to_json() for f in report.findings]
    assert not load_casefile(s.vault).problems
    s.close()


def test_case_rules_refuse_before_signing(world: World) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    size = s.vault.size()
    with pytest.raises(CaseError, match="no case"):
        desk.note("NOPE", "text")
    desk.open_case("INC-7", "t", "p")
    with pytest.raises(VaultError, match="already open"):
        desk.open_case("INC-7", "t", "p")
    with pytest.raises(VaultError, match="is not 1-64"):
        desk.tag("INC-7", "ans-restart", "answer", "Bad Tag")
    with pytest.raises(CaseError, match="no claim 9"):
        desk.tag("INC-7", "ans-restart", "claim:9", "x")
    with pytest.raises(VaultError, match="is not on"):
        desk.tag("INC-7", "ans-restart", "answer", "never-added", remove=True)
    with pytest.raises(CaseError, match="is not 1-64"):
        desk.open_case("bad id", "t", "p")
    assert s.vault.size() == size + 1  # only the case itself
    s.close()


def test_purge_refused_under_hold_and_allowed_after_release(world: World) -> None:
    s = world.session("ines")
    desk = CaseDesk(s)
    seq = desk.hold("document", "runbook", "litigation: Northstar v. Payments Ltd")
    s.close()
    c = world.case
    c.reopen()
    with pytest.raises(VaultError, match=rf"under legal hold: hold at log entry {seq} on document 'runbook'"):
        admin.purge(
            c.vault, c.custodian, world.runbook_digest, "retention", "expired", "dpo", "2026-07-01T00:00:00Z"
        )
    # a passage quoted from the held document is held too
    with pytest.raises(VaultError, match="under legal hold"):
        admin.purge(
            c.vault, c.custodian, world.passage_digest, "retention", "expired", "dpo", "2026-07-01T00:00:00Z"
        )
    s = world.session("ines")
    CaseDesk(s).release(seq, "matter settled")
    s.close()
    c.reopen()
    admin.purge(
        c.vault, c.custodian, world.runbook_digest, "retention", "expired", "dpo", "2026-07-01T00:00:00Z"
    )


def test_hold_on_an_answer_covers_its_texts(world: World) -> None:
    s = world.session("ines")
    seq = CaseDesk(s).hold("answer", "ans-restart", "preserve")
    s.close()
    c = world.case
    c.reopen()
    with pytest.raises(VaultError, match=f"hold at log entry {seq} on answer"):
        admin.purge(
            c.vault, c.custodian, world.passage_digest, "retention", "x", "dpo", "2026-07-01T00:00:00Z"
        )


def test_holds_need_the_right(world: World) -> None:
    s = world.session("pat")  # reads everything, no hold right
    with pytest.raises(AccessDeniedError, match="'hold' right"):
        CaseDesk(s).hold("document", "runbook", "mine")
    s.close()
    # the custodian may always hold
    c = world.case
    c.reopen()
    from store.casefile import append_case_statement

    seq = append_case_statement(
        c.vault,
        c.custodian,
        EntryKind.HOLD,
        {
            "subject": {"kind": "digest", "id": world.runbook_digest},
            "reason": "r",
            "at": "2026-07-01T00:00:00Z",
        },
    )
    assert load_casefile(c.vault).holds[seq].in_force


def test_a_grant_with_an_unknown_right_is_refused(world: World) -> None:
    from store.crypto import Identity

    c = world.case
    c.reopen()
    who = Identity.from_seed("zed", b"zed")
    with pytest.raises(VaultError, match="unknown right 'purge'"):
        admin.grant_investigator(
            c.vault, c.custodian, who.public, ["*"], "2026-01-01T00:00:00Z", rights=["purge"]
        )
