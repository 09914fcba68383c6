"""A retrieved passage the model was not given is signed `not_sent`, never dropped, never
signed as if sent: the SDK, ingest, the engine's trace, verify, the report and the TUI's
evidence screen say so; forged claims are refused; v1 manifests read exactly as before."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from store.records import Manifest
from tests.helpers import Case, manifest, passage, revision, signed
from tests.producer.conftest import RETURNS, SHIPPING, ingest_files, source_revision
from tracer.cli.render import print_trace
from tracer.engine.trace import Tracer
from tracer.engine.verify import verify
from tracer.producer import Authorization, CitationError, ModelInputError, Recorder, RecordError, chunks
from tracer.producer.adapters import cite_all_sent
from tracer.report.export import export_pack
from tracer.report.verify import verify_pack
from tracer.tui.widgets.passage import model_input_line

AUTH = Authorization("agent:helpdesk", "acl-7", "allow")
QUESTION = "How long do refunds take?"
REFUND = chunks(RETURNS)[0].text
PARCEL = chunks(SHIPPING)[0].text
ANSWER = "Within thirty days."


def _payload(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    doc = json.loads(path.read_text("utf-8"))
    return json.loads(base64.b64decode(doc["envelope"]["payload"])), doc["contents"]


def _two_retrieved(recorder: Recorder, prompt: str, *, mark: bool = True) -> Path:
    """p1 (refund) sent in `prompt`, p2 (parcel) retrieved and marked not sent."""
    returns, shipping = source_revision("returns", RETURNS), source_revision("shipping", SHIPPING)
    recorder.write_revision(returns)
    recorder.write_revision(shipping)
    with recorder.start(QUESTION, AUTH, "support", answer_id="ans-ns") as rec:
        p1 = rec.retrieved(REFUND, returns, rank=1, score=0.9, query=QUESTION)
        p2 = rec.retrieved(PARCEL, shipping, rank=2, score=0.4, query=QUESTION)
        rec.sent(prompt, [p1])
        if mark:
            rec.not_sent(p2, prompt=prompt)
        rec.answer(ANSWER)
        cite_all_sent(rec)
    return recorder.outbox.directory / next(p.name for p in recorder.outbox.directory.glob("answer-*.json"))


def test_a_passage_left_out_of_the_prompt_is_signed_not_sent(recorder: Recorder) -> None:
    path = _two_retrieved(recorder, f"Context:\n{REFUND}\n\nQ: {QUESTION}")
    payload, contents = _payload(path)
    assert payload["schema"] == "tracer.manifest/v2"
    p1, p2 = payload["passages"]
    assert (p1["model_input"], p2["model_input"]) == ("sent", "not_sent")
    assert contents[p1["model_input_sha256"]] == REFUND
    assert "model_input_sha256" not in p2 and contents[p2["retrieved_sha256"]] == PARCEL
    assert payload["citations"] == [{"answer_start": 0, "answer_end": len(ANSWER), "passage_ids": ["p1"]}]
    m = Manifest.from_json(payload)
    assert [p.model_input_state for p in m.passages] == ["sent", "not_sent"]
    assert m.passages[1].model_input_sha256 is None and m.unsent_citations == []


def test_it_ingests_traces_verifies_and_reports_with_the_word(
    case: Case, recorder: Recorder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_retrieved(recorder, f"Context:\n{REFUND}\n\nQ: {QUESTION}")
    files = sorted(recorder.outbox.directory.glob("*.json"), key=lambda f: not f.name.startswith("revision"))
    report = ingest_files(case, *files)
    assert report.ok and report.faults == [], report.to_json()
    s = case.session("ines")
    try:
        t = Tracer(s).trace("ans-ns", record=False)
        assert (t.integrity, t.currency, t.transform) == ("intact", "verified", None)
        p1, p2 = t.passages
        assert (p1.model_input_state, p2.model_input_state) == ("sent", "not_sent")
        assert (p2.integrity, p2.model_input.state, p2.model_input.text) == ("intact", "not_sent", None)
        print_trace(t, s)
        out = capsys.readouterr().out
        assert "model input (sent): INTACT" in out and "model input (not_sent): NOT_SENT" in out
        assert "model input not_sent: retrieved, but in no prompt" in model_input_line(p2).plain
        result = verify(s.vault, s, full=True)
        assert result.ok, [f.kind for f in result.findings]
        pack = export_pack(s, ["ans-ns"], tmp_path / "pack", {"json", "md", "html"})
    finally:
        s.close()
    v = verify_pack(pack)
    assert v.ok, v.failures
    md = (pack / "report.md").read_text("utf-8")
    assert "Model input: **not\\_sent** (retrieved, but in no prompt" in md
    assert "Model input: **sent**" in md
    html = (pack / "report.html").read_text("utf-8")
    assert 'Model input: <span class="state st-not_sent">not_sent</span>' in html


def test_a_pack_claiming_a_not_sent_passage_was_sent_is_not_authentic(
    case: Case, recorder: Recorder, tmp_path: Path
) -> None:
    _two_retrieved(recorder, f"Context:\n{REFUND}")
    files = sorted(recorder.outbox.directory.glob("*.json"), key=lambda f: not f.name.startswith("revision"))
    assert ingest_files(case, *files).ok
    s = case.session("ines")
    try:
        pack = export_pack(s, ["ans-ns"], tmp_path / "pack", {"json"})
    finally:
        s.close()
    report = json.loads((pack / "report.json").read_text("utf-8"))
    report["answers"][0]["trace"]["passages"][1]["model_input_state"] = "sent"
    (pack / "report.json").write_text(json.dumps(report), encoding="utf-8")
    v = verify_pack(pack)
    assert not v.ok
    assert any(f.path.endswith("passages[1].model_input_state") for f in v.failures), v.failures


@pytest.mark.parametrize(
    "carried",
    [
        PARCEL,  # verbatim
        PARCEL.replace(" is treated ", "\n   is treated "),  # re-wrapped
        PARCEL[: len(PARCEL) * 3 // 4],  # cut down, keeping more than half
    ],
)
def test_not_sent_is_refused_for_a_passage_the_prompt_carries(recorder: Recorder, carried: str) -> None:
    """The same rule that finds a model input (`derivable`) forbids the mark."""
    rec = recorder.start(QUESTION, AUTH, "support")
    p = rec.retrieved(PARCEL, source_revision("shipping", SHIPPING), rank=1, score=0.5, query=QUESTION)
    with pytest.raises(ModelInputError, match="the prompt carries it"):
        rec.not_sent(p, prompt=["system: be brief", f"Context: {carried}"])
    rec.not_sent(p, prompt=["system: be brief", f"Context: {PARCEL[:20]}"])  # a phrase is not the passage
    assert rec.model_input_state(p) == "not_sent"


def test_a_not_sent_passage_cannot_be_cited_sent_or_dropped(recorder: Recorder) -> None:
    rec = recorder.start(QUESTION, AUTH, "support")
    returns = source_revision("returns", RETURNS)
    p = rec.retrieved(REFUND, returns, rank=1, score=0.5, query=QUESTION)
    rec.not_sent(p, prompt="Q: refunds?")
    rec.answer(ANSWER)
    with pytest.raises(CitationError, match="marked not_sent"):
        rec.cite(0, 6, p)
    with pytest.raises(ModelInputError, match="marked not_sent"):
        rec.model_input(p, REFUND, prompt=REFUND)
    with pytest.raises(RecordError, match="drop\\(\\) was removed"):
        rec.drop(p)
    cited = recorder.start(QUESTION, AUTH, "support")
    q = cited.retrieved(REFUND, returns, rank=1, score=0.5, query=QUESTION)
    cited.sent(REFUND)
    cited.answer(ANSWER)
    cited.cite(0, 6, q)
    with pytest.raises(ModelInputError, match="a model input is recorded"):
        cited.not_sent(q, prompt="")


def test_a_passage_with_no_model_input_and_no_mark_is_still_refused(recorder: Recorder) -> None:
    with pytest.raises(ModelInputError, match=r"not_sent\(passage, prompt=\.\.\.\)"):
        _two_retrieved(recorder, f"Context:\n{REFUND}", mark=False)


def _v2(case: Case, **change: Any) -> dict[str, Any]:
    """A producer-signed v2 manifest built by hand (no SDK): what a forger can sign."""
    rev = revision("returns", "A", RETURNS, "2026-01-05T00:00:00Z")
    ship = revision("shipping", "A", SHIPPING, "2026-01-05T00:00:00Z")
    p1 = passage(rev, "thirty days", "p1", model_input="sent")
    p2 = passage(ship, "ten days", "p2", rank=2, model_input="not_sent")
    draft = manifest("ans-f", ANSWER, [p1, p2], citations=change.pop("citations", [(0, 6, ["p1"])]))
    for key, value in change.items():
        draft["passages"][1][key] = value
    return signed(case, draft)


def _ingest_sources(case: Case) -> None:
    rev = revision("returns", "A", RETURNS, "2026-01-05T00:00:00Z")
    ship = revision("shipping", "A", SHIPPING, "2026-01-05T00:00:00Z")
    assert case.ingest(rev, ship).ok


def test_forged_v2_claims_are_refused_at_ingest(case: Case) -> None:
    _ingest_sources(case)
    cited = case.ingest(_v2(case, citations=[(0, 6, ["p1", "p2"])]))
    assert not cited.ok
    (r,) = cited.rejected
    assert r.path == "$.envelope.payload.citations[0].passage_ids[1]" and "marked not_sent" in r.message
    smuggled = case.ingest(_v2(case, model_input_text=PARCEL))  # not_sent, yet a model input
    assert not smuggled.ok and "a passage marked not_sent has no model input" in smuggled.rejected[0].message
    assert smuggled.rejected[0].path == "$.envelope.payload.passages[1].model_input_sha256"
    unknown = case.ingest(_v2(case, model_input="maybe"))
    assert not unknown.ok and "schema manifest-v2" in unknown.rejected[0].message
    assert case.ingest(_v2(case)).ok


def test_a_v2_sent_passage_without_its_digest_is_refused(case: Case) -> None:
    _ingest_sources(case)
    doc = _v2(case)
    from store.producer import sign_payload

    payload = json.loads(base64.b64decode(doc["envelope"]["payload"]))
    del payload["passages"][0]["model_input_sha256"]
    doc["envelope"] = sign_payload(payload, case.producer)
    report = case.ingest(doc)
    assert not report.ok and "model_input 'sent' needs model_input_sha256" in report.rejected[0].message


def test_v1_cannot_carry_the_mark_and_reads_exactly_as_before(case: Case, recorder: Recorder) -> None:
    """Old-format manifests are unchanged: the SDK still writes v1 when every passage was
    sent, a v1 payload parses as before (each passage `sent`, its digest required), and a
    v1 payload cannot smuggle the v2 member past its schema."""
    with recorder.start(QUESTION, AUTH, "support", answer_id="ans-v1") as rec:
        p = rec.retrieved(REFUND, source_revision("returns", RETURNS), rank=1, score=0.9, query=QUESTION)
        rec.sent(f"Context: {REFUND}")
        rec.answer(ANSWER)
        rec.cite(0, 6, p)
    (path,) = recorder.outbox.directory.glob("answer-*.json")
    payload, _ = _payload(path)
    assert payload["schema"] == "tracer.manifest/v1" and "model_input" not in payload["passages"][0]
    assert Manifest.from_json(payload).passages[0].model_input_state == "sent"
    rev = revision("returns", "A", RETURNS, "2026-01-05T00:00:00Z")
    old = manifest("ans-old", ANSWER, [passage(rev, "thirty days")])
    sneaky = json.loads(json.dumps(old))
    sneaky["schema"] = "tracer.manifest/v1"
    sneaky["passages"][0]["model_input"] = "not_sent"
    assert case.ingest(rev).ok
    report = case.ingest(signed(case, sneaky))
    assert not report.ok and "schema manifest-v1" in report.rejected[0].message
    assert case.ingest(signed(case, old)).ok
