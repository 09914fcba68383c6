"""A legal hold on an imported answer protects every digest it rests on: its question,
answer, retrieved texts and the export file it was read from (issue [1/7], item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import admin
from store.crypto import Identity, sha256_hex
from store.errors import VaultError
from tests.helpers import T0, Case
from tests.imports.conftest import NOW, run_import, write
from tracer.engine.case import CaseDesk
from tracer.engine.trace import Tracer


def test_a_hold_on_an_imported_answer_blocks_purging_anything_it_rests_on(
    sourced: Case, lc_export: bytes
) -> None:
    case = sourced
    path = write(case, "lc.jsonl", lc_export)
    run_import(case, path)
    answer_id = sorted(a for (a,) in case.vault.query("SELECT answer_id FROM v_answers"))[0]
    assert answer_id.startswith("imp-")
    holder = Identity.from_seed("hana", b"hana")
    admin.grant_investigator(case.vault, case.custodian, holder.public, ["*"], T0, rights=["hold"])
    case.investigators["hana"] = holder
    s = case.session("hana")
    try:
        record = Tracer(s).trace(answer_id, record=False)
        assert record.answer_id == answer_id
        CaseDesk(s).hold("answer", answer_id, "litigation")
    finally:
        s.close()
    case.reopen()
    seq = case.vault.query("SELECT seq FROM v_answers WHERE answer_id = ?", [answer_id])[0][0]
    m = case.vault.entry(int(seq)).answer_record()
    texts = [str(m.question_sha256), str(m.answer_sha256)]
    texts += [str(p.retrieved_sha256) for p in m.passages if p.retrieved_sha256 is not None]
    assert len(texts) >= 3
    for digest in [*texts, sha256_hex(Path(path).read_bytes())]:
        with pytest.raises(VaultError, match="under legal hold"):
            admin.purge(case.vault, case.custodian, digest, "retention", "expired", "dpo", NOW)
