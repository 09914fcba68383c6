"""`tracer import --json` through the CLI, on an unmodified LlamaIndex export: its index
build is a trace with no model call, skipped, and the JSON says so (it used to crash)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import World
from tests.imports.conftest import dump
from tests.imports.test_pitfalls import _rag, retrace


def _args(w: World, *files: str | Path) -> list[str | Path]:
    return ["import", w.vault, *files, "--format", "otlp-json", "--collection", "support", *w.cust()]


def test_import_json_lists_skipped_traces(vault_world: World, li_export: bytes) -> None:
    w = vault_world
    export = w.root / "llamaindex.jsonl"
    export.write_bytes(li_export)
    dry = w.run(*_args(w, export), "--dry-run", "--json")
    assert dry.code == 0, dry
    plan = dry.json()
    assert plan["ok"] is True and plan["dry_run"] is True and plan["appended"] is False
    assert [s["reason"] for s in plan["skipped"]] == ["no model call (LLM span) in this trace"]
    skipped = plan["skipped"][0]
    assert set(skipped) == {"file", "trace_id", "root_span_id", "reason"}
    assert len(plan["answers"]) == 2 and all(a["seq"] is None for a in plan["answers"])
    done = w.run(*_args(w, export), "--json")
    assert done.code == 0, done
    out = done.json()
    assert out["appended"] is True and all(isinstance(a["seq"], int) for a in out["answers"])
    assert [a["answer_id"] for a in out["answers"]] == [a["answer_id"] for a in plan["answers"]]
    assert out["skipped"] == plan["skipped"]
    again = w.run(*_args(w, export), "--dry-run", "--json")  # appended once, and it says so
    assert again.code == 0, again
    js = again.json()
    assert js["answers"] == [] and js["already_imported"] == 2 and js["conflicts"] == []
    assert sum("already in the vault with the same content" in s["reason"] for s in js["skipped"]) == 2


def test_import_json_error_names_the_duplicated_span(vault_world: World) -> None:
    w = vault_world
    export = w.root / "twice.jsonl"
    export.write_bytes(dump([_rag(), retrace(_rag(), "7" * 32), _rag()]))
    r = w.run(*_args(w, export), "--dry-run", "--json")
    assert r.code == 1
    err = r.json()["error"]
    assert err["file"].endswith("twice.jsonl:3") and err["path"].endswith(".spanId")
    assert "appears twice" in err["message"]
