"""`ViewGuard.check_aside`: the per-answer tables' check, hashed outside the engine lock.

It may only ever mark checked a table that hashes as the signed commitment says; a table
it leaves unchecked is checked by `require` when first read, which mends and warns."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from store.viewcommit import ON_FIRST_USE
from tests.helpers import Case, manifest, new_case, passage, revision, signed
from tracer.engine.trace import Tracer

TEXT = "# Returns\n\n## Window\n\nRefunds within thirty days of delivery.\n"


@pytest.fixture
def case(tmp_path: Path) -> Iterator[Case]:
    c = new_case(tmp_path / "vault")
    r1 = revision("returns", "r1", TEXT, "2026-01-05T00:00:00Z")
    draft = manifest(
        "ans-1", "Within thirty days.", [passage(r1, "thirty")], generated_at="2026-02-01T00:00:00Z"
    )
    assert c.ingest(r1, signed(c, draft)).ok
    yield c
    c.close()


class Lock:
    """The engine's lock, counting how often it is taken and whether it is held now."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.held = False
        self.taken = 0

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            self.held, self.taken = True, self.taken + 1
            try:
                yield
            finally:
                self.held = False


def test_a_clean_vault_has_every_per_answer_table_checked_aside(case: Case) -> None:
    s = case.session("ines")
    try:
        lock = Lock()
        outside: list[bool] = []

        def between() -> bool:
            outside.append(not lock.held)
            return True

        done = s.vault.views.check_aside(ON_FIRST_USE, lock, between)
        assert sorted(done) == sorted(ON_FIRST_USE)
        assert outside and all(outside)  # every group was hashed with the lock free
        assert lock.taken == 2
        # already checked: a second call and `require` hash nothing
        assert s.vault.views.check_aside(ON_FIRST_USE, lock) == []
        assert not s.status.warnings
    finally:
        s.close()


def test_an_edited_table_is_left_for_require_which_mends_it_and_says_so(case: Case) -> None:
    case.reopen()
    case.vault.con.execute("UPDATE v_passages SET doc_revision = 'r9'")
    case.reopen()
    s = case.session("ines")
    try:
        done = s.vault.views.check_aside(ON_FIRST_USE, Lock())
        assert "v_passages" not in done
        assert "v_answers" in done
        Tracer(s).trace("ans-1", record=False)  # reads v_passages only through require
        from store import queries

        assert queries.answers_citing_document(s.vault, "returns") == ["ans-1"]
        assert any("v_passages" in w for w in s.vault.views.warnings)
    finally:
        s.close()


def test_stopped_between_groups_it_checks_nothing(case: Case) -> None:
    s = case.session("ines")
    try:
        calls: list[int] = []

        def stop() -> bool:
            calls.append(1)
            return False

        assert s.vault.views.check_aside(ON_FIRST_USE, Lock(), stop) == []
        assert len(calls) == 1
        # nothing was marked: the next call hashes again and checks all
        assert sorted(s.vault.views.check_aside(ON_FIRST_USE, Lock())) == sorted(ON_FIRST_USE)
    finally:
        s.close()
