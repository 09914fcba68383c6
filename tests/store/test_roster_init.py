"""A vault_init the custodian key itself signed is still checked member by member: a
forger who makes a vault of their own from scratch can sign anything, and the roster
must refuse a custodian that is not whole rather than fail on a missing member."""

from __future__ import annotations

import pytest

from store.crypto import Identity, b64e
from store.entries import EntryKind
from store.roster import Roster, RosterProblem
from store.words import FindingKind

CUSTODIAN = Identity.from_seed("custodian", b"roster-init")
WHOLE = {
    "name": "custodian",
    "ed25519": b64e(CUSTODIAN.public.ed25519),
    "x25519": b64e(CUSTODIAN.public.x25519),
}


def test_a_whole_custodian_initialises_the_roster() -> None:
    roster = Roster()
    assert (
        roster.fold(0, EntryKind.VAULT_INIT, {"custodian": dict(WHOLE), "at": "2026-01-01T00:00:00Z"}) is None
    )
    assert roster.custodian is not None and roster.custodian.name == "custodian"


@pytest.mark.parametrize(
    ("custodian", "reason"),
    [
        (None, "names no custodian"),
        ("custodian", "names no custodian"),
        ({k: v for k, v in WHOLE.items() if k != "name"}, "has no name"),
        ({**WHOLE, "name": ""}, "has no name"),
        ({k: v for k, v in WHOLE.items() if k != "x25519"}, "x25519 is not"),
        ({**WHOLE, "ed25519": "!!"}, "ed25519 is not"),
        ({**WHOLE, "x25519": b64e(b"short")}, "x25519 is not"),
    ],
)
def test_a_custodian_that_is_not_whole_is_refused_not_a_crash(custodian: object, reason: str) -> None:
    roster = Roster()
    stmt: dict[str, object] = {"at": "2026-01-01T00:00:00Z"}
    if custodian is not None:
        stmt["custodian"] = custodian
    problem = roster.fold(0, EntryKind.VAULT_INIT, stmt)
    assert isinstance(problem, RosterProblem), problem
    assert problem.code == FindingKind.ROSTER_CHANGE_REFUSED and reason in problem.detail
    assert roster.custodian is None
