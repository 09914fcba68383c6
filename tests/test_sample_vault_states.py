"""The sample vault is the product's fixture: every state it promises, the engine finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from sample_vault import expected
from sample_vault.build import BuildInfo
from store.crypto import load_identity
from tracer.engine.catalog import revalidate
from tracer.engine.session import Session, unlock
from tracer.engine.trace import Tracer
from tracer.engine.trust import TrustStore
from tracer.engine.verify import verify


def _session(vault: Path, name: str) -> Session:
    ident = load_identity(vault / "keys" / f"{name}.key", expected.INVESTIGATORS[name]["passphrase"].encode())
    return unlock(vault, ident, trust=TrustStore())


@pytest.mark.parametrize(("viewer", "attr"), [("ines", "answer_states"), ("omar", "answer_states_limited")])
def test_every_answer_has_its_expected_currency(
    sample_vault: Path, sample_build: BuildInfo, viewer: str, attr: str
) -> None:
    s = _session(sample_vault, viewer)
    try:
        got = {a.row.answer_id: a.summary.currency for a in revalidate(s).answers}
    finally:
        s.close()
    want: dict[str, str] = getattr(sample_build, attr)
    wrong = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    assert not wrong
    assert set(got.values()) >= ({"verified", "moved", "stale", "ambiguous", "unavailable", "unchecked"})


def test_verify_pins_exactly_the_tampered_record(sample_vault: Path) -> None:
    s = _session(sample_vault, "ines")
    try:
        report = verify(s.vault, s)
    finally:
        s.close()
    assert [f.kind for f in report.findings] == ["checksum_mismatch"]
    f = report.findings[0]
    assert f.record["answer_id"] == expected.TAMPERED["answer_id"]
    assert f.record["passage_id"] == expected.TAMPERED["passage_id"]
    assert f.record["digest"] == expected.TAMPERED["digest"]
    assert report.counts["purged"] >= 2


def test_tampered_text_is_never_shown(sample_vault: Path) -> None:
    s = _session(sample_vault, "ines")
    try:
        t = Tracer(s).trace(expected.TAMPERED["answer_id"])
    finally:
        s.close()
    p = next(p for p in t.passages if p.passage_id == expected.TAMPERED["passage_id"])
    assert p.retrieved.state == "checksum_mismatch" and p.retrieved.text is None
    assert t.integrity == "checksum_mismatch"


def test_travel_tombstone_and_retained_passage(sample_vault: Path) -> None:
    s = _session(sample_vault, "ines")
    try:
        t = Tracer(s).trace(expected.KEY_ANSWERS["travel-r1-allowance"])
    finally:
        s.close()
    assert t.currency == "unavailable"
    assert all(p.retrieved.state == "intact" for p in t.passages)
    assert any(p.currency.reason == "latest_revision_purged" for p in t.passages)


def test_sample_evidence_is_not_in_the_file_in_clear(sample_build: BuildInfo) -> None:
    data = b"".join(p.read_bytes() for p in sample_build.out_dir.glob("vault.duckdb*"))
    for sentence in (
        "Do not restart the payments service in production during settlement",
        "within thirty days of delivery",
        "within 48 hours of delivery",
    ):
        assert sentence.encode() not in data
