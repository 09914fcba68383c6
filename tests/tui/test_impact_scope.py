"""The Impact screen offers a tombstone only to viewers who may read what cites it: its
policy and reason are facts about evidence outside another viewer's scope."""

from __future__ import annotations

from pathlib import Path

from store import admin
from store.crypto import sha256_hex
from tests.helpers import T0, manifest, new_case, passage, revision, signed
from tracer.tui.screens.impact import _targets


def test_a_tombstone_outside_the_viewers_scope_is_not_listed(tmp_path: Path) -> None:
    case = new_case(tmp_path / "vault", {"ines": ["*"], "rita": ["support"]})
    hr = revision(
        "travel", "A", "Staff may claim forty euros a day.\n", "2026-01-05T00:00:00Z", collection="hr"
    )
    ps = passage(hr, "forty euros")
    assert case.ingest(hr, signed(case, manifest("ans-hr", "Forty.", [ps], collection="hr"))).ok
    digest = sha256_hex(str(ps["retrieved_text"]).encode())
    admin.purge(case.vault, case.custodian, digest, "RET-HR-90D", "expired", "hr@northstar", T0)
    for who, expected in (("ines", [digest]), ("rita", [])):
        s = case.session(who)
        try:
            assert [t.digest for t in _targets(s) if t.kind == "tombstone"] == expected
        finally:
            s.close()
    case.reopen()
    case.close()
