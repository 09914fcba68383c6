"""A small batch (an unlock's access entry, a note) is inserted with plain parameters,
a large one through Arrow: both must leave exactly the rows the log derives, with the
schema's types, so the signed view digests and `verify` cannot tell them apart."""

from __future__ import annotations

import pytest

from store import admin, batch
from store.entries import LogEntry
from store.schema import VIEW_COLUMNS
from store.views import Rows, derive
from tests.helpers import T0, Case, manifest, passage, revision, signed
from tracer.engine.verify import verify


def _writes(case: Case) -> None:
    rev = revision("travel", "A", "Employees may claim up to 40 EUR per day.\n", "2026-01-05T00:00:00Z")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Forty euros.", [passage(rev, "40 EUR")]))).ok
    ines = case.investigators["ines"]
    admin.record_access(case.vault, ines, "unlock", "vault", T0)
    admin.record_access(case.vault, ines, "open_answer", "ans-1", T0, forensic=True)
    admin.record_finding(case.vault, ines, "ans-1", "passage:0", "checked by hand", T0)


def _derived(case: Case) -> Rows:
    rows: Rows = {t: [] for t in VIEW_COLUMNS}
    for seq, data in case.vault.con.execute("SELECT seq, entry FROM log ORDER BY seq").fetchall():
        derive(int(seq), LogEntry.from_bytes(bytes(data)), rows)
    return rows


def _stored(case: Case) -> Rows:
    out: Rows = {}
    for table, cols in VIEW_COLUMNS.items():
        names = ", ".join(c for c, _t in cols)
        out[table] = [tuple(r) for r in case.vault.con.execute(f"SELECT {names} FROM {table}").fetchall()]  # noqa: S608
    return out


@pytest.mark.parametrize("small", [16, -1], ids=["parameters", "arrow"])
def test_both_insert_paths_leave_the_rows_the_log_derives(
    case: Case, monkeypatch: pytest.MonkeyPatch, small: int
) -> None:
    monkeypatch.setattr(batch, "SMALL_BATCH", small)
    _writes(case)
    derived, stored = _derived(case), _stored(case)
    for table in VIEW_COLUMNS:
        assert sorted(stored[table], key=repr) == sorted(derived[table], key=repr), table
    forensic = [r for r in stored["v_access"] if r[VIEW_COLUMNS["v_access"].index(("forensic", "BOOLEAN"))]]
    assert len(forensic) == 1 and forensic[0][VIEW_COLUMNS["v_access"].index(("forensic", "BOOLEAN"))] is True
    session = case.session()
    try:
        report = verify(case.vault, session)
    finally:
        session.close()
    assert report.ok, [f.kind for f in report.findings]


def test_an_access_entry_takes_the_parameter_path(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """The append every unlock and every look makes builds no Arrow table (pyarrow would
    load pandas wherever it is installed); a large batch still does."""

    def no_arrow(*_a: object, **_k: object) -> None:
        raise AssertionError("a small batch went through Arrow")

    monkeypatch.setattr(batch, "insert_rows", no_arrow)
    admin.record_access(case.vault, case.investigators["ines"], "unlock", "vault", T0)
    assert case.vault.con.execute("SELECT count(*) FROM v_access").fetchall()[0][0] == 1
    monkeypatch.setattr(batch, "SMALL_BATCH", -1)
    with pytest.raises(AssertionError, match="through Arrow"):
        admin.record_access(case.vault, case.investigators["ines"], "unlock", "vault", T0)
