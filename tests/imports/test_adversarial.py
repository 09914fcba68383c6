"""An imported trace is a new kind of entry: it cannot be forged, replayed or smuggled in
as a producer manifest, and its untrusted text renders inert everywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

from store.crypto import Identity
from store.dsse import Envelope
from store.entries import EntryKind, LogEntry, Statement, make_entry
from tests.cli.conftest import World
from tests.helpers import Case, append_by_hand
from tests.imports.conftest import NOW, dump, run_import, trace, write
from tests.imports.test_pitfalls import _rag
from tracer.engine.serialize import trace_json
from tracer.engine.verify import verify


def _imported(case: Case) -> tuple[int, bytes]:
    plan = run_import(case, write(case, "rag.jsonl", dump([_rag()])))
    seq = plan.seqs[0]
    data = case.vault.con.execute("SELECT entry FROM log WHERE seq = ?", [seq]).fetchall()[0][0]
    return seq, bytes(data)


def _findings(case: Case) -> list[tuple[str, int | None]]:
    s = case.session("ines", read_only=True, forensic=True)
    return [(f.kind, f.seq) for f in verify(s.vault, s).findings]


def test_a_hand_written_import_without_the_custodian_key_is_caught(sourced: Case) -> None:
    _seq, data = _imported(sourced)
    stmt = LogEntry.from_bytes(data).payload_json()
    stmt["fields"]["$.answer_sha256"] = {"state": "attested", "source": None, "detail": None}
    stmt["answer_id"] = "imp-forged"
    mallory = Identity.from_seed("mallory", b"mallory")
    seq = append_by_hand(
        sourced, Statement(EntryKind.IMPORTED_TRACE, stmt, mallory), checkpoint_signer=sourced.custodian
    )
    found = _findings(sourced)
    assert any(
        seq == s and k in ("signature_invalid", "statement_signature_invalid", "statement_out_of_place")
        for k, s in found
    ), found
    t = trace(sourced, "imp-forged")
    assert t.signature == "signature_invalid" and t.integrity == "signature_invalid"


def test_a_replayed_import_names_the_wrong_place(sourced: Case) -> None:
    _seq, data = _imported(sourced)
    seq = append_by_hand(sourced, data, checkpoint_signer=sourced.custodian)  # verbatim copy
    found = _findings(sourced)
    assert ("statement_out_of_place", seq) in found or ("entry_out_of_place", seq) in found, found
    assert ("answer_duplicated", seq) in found


def test_an_import_presented_as_a_producer_manifest_is_refused(sourced: Case, tmp_path: Path) -> None:
    _seq, data = _imported(sourced)
    env = Envelope.from_json(json.loads(data)["envelope"], "log", "$.envelope")
    # as a log entry of kind manifest
    entry = make_entry(EntryKind.MANIFEST, env, ingested_at=NOW, faults=[])
    seq = len(sourced.vault.leaf_hashes())
    entry = entry.at(seq)
    # no view rows: a manifest's cannot be derived from it (verify says so too)
    sourced.vault.con.execute(
        "INSERT INTO log VALUES (?, ?, ?, ?)", [seq, "manifest", entry.data, entry.leaf]
    )
    found = _findings(sourced)
    assert ("entry_kind_mismatch", seq) in found, found


def test_an_import_envelope_is_no_ingest_input(sourced: Case) -> None:
    _seq, data = _imported(sourced)
    env = json.loads(data)["envelope"]
    report = sourced.ingest({"envelope": env, "contents": {}})
    assert not report.appended
    assert [(r.path, "application/vnd.tracer.manifest.v1+json" in r.message) for r in report.rejected] == [
        ("$.envelope.payloadType", True)
    ]


def test_the_importer_never_claims_a_producer_attestation(sourced: Case) -> None:
    _seq, data = _imported(sourced)
    stmt = LogEntry.from_bytes(data).payload_json()
    assert {f["state"] for f in stmt["fields"].values()} <= {
        "importer-computed",
        "absent",
        "redacted",
        "truncated",
    }


HOSTILE = "[bold red]x[/] \x1b]8;;http://evil\x07click\x1b]8;;\x07 \x1b[2J \u202egnp.exe \u200bzw"


def test_export_text_renders_inert_in_cli_and_json(sourced: Case, world: World) -> None:
    doc = _rag(content=f"Customers may request a refund within thirty days of delivery. {HOSTILE}")
    # a mapped id holding one is refused (test_injection.py); any other metadata is kept, inert
    meta = {"document_id": "returns", "revision": "r1", "title": f"returns{HOSTILE}"}
    from tests.imports.conftest import attr, spans

    attr(spans(doc)[1], "retrieval.documents.0.document.metadata")["value"] = {  # type: ignore[index]
        "stringValue": json.dumps(meta)
    }
    spans(doc)[0]["attributes"][1]["value"]["stringValue"] = f"Answer {HOSTILE}"
    plan = run_import(sourced, write(sourced, "hostile.jsonl", dump([doc])))
    answer_id = plan.items[0].answer_id
    doc_json = json.dumps(trace_json(trace(sourced, answer_id)), ensure_ascii=False)
    assert "Answer" in doc_json
    sourced.close()
    for fmt in ([], ["--json"]):
        r = _trace_cli(world, sourced, answer_id, fmt)
        assert "\x1b" not in r and "\u202e" not in r and "\u200b" not in r and "\x07" not in r
        assert "[bold red]x[/]" in r  # markup stays literal text


def _trace_cli(world: World, case: Case, answer_id: str, extra: list[str]) -> str:
    from tracer.cli.render import print_trace
    from tracer.engine.trace import Tracer
    from tracer.inert import json_inert

    s = case.session("ines")
    t = Tracer(s).trace(answer_id, record=False)
    if extra:
        return json_inert(trace_json(t))
    world.capsys.readouterr()
    print_trace(t, s)
    return world.capsys.readouterr().out


def test_the_cli_refuses_a_bad_file_and_leaves_the_vault_unchanged(world: World) -> None:
    w = world
    w.ok("init", w.vault, *w.cust(), "--origin", "tracer.test/import")
    good = w.root / "good.jsonl"
    good.write_bytes(dump([_rag()]))
    bad = w.root / "bad.jsonl"
    bad.write_bytes(dump([_rag()]) + b"{oops\n")
    r = w.run("import", w.vault, good, bad, "--format", "otlp-json", "--collection", "support", *w.cust())
    assert r.code == 1 and re.search(r"bad\.jsonl:2: \$: not JSON", r.out), r
    assert "nothing imported" in r.out
    dry = w.run(
        "import", w.vault, good, "--format", "otlp-json", "--collection", "support", *w.cust(), "--dry-run"
    )
    assert dry.code == 0 and "would import imp-" in dry.out and "dry run: nothing appended" in dry.out
    assert "imported — not attested by the producer" in dry.out
    done = w.run(
        "import", w.vault, good, "--format", "otlp-json", "--collection", "support", *w.cust(), "--json"
    )
    assert done.code == 0 and done.json()["appended"] is True
