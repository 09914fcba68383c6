"""Overlapping exports (issue 25 item 3): a trace already in the vault with the same
content is skipped and listed, with other content it is a loud conflict, and the dry run
says which is which.  "The same" is decided by the trace digest in the custodian-signed
log entry, never by a view row: the attacks below try to smuggle a changed trace past
the skip by editing the vault file without the key."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import World
from tests.helpers import Case
from tests.imports.conftest import attr, dump, run_import, spans, write
from tests.imports.test_pitfalls import _rag, retrace
from tracer.engine.verify import verify
from tracer.importers.mapping import ReadOptions, answers_of
from tracer.importers.otlp import read_otlp_json_lines
from tracer.importers.run import ImportConflictError

A, B, C = ("a" * 31 + "1", "b" * 31 + "2", "c" * 31 + "3")


def _trace(trace_id: str, answer: str = "Thirty days.") -> dict[str, Any]:
    doc = retrace(_rag(), trace_id)
    attr(spans(doc)[0], "output.value")["value"] = {"stringValue": answer}  # type: ignore[index]
    return doc


def _day(case: Case, name: str, *docs: dict[str, Any]) -> Path:
    return write(case, name, dump(list(docs)))


def test_a_rotated_export_imports_the_new_traces_and_lists_the_rest(sourced: Case) -> None:
    first = run_import(sourced, _day(sourced, "day1.jsonl", _trace(A), _trace(B)))
    assert len(first.seqs) == 2
    # the next day's file holds B again (a wider window), written by another exporter run:
    # other whitespace and member order, the same spans
    day2 = [json.loads(json.dumps(_trace(B), indent=1, sort_keys=True)), _trace(C)]
    path = write(
        sourced, "day2.jsonl", ("\n".join(json.dumps(d, sort_keys=True) for d in day2) + "\n").encode()
    )
    plan = run_import(sourced, path)
    assert [it.statement["trace_id"] for it in plan.items] == [C] and len(plan.seqs) == 1
    assert plan.already == 1 and plan.conflicts == []
    (skip,) = plan.skipped
    assert skip.trace_id == B and skip.file.endswith("day2.jsonl:1")
    assert f"already in the vault with the same content (log entry {first.seqs[1]})" in skip.reason


def test_the_same_trace_with_other_content_is_a_loud_conflict(sourced: Case) -> None:
    run_import(sourced, _day(sourced, "day1.jsonl", _trace(A), _trace(B)))
    size = len(sourced.vault.leaf_hashes())
    path = _day(sourced, "day2.jsonl", _trace(B, "Ninety days."), _trace(C))
    dry = run_import(sourced, path, dry_run=True)  # says which is which
    assert [it.statement["trace_id"] for it in dry.items] == [C]
    (c,) = dry.conflicts
    assert c.trace_id == B and "with OTHER content" in c.reason and "never imported over" in c.reason
    with pytest.raises(ImportConflictError) as err:
        run_import(sourced, path)
    assert [x.trace_id for x in err.value.conflicts] == [B]
    assert len(sourced.vault.leaf_hashes()) == size  # all or nothing: C is not imported either


def test_two_files_of_one_call_holding_one_trace(sourced: Case) -> None:
    same = run_import(
        sourced, _day(sourced, "x.jsonl", _trace(A)), _day(sourced, "y.jsonl", _trace(A)), dry_run=True
    )
    assert len(same.items) == 1 and same.already == 1 and same.conflicts == []
    other = run_import(
        sourced, _day(sourced, "x.jsonl", _trace(A)), _day(sourced, "z.jsonl", _trace(A, "No.")), dry_run=True
    )
    assert [c.file.rsplit("/", 1)[-1] for c in other.conflicts] == ["z.jsonl:1"]
    assert "also in" in other.conflicts[0].reason and "x.jsonl:1" in other.conflicts[0].reason


def _entry(case: Case, seq: int) -> bytes:
    return bytes(case.vault.con.execute("SELECT entry FROM log WHERE seq = ?", [seq]).fetchall()[0][0])


def test_a_changed_trace_cannot_be_smuggled_past_the_skip_by_editing_the_vault(sourced: Case) -> None:
    first = run_import(sourced, _day(sourced, "day1.jsonl", _trace(A), _trace(B)))
    seq_a, seq_b = first.seqs
    changed = _day(sourced, "day2.jsonl", _trace(B, "Ninety days."))
    spans_read = read_otlp_json_lines(changed.read_bytes(), str(changed))
    target = answers_of(spans_read, ReadOptions())[0][0].trace_sha256
    con = sourced.vault.con
    # 1. rewrite the signed entry so it names the changed trace's digest: the signature fails
    original = _entry(sourced, seq_b)
    body = json.loads(original)
    payload = json.loads(base64.b64decode(body["envelope"]["payload"]))
    assert payload["statement"]["trace_sha256"] != target
    payload["statement"]["trace_sha256"] = target
    body["envelope"]["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    con.execute("UPDATE log SET entry = ? WHERE seq = ?", [json.dumps(body).encode(), seq_b])
    plan = run_import(sourced, changed, dry_run=True)
    assert plan.items == [] and plan.already == 0
    assert "cannot be checked" in plan.conflicts[0].reason and "signature" in plan.conflicts[0].reason
    con.execute("UPDATE log SET entry = ? WHERE seq = ?", [original, seq_b])
    # 2. point B's answer row at A's entry (signed, valid, but another answer's)
    con.execute("UPDATE v_answers SET seq = ? WHERE answer_id = ?", [seq_a, first.items[1].answer_id])
    plan = run_import(sourced, changed, dry_run=True)
    assert plan.items == [] and plan.already == 0
    assert f"holds answer {first.items[0].answer_id!r}" in plan.conflicts[0].reason
    # 3. point it at an entry that is no imported trace
    con.execute("UPDATE v_answers SET seq = 0 WHERE answer_id = ?", [first.items[1].answer_id])
    plan = run_import(sourced, changed, dry_run=True)
    assert plan.items == [] and "not an imported trace" in plan.conflicts[0].reason
    # 4. an answer row that names no entry at all
    con.execute("UPDATE v_answers SET seq = 999999 WHERE answer_id = ?", [first.items[1].answer_id])
    plan = run_import(sourced, changed, dry_run=True)
    assert plan.items == [] and "is not in the log" in plan.conflicts[0].reason


def test_a_deleted_answer_row_lets_the_trace_in_again_and_verify_names_the_duplicate(sourced: Case) -> None:
    """The skip reads the view only to find where to look; a deleted row looks like a new
    answer, so the changed copy is appended beside the signed one — and verify, which
    reads the log, reports the answer twice.  Nothing is skipped on a row's word."""
    first = run_import(sourced, _day(sourced, "day1.jsonl", _trace(B)))
    sourced.vault.con.execute("DELETE FROM v_answers WHERE answer_id = ?", [first.items[0].answer_id])
    plan = run_import(sourced, _day(sourced, "day2.jsonl", _trace(B, "Ninety days.")))
    assert len(plan.seqs) == 1
    s = sourced.session("ines", read_only=True, forensic=True)
    kinds = {f.kind for f in verify(s.vault, s).findings}
    assert "answer_duplicated" in kinds, kinds


def _args(w: World, *files: Path) -> list[str | Path]:
    return ["import", w.vault, *files, "--format", "otlp-json", "--collection", "support", *w.cust()]


def test_the_cli_summarises_skips_and_shouts_conflicts(vault_world: World) -> None:
    w = vault_world
    day1, day2, bad = (w.root / n for n in ("day1.jsonl", "day2.jsonl", "bad.jsonl"))
    day1.write_bytes(dump([_trace(A), _trace(B)]))
    day2.write_bytes(dump([_trace(B), _trace(C)]))
    bad.write_bytes(dump([_trace(C, "Changed."), _trace("d" * 32)]))
    w.ok(*_args(w, day1))
    r = w.ok(*_args(w, day2))
    assert "1 answer(s) already in the vault with the same content: skipped (imported 1 new)" in r.out
    assert "skipped trace " + B in r.out
    dry = w.run(*_args(w, bad), "--dry-run")
    assert dry.code == 1 and "CONFLICT imp-" in dry.out and f"(trace {C}" in dry.out
    assert "would import imp-" in dry.out and "the real run would refuse the whole call" in dry.out
    real = w.run(*_args(w, bad))
    assert real.code == 1 and "CONFLICT" in real.out and "nothing imported: 1 conflict(s)" in real.out
    js = w.run(*_args(w, bad), "--json")
    assert js.code == 1 and js.json()["ok"] is False and js.json()["conflicts"][0]["trace_id"] == C
