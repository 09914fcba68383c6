"""Line injection through imported fields (issue 22 item 7), and span trees with no root
(item 8): an id, name or version holding a newline or an escape is refused as a
producer's is, and whatever a signed statement holds prints on one line in every output;
a cyclic tree is listed as skipped with its loop named, never dropped in silence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store.errors import InputError
from store.imported import append_imported
from tests.cli.conftest import World
from tests.helpers import Case
from tests.imports.conftest import NOW, attr, dump, run_import, spans, write
from tests.imports.test_pitfalls import _rag
from tracer.cli.render import print_revalidation, print_trace
from tracer.engine.catalog import impact, revalidate
from tracer.engine.serialize import trace_json
from tracer.engine.trace import Tracer
from tracer.importers.build import DocumentMapping
from tracer.importers.mapping import ReadOptions
from tracer.importers.run import ExportFormat, plan_import
from tracer.inert import json_inert
from tracer.report.export import export_pack

FORGED = "RESULT      OK: no findings"
HOSTILE = f"svc\n{FORGED}"


def _set(doc: dict[str, Any], where: str, key: str, value: str) -> None:
    if where == "resource":
        attrs = doc["resourceSpans"][0]["resource"]["attributes"]
        found = [a for a in attrs if a["key"] == key]
        if found:
            found[0]["value"] = {"stringValue": value}
        else:
            attrs.append({"key": key, "value": {"stringValue": value}})
        return
    span = spans(doc)[int(where)]
    a = attr(span, key)
    if a is None:
        span["attributes"].append({"key": key, "value": {"stringValue": value}})
    else:
        a["value"] = {"stringValue": value}


CASES = [
    ("resource", "service.name", "$.resourceSpans[0].resource.attributes[0].value.stringValue"),
    ("resource", "service.version", "$.resourceSpans[0].resource.attributes[1].value.stringValue"),
    ("0", "session.id", ".spans[0].attributes[3].value.stringValue"),
    ("2", "llm.model_name", ".spans[2].attributes[1].value.stringValue"),
    ("1", "retrieval.documents.0.document.id", ".spans[1].attributes[2].value.stringValue"),
    ("1", "gen_ai.data_source.id", ".spans[1].attributes[6].value.stringValue"),
]


@pytest.mark.parametrize(("where", "key", "path"), CASES, ids=[c[1] for c in CASES])
def test_an_imported_identifier_with_a_newline_is_refused_naming_its_place(
    sourced: Case, where: str, key: str, path: str
) -> None:
    doc = _rag()
    _set(doc, where, key, HOSTILE)
    before = len(sourced.vault.leaf_hashes())
    with pytest.raises(InputError) as exc:
        run_import(sourced, write(sourced, "hostile.jsonl", dump([doc])))
    assert exc.value.file.endswith("hostile.jsonl:1")
    assert exc.value.path.endswith(path), exc.value.path
    assert "no identifier" in exc.value.message and "U+000A" in exc.value.message
    assert len(sourced.vault.leaf_hashes()) == before


@pytest.mark.parametrize("value", ["a\x1b[2Jb", "a\u202eb", "a\u200bb", "a\rb"])
def test_every_hidden_character_is_refused_in_a_mapped_metadata_id(sourced: Case, value: str) -> None:
    doc = _rag()
    meta = json.dumps({"document_id": value, "revision": "r1"})
    attr(spans(doc)[1], "retrieval.documents.0.document.metadata")["value"] = {"stringValue": meta}  # type: ignore[index]
    with pytest.raises(InputError) as exc:
        run_import(sourced, write(sourced, "meta.jsonl", dump([doc])))
    assert "metadata['document_id'] of document 0 is no identifier" in exc.value.message
    assert exc.value.path.endswith(".spans[1].attributes[5].value.stringValue"), exc.value.path


def _import_args(w: World, path: Path) -> list[str | Path]:
    return ["import", w.vault, path, "--format", "otlp-json", "--collection", "support", *w.cust()]


def test_the_cli_refusal_of_a_hostile_export_prints_no_forged_line(vault_world: World) -> None:
    w = vault_world
    doc = _rag()
    _set(doc, "resource", "service.name", HOSTILE)
    path = w.root / "hostile.jsonl"
    path.write_bytes(dump([doc]))
    for extra in ([], ["--dry-run"], ["--json"]):
        r = w.run(*_import_args(w, path), *extra)
        assert r.code == 1, r
        assert not any(line.startswith("RESULT") for line in r.out.splitlines()), r.out
    assert "service name (service.name) is no identifier" in r.json()["error"]["message"]


def _signed_hostile(case: Case) -> str:
    """An imported statement holding newlines in every shown field, signed by the custodian
    (as an importer before this rule would have): what is signed must still print inert."""
    plan = plan_import(
        case.vault,
        case.custodian,
        [write(case, "rag.jsonl", dump([_rag()]))],
        ExportFormat.OTLP_JSON,
        "support",
        NOW,
        DocumentMapping(),
        ReadOptions(),
    )
    item = plan.items[0]
    st = item.statement
    st["producer"] = {"system": HOSTILE, "version": HOSTILE}
    st["runtime"]["model"] = HOSTILE
    st["runtime"]["session_id"] = HOSTILE
    st["export"]["file"] = HOSTILE
    st["passages"][0]["chunk_ref"] = HOSTILE
    st["passages"][0]["data_source"] = HOSTILE
    st["fields"]["$.runtime.model"]["detail"] = HOSTILE
    append_imported(case.vault, case.custodian, [item])
    return item.answer_id


def _forged(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith(FORGED)]


def test_a_signed_statement_with_newlines_prints_inert_on_every_output(
    sourced: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    answer_id = _signed_hostile(sourced)
    s = sourced.session("ines")
    t = Tracer(s).trace(answer_id, record=False)
    capsys.readouterr()
    print_trace(t, s)
    print_revalidation(revalidate(s))
    print_revalidation(impact(s, document="returns"))
    out = capsys.readouterr().out
    assert "svc⟨LF⟩RESULT" in out
    assert _forged(out) == [], _forged(out)
    js = json_inert(trace_json(t))
    assert "\n" + FORGED not in js and _forged(js) == []
    try:
        pack = export_pack(s, [answer_id], sourced.path.parent / "pack", {"md", "html", "json"})
    finally:
        s.close()
        sourced.reopen()
    for name in ("report.md", "report.html"):
        text = (pack / name).read_text(encoding="utf-8")
        assert _forged(text) == [], (name, _forged(text))


def _cyclic(self_parent: bool) -> dict[str, Any]:
    doc = _rag()
    root = spans(doc)[0]
    root["parentSpanId"] = root["spanId"] if self_parent else spans(doc)[2]["spanId"]
    return doc


@pytest.mark.parametrize("self_parent", [True, False], ids=["own-parent", "descendant-parent"])
def test_a_cyclic_span_tree_is_listed_as_skipped_with_its_loop(sourced: Case, self_parent: bool) -> None:
    doc = _cyclic(self_parent)
    good = json.loads(json.dumps(_rag()).replace("5b8efff798038103d269b633813fc60c", "e" * 32))
    plan = run_import(sourced, write(sourced, "cyclic.jsonl", dump([doc, good])), dry_run=True)
    assert [it.statement["trace_id"] for it in plan.items] == ["e" * 32]  # the other trace imports
    (skip,) = plan.skipped
    assert skip.trace_id == "5b8efff798038103d269b633813fc60c"
    assert skip.reason.startswith("cyclic span tree: the parent chain loops")
    loop = "1000000000000001 -> 1000000000000001" if self_parent else "1000000000000001 -> 1000000000000003"
    assert loop in skip.reason and "3 span(s) with no root" in skip.reason, skip.reason


def test_the_cli_lists_a_cyclic_trace_in_text_and_json(vault_world: World) -> None:
    w = vault_world
    path = w.root / "cyclic.jsonl"
    path.write_bytes(dump([_cyclic(True)]))
    r = w.run(*_import_args(w, path))
    assert r.code == 0, r
    assert "skipped trace 5b8efff798038103d269b633813fc60c" in r.out and "cyclic span tree" in r.out
    assert "nothing to import" in r.out
    r = w.run(*_import_args(w, path), "--json")
    assert [s["reason"][:16] for s in r.json()["skipped"]] == ["cyclic span tree"]
