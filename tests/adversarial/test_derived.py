"""Derived tables are a cache, never an authority (issue [1/7]).

An attacker who can write the vault file but holds no key edits or deletes `v_*` rows,
the cached group digests, or the newest log rows, and tries to lift a hold, flip a
verdict or shorten the log.  Each test reproduces one such attack; the safe behaviour is
asserted."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from store import admin
from store.casefile import load_casefile
from store.entries import EntryKind
from store.errors import AccessDeniedError, VaultDamagedError, VaultError
from store.ingest import ingest
from store.note import Checkpoint
from store.vault import Vault
from store.viewcommit import EXTENSION, signed_commitment
from tests.case.world import build_world
from tests.helpers import Case, case_copy, manifest, new_case, passage, revision, signed
from tracer.cli.common import open_vault
from tracer.engine.case import CaseDesk
from tracer.engine.session import head_checkpoint
from tracer.engine.trace import Tracer
from tracer.engine.trust import RollbackError, TrustError
from tracer.engine.verify import verify
from tracer.engine.vocabulary import Currency

NOW = "2026-07-01T12:00:00Z"
THIRTY = "# Returns\n\n## Window\n\nRefunds within thirty days of delivery.\n"
FOURTEEN = THIRTY.replace("thirty", "fourteen")


@pytest.fixture
def case(tmp_path: Path) -> Any:
    c = new_case(tmp_path / "vault")
    yield c
    c.close()


@pytest.fixture
def stale_case(tmp_path: Path) -> Any:
    """`_stale_case`, ingested once per process and copied."""
    c = case_copy("derived-stale", _stale_case, tmp_path)
    yield c
    c.close()


def _stale_case(case: Case) -> None:
    r1 = revision("returns", "r1", THIRTY, "2026-01-05T00:00:00Z")
    r2 = revision("returns", "r2", FOURTEEN, "2026-03-05T00:00:00Z")
    draft = manifest(
        "ans-1", "Within thirty days.", [passage(r1, "thirty")], generated_at="2026-02-01T00:00:00Z"
    )
    assert case.ingest(r1, r2, signed(case, draft)).ok


def _edit(case: Case, *sql: str) -> None:
    case.reopen()
    for statement in sql:
        case.vault.con.execute(statement)
    case.reopen()


def _currency(case: Case, **kw: Any) -> tuple[str, list[str]]:
    s = case.session("ines", **kw)
    try:
        t = Tracer(s).trace("ans-1", record=False)
        return t.passages[0].currency.state, list(s.status.warnings)
    finally:
        s.close()


# -- verdicts ---------------------------------------------------------------------------


def test_every_checkpoint_commits_to_the_derived_tables(stale_case: Case) -> None:
    case = stale_case
    cp = Checkpoint.parse(case.vault.latest_checkpoint().note.split("\n\n")[0] + "\n")
    assert signed_commitment(cp.extensions) is not None
    assert any(e.startswith(EXTENSION + " ") for e in cp.extensions)


def test_a_deleted_revision_row_does_not_turn_stale_into_verified(stale_case: Case) -> None:
    case = stale_case
    assert _currency(case)[0] == "stale"
    _edit(case, "DELETE FROM v_revisions WHERE revision = 'r2'")
    state, warnings = _currency(case)
    assert state == "stale"
    assert any("v_revisions" in w and "derived again" in w for w in warnings)


def test_a_deleted_revision_row_is_mended_in_a_read_only_session_without_touching_the_file(
    stale_case: Case,
) -> None:
    case = stale_case
    _edit(case, "DELETE FROM v_revisions WHERE revision = 'r2'")
    state, _w = _currency(case, read_only=True, forensic=True)
    assert state == "stale"
    con = duckdb.connect(str(case.path / "vault.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM v_revisions WHERE revision = 'r2'").fetchone() == (0,)
    finally:
        con.close()


def test_an_edited_revision_row_and_its_cached_digest_together_are_still_caught(stale_case: Case) -> None:
    case = stale_case
    _edit(
        case,
        "UPDATE v_revisions SET committed_at = '2025-01-01T00:00:00Z' WHERE revision = 'r2'",
        "DELETE FROM view_groups WHERE tbl = 'v_revisions'",
    )
    assert _currency(case)[0] == "stale"


def test_a_mend_in_place_is_still_reported_by_verify(stale_case: Case) -> None:
    case = stale_case
    _edit(case, "DELETE FROM v_revisions WHERE revision = 'r2'")
    s = case.session("ines")
    try:
        kinds = [f.kind for f in verify(s.vault, s, full=True).findings]
    finally:
        s.close()
    assert "view_row_missing_or_altered" in kinds


def test_a_mend_in_place_is_reported_by_a_verify_in_a_later_process(stale_case: Case) -> None:
    """The session that found the edit mended the file; the next one (a new process, as a
    later `tracer verify` is) still reports what was edited, from the mend's record."""
    case = stale_case
    _edit(case, "DELETE FROM v_revisions WHERE revision = 'r2'")
    assert _currency(case)[0] == "stale"  # this session mends in place, then closes
    case.reopen()
    assert case.vault.query("SELECT count(*) FROM v_revisions WHERE revision = 'r2'")[0][0] == 1
    case.close()
    later = case.session("ines")
    try:
        found = [f for f in verify(later.vault, later, full=True).findings if f.kind.startswith("view_row")]
    finally:
        later.close()
    assert [f.kind for f in found] == ["view_row_missing_or_altered"]
    assert "derived again from it when the log had" in found[0].detail
    assert found[0].record["revision"] == "r2"


def test_a_write_that_adds_no_row_to_an_edited_table_does_not_sign_the_edit(stale_case: Case) -> None:
    """A write checks and re-hashes only the tables it adds rows to; an edited table it does
    not touch keeps its honest signed digests, so the edit is never signed over, and the
    next reader finds it, mends it from the log and keeps the verdict."""
    case = stale_case
    _edit(case, "DELETE FROM v_revisions WHERE revision = 'r2'")
    vault = case.reopen()
    before = signed_commitment(
        Checkpoint.parse(vault.latest_checkpoint().note.split("\n\n")[0] + "\n").extensions
    )
    admin.record_access(vault, case.custodian, "trace", "ans-1", NOW)
    after = signed_commitment(
        Checkpoint.parse(vault.latest_checkpoint().note.split("\n\n")[0] + "\n").extensions
    )
    assert after is not None and after != before  # the access table moved on
    edited = vault.con.execute("SELECT count(*) FROM v_revisions WHERE revision = 'r2'").fetchall()
    assert edited == [(0,)]  # not touched by the write...
    state, warnings = _currency(case)
    assert state == "stale"  # ...and not signed over: the next reader mends it from the log
    assert any("v_revisions" in w for w in warnings)


def test_a_deleted_answer_row_does_not_read_as_no_such_answer(stale_case: Case) -> None:
    case = stale_case
    _edit(case, "DELETE FROM v_answers WHERE answer_id = 'ans-1'")
    s = case.session("ines")
    try:
        assert Tracer(s).trace("ans-1", record=False).passages[0].currency.state == "stale"
    finally:
        s.close()


def test_an_answer_row_pointed_at_another_entry_never_lends_it_that_record(stale_case: Case) -> None:
    case = stale_case
    r3 = revision("other", "o1", FOURTEEN, "2026-01-05T00:00:00Z")
    other = manifest("ans-2", "Within fourteen days.", [passage(r3, "fourteen")])
    assert case.ingest(r3, signed(case, other)).ok
    seq2 = case.vault.query("SELECT seq FROM v_answers WHERE answer_id = 'ans-2'")[0][0]
    _edit(case, f"UPDATE v_answers SET seq = {int(seq2)} WHERE answer_id = 'ans-1'")  # noqa: S608
    s = case.session("ines")
    try:
        t = Tracer(s).trace("ans-1", record=False)
        assert t.answer_id == "ans-1" and t.passages and t.passages[0].currency.state == "stale"
    finally:
        s.close()


def _note_on_ans_1(case: Case) -> None:
    """A note citing ans-1 (stale) by lineage and by a passage derived from its answer."""
    pseudo = revision("mem-ans-1", "ans-1", "Within thirty days.", "2026-02-02T00:00:00Z")
    derived = passage(pseudo, "thirty", "p-derived", derived_from="ans-1")
    note = manifest("note-1", "Refunds: thirty days.", [derived], kind="note", lineage=["ans-1"])
    assert case.ingest(pseudo, signed(case, note)).ok


@pytest.mark.parametrize(
    "attack",
    [
        "DELETE FROM v_answers WHERE answer_id = 'ans-1'",
        "UPDATE v_answers SET seq = (SELECT seq FROM v_answers WHERE answer_id = 'note-1') "
        "WHERE answer_id = 'ans-1'",
    ],
    ids=["deleted", "pointed-at-the-note"],
)
def test_a_lineage_source_read_in_one_batch_is_still_proven_from_the_log(
    stale_case: Case, attack: str
) -> None:
    """A trace reads its lineage sources' entries in one query; a source whose answer row
    was deleted or pointed elsewhere is not trusted from that read but proven alone, so the
    note still inherits the source's own states."""
    case = stale_case
    _note_on_ans_1(case)
    s = case.session("ines")
    try:
        before = Tracer(s).trace("note-1", record=False)
    finally:
        s.close()
    _edit(case, attack)
    s = case.session("ines")
    try:
        after = Tracer(s).trace("note-1", record=False)
    finally:
        s.close()
    assert before.currency == Currency.STALE
    assert [(n.answer_id, n.kind, n.integrity, n.currency) for n in after.lineage] == [
        (n.answer_id, n.kind, n.integrity, n.currency) for n in before.lineage
    ]
    assert (after.integrity, after.currency) == (before.integrity, before.currency)
    assert after.reasons == before.reasons
    assert after.passages[0].effective_currency == before.passages[0].effective_currency


# -- holds ------------------------------------------------------------------------------


def _held_world(tmp_path: Path) -> tuple[Any, Case]:
    """The case world with ines's hold on `ans-restart`, reopened as the custodian."""
    world = build_world(tmp_path)
    s = world.session("ines")
    CaseDesk(s).hold("answer", "ans-restart", "litigation")
    s.close()
    world.case.reopen()
    return world, world.case


@pytest.mark.parametrize(
    "attack",
    [
        "UPDATE v_answers SET answer_id = 'x' WHERE answer_id = 'ans-restart'",
        "DELETE FROM v_answers WHERE answer_id = 'ans-restart'",
        "UPDATE v_revisions SET content_sha256 = repeat('0', 64) WHERE document_id = 'runbook'",
        "DELETE FROM v_revisions WHERE document_id = 'runbook'",
    ],
)
def test_a_hold_on_an_answer_is_not_lifted_by_editing_a_derived_table(tmp_path: Path, attack: str) -> None:
    world, c = _held_world(tmp_path)
    _edit(c, attack, "DELETE FROM view_groups")
    for digest in (world.runbook_digest, world.passage_digest):
        with pytest.raises(VaultError, match="under legal hold"):
            admin.purge(c.vault, c.custodian, digest, "retention", "expired", "dpo", NOW)
    c.close()


def test_a_hold_on_an_answer_signs_the_entries_it_rests_on(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    s = world.session("ines")
    desk = CaseDesk(s)
    stmt = desk.hold_statement("answer", "ans-restart", "litigation")
    answer_seq = s.vault.query("SELECT seq FROM v_answers WHERE answer_id = 'ans-restart'")[0][0]
    runbook_seq = s.vault.query("SELECT seq FROM v_revisions WHERE document_id = 'runbook'")[0][0]
    assert stmt["entries"] == sorted([int(answer_seq), int(runbook_seq)])
    desk.sign_hold(stmt)
    s.close()
    world.case.reopen()
    hold = next(iter(load_casefile(world.case.vault).holds.values()))
    assert hold.entries == tuple(stmt["entries"])
    world.case.close()


@pytest.mark.parametrize("table", ["v_answers", "v_revisions", "v_passages", "v_digests"])
def test_a_purge_under_a_signed_answer_hold_reads_no_derived_table(
    tmp_path: Path, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hold's own signed entries decide: emptying any derived table (and its cached
    digests) neither lifts it nor makes the purge hash the big tables."""
    world, c = _held_world(tmp_path)
    _edit(c, f"DELETE FROM {table}", "DELETE FROM view_groups")  # noqa: S608 - fixed names
    asked: list[str] = []
    real = c.vault.views.require

    def spy(*tables: str) -> None:
        asked.extend(tables)
        real(*tables)

    monkeypatch.setattr(c.vault.views, "require", spy)
    for digest in (world.runbook_digest, world.passage_digest):
        with pytest.raises(VaultError, match="under legal hold"):
            admin.purge(c.vault, c.custodian, digest, "retention", "expired", "dpo", NOW)
    assert asked == []
    c.close()


def test_a_hold_whose_entries_are_not_an_answers_is_refused_from_the_case_file(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    s = world.session("ines")
    desk = CaseDesk(s)
    stmt = desk.hold_statement("digest", world.passage_digest, "litigation")
    for forged in ([3, 1], [-1], ["1"], 7):
        refused = load_casefile(s.vault).refusal(EntryKind.HOLD, {**stmt, "entries": forged})
        assert refused is not None and "entries" in refused
    answer = desk.hold_statement("answer", "ans-restart", "litigation")
    assert load_casefile(s.vault).refusal(EntryKind.HOLD, answer) is None
    s.close()


def test_a_forged_digest_row_does_not_make_an_unreferenced_text_purgeable(stale_case: Case) -> None:
    case = stale_case
    seq = case.vault.query("SELECT seq FROM v_answers WHERE answer_id = 'ans-1'")[0][0]
    nobody = "ab" * 32
    _edit(
        case,
        f"INSERT INTO v_digests SELECT seq, '{nobody}', role, collection "  # noqa: S608
        f"FROM v_digests WHERE seq = {int(seq)} LIMIT 1",
    )
    with pytest.raises(VaultError, match="not referenced by any log entry"):
        admin.purge(case.vault, case.custodian, nobody, "retention", "expired", "dpo", NOW)


# -- the log's length -------------------------------------------------------------------


def test_deleting_the_newest_entry_but_keeping_every_checkpoint_is_truncation(stale_case: Case) -> None:
    case = stale_case
    omar_hold = admin.record_access(case.vault, case.investigators["ines"], "view", "ans-1", NOW, False)
    size = case.vault.size()
    assert omar_hold == size - 1
    _edit(case, f"DELETE FROM log WHERE seq = {size - 1}")  # noqa: S608
    v = case.vault
    leaves = v.leaf_hashes()
    cp, code, _why = head_checkpoint(v, v.roster(), len(leaves), v.root())
    assert cp is None and code == "log_truncated"
    with pytest.raises(TrustError, match="entries were removed"):
        case.session("ines").close()
    case.reopen()
    with pytest.raises(VaultDamagedError, match="log_truncated"):
        admin.record_access(case.vault, case.investigators["ines"], "view", "ans-1", NOW, False)


def test_a_legacy_vault_without_the_views_line_is_derived_from_the_log(tmp_path: Path) -> None:
    """A checkpoint that predates the commitment proves nothing about the views: the
    tables a decision needs are derived from the log instead."""
    c = new_case(tmp_path / "vault")
    try:
        _stale_case(c)
        c.vault.con.execute("DELETE FROM view_groups")
        c.vault.con.execute("DELETE FROM v_revisions WHERE revision = 'r2'")
        c.reopen()
        v: Vault = c.vault
        v.views._signed = lambda size, root: None  # type: ignore[method-assign]
        v.views.require("v_revisions")
        assert v.query("SELECT count(*) FROM v_revisions WHERE revision = 'r2'") == [(1,)]
    finally:
        c.close()


# -- the custodian's own machine --------------------------------------------------------


def test_a_revocation_cannot_be_rolled_back_on_the_machine_that_made_it(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACER_HOME", str(tmp_path / "custodian-home"))
    omar = case.grant("omar", ["support"])
    case.vault.close()
    backup = tmp_path / "before-revoke"
    shutil.copytree(case.path, backup)
    vault = open_vault(case.path)
    try:
        admin.revoke_investigator(vault, case.custodian, omar.key_id, NOW)
    finally:
        vault.close()
    shutil.rmtree(case.path)
    shutil.copytree(backup, case.path)  # the attacker puts the older copy back
    with pytest.raises(RollbackError, match="ROLLBACK"):
        open_vault(case.path).close()
    case.vault = Vault.open(case.path)


# -- who may append producer evidence -----------------------------------------------------


def test_an_investigators_key_cannot_ingest_producer_evidence(case: Case) -> None:
    r1 = revision("returns", "r1", THIRTY, "2026-01-05T00:00:00Z")
    path = case.write(r1)
    with pytest.raises(AccessDeniedError, match=r"ingest\) needs the custodian's key"):
        ingest(case.vault, [path], case.investigators["ines"], NOW)
    assert case.vault.query("SELECT count(*) FROM v_revisions") == [(0,)]


def test_a_recovery_interrupted_after_the_cut_loses_nothing(
    stale_case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quarantine file is durable before the log is cut; the manifests it holds come
    back through `restore` (`tracer quarantine FILE --restore VAULT`) even when the process
    died between the cut and the re-ingest."""
    from store import recovery

    case = stale_case
    kept = case.vault.size()
    second = manifest(
        "ans-2",
        "Within thirty days.",
        [passage(revision("returns", "r1", THIRTY, "2026-01-05T00:00:00Z"), "thirty")],
    )
    assert case.ingest(signed(case, second)).ok
    _edit(case, "DELETE FROM checkpoints WHERE id = (SELECT max(id) FROM checkpoints)")

    def killed(*_a: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(recovery, "restore", killed)
    with pytest.raises(KeyboardInterrupt):
        recovery.quarantine_tail(case.vault, case.custodian, kept, NOW)
    monkeypatch.undo()
    case.reopen()
    assert case.vault.query("SELECT count(*) FROM v_answers WHERE answer_id = 'ans-2'") == [(0,)]
    (file,) = sorted((case.path / "quarantine").glob("*.jsonl"))
    done = recovery.restore(
        case.vault, case.custodian, recovery.Quarantined(file, -1, recovery.read_quarantine(file)), NOW
    )
    assert done.report is not None and done.report.ok and not done.to_remake
    assert case.vault.query("SELECT count(*) FROM v_answers WHERE answer_id = 'ans-2'") == [(1,)]
    again = recovery.restore(
        case.vault, case.custodian, recovery.Quarantined(file, -1, recovery.read_quarantine(file)), NOW
    )
    assert again.reingested == []  # restoring twice adds nothing
