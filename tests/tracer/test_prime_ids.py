"""Answers named by id (a holds listing, a pack) are read a page at a time: the same
summaries as one by one, with no per-answer look-up of the log left."""

from __future__ import annotations

import pytest

from store import queries
from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.case import CaseDesk
from tracer.engine.session import unlock
from tracer.engine.trace import Tracer
from tracer.engine.trust import TrustStore

A = "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within thirty days of delivery.\n"
C = A.replace("thirty", "fourteen")


def _vault(case: Case, n: int) -> list[str]:
    ra = revision("returns", "A", A, "2026-01-05T00:00:00Z")
    rc = revision("returns", "C", C, "2026-05-05T00:00:00Z")
    drafts = [
        signed(
            case, manifest(f"ans-{i}", "Refunds are accepted for thirty days.", [passage(ra, "thirty days")])
        )
        for i in range(n)
    ]
    report = case.ingest(ra, rc, *drafts)
    assert report.ok, report.to_json()
    return [f"ans-{i}" for i in range(n)]


def test_primed_summaries_equal_unprimed_and_read_no_entry_one_by_one(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _vault(case, 6)
    s = case.session("ines")
    plain = [Tracer(s).summary(a) for a in ids]
    calls: list[str] = []
    real = queries.answer_entry

    def counted(vault: object, answer_id: str) -> object:
        calls.append(answer_id)
        return real(vault, answer_id)  # type: ignore[arg-type]

    monkeypatch.setattr(queries, "answer_entry", counted)
    tracer = Tracer(s)
    tracer.prime_ids([*ids, "ans-unknown", ids[0]])
    primed = [tracer.summary(a) for a in ids]
    assert primed == plain
    assert calls == []
    assert tracer.summary("ans-unknown").integrity == "missing"  # still looked up, and absent
    assert calls == ["ans-unknown"]
    s.close()


def test_holds_listing_primes_its_answers(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _vault(case, 5)
    case.vault.close()
    s = unlock(case.path, case.custodian, trust=TrustStore())
    case.vault = s.vault
    desk = CaseDesk(s)
    for a in ids:
        desk.hold("answer", a, "keep")
    primed: list[list[str]] = []
    real = Tracer.prime_ids

    def spy(self: Tracer, answer_ids: list[str]) -> None:
        primed.append(list(answer_ids))
        real(self, answer_ids)

    monkeypatch.setattr(Tracer, "prime_ids", spy)
    listed = CaseDesk(s).holds()
    assert [hv.hold.subject for hv in listed] == ids
    assert primed == [ids]
    s.close()
