"""The recorder: what it signs is what it was given, and wrong use fails at the call."""

from __future__ import annotations

import base64
import json
import os
import time
from datetime import datetime
from pathlib import Path

import pytest

from store.crypto import sha256_hex
from store.dsse import Envelope, verify_envelope
from store.entries import MANIFEST_TYPE
from tests.helpers import Case
from tests.producer.conftest import RETURNS, SHIPPING, ingest_files, source_revision, trace_of
from tracer.producer import (
    Authorization,
    Chunker,
    CitationError,
    LocateError,
    ModelInputError,
    Note,
    Outbox,
    Recorder,
    RecordError,
    Runtime,
    chunks,
)
from tracer.producer.outbox import TEMP_MAX_AGE

AUTH = Authorization("agent:helpdesk", "acl-7", "allow")
QUESTION = "How long do I have to return something?"
ANSWER = "You can ask for a refund within thirty days of delivery; gift cards are never refunded."


def _payload(path: Path) -> tuple[dict[str, object], dict[str, str]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return json.loads(base64.b64decode(doc["envelope"]["payload"])), doc["contents"]


def _record_two(recorder: Recorder) -> Path:
    returns = source_revision("returns", RETURNS)
    c0, c1 = chunks(RETURNS)
    prompt = f"Answer from the context.\n\n[1] {c0.text}\n[2] {c1.text}\n\nQ: {QUESTION}"
    with recorder.start(QUESTION, AUTH, "support", answer_id="ans-1") as rec:
        p1 = rec.retrieved(c0.text, returns, rank=1, score=0.82, query=QUESTION)
        p2 = rec.retrieved(c1.text, returns, rank=2, score=0.61, query=QUESTION)
        rec.sent(prompt)
        rec.answer(ANSWER)
        rec.cite_text("within thirty days of delivery", p1)
        rec.cite_text("gift cards are never refunded", p2)
    return recorder.outbox.directory / next(p.name for p in recorder.outbox.directory.glob("answer-*.json"))


def test_a_record_ingests_and_its_citations_verify(case: Case, recorder: Recorder) -> None:
    path = _record_two(recorder)
    rev = recorder.write_revision(source_revision("returns", RETURNS))
    report = ingest_files(case, rev, path)
    assert report.ok and not report.faults, report.to_json()
    t = trace_of(case, "ans-1")
    assert t.integrity == "intact" and t.currency == "verified"
    assert [(p.transform.state, p.currency.state) for p in t.passages] == [
        ("found_at_locator", "verified"),
        ("found_at_locator", "verified"),
    ]
    assert [c.span for c in t.citations] == [
        "within thirty days of delivery",
        "gift cards are never refunded",
    ]


def test_every_digest_is_computed_from_the_texts_given(case: Case, recorder: Recorder) -> None:
    path = _record_two(recorder)
    payload, contents = _payload(path)
    env = Envelope.from_json(json.loads(path.read_text())["envelope"], str(path), "$.envelope")
    assert env.payload_type == MANIFEST_TYPE
    verify_envelope(env, {case.producer.key_id: case.producer.public.ed25519})

    def digest(text: str) -> str:
        return sha256_hex(text.encode("utf-8"))

    c0, c1 = chunks(RETURNS)
    assert payload["question_sha256"] == digest(QUESTION) and payload["answer_sha256"] == digest(ANSWER)
    passages = payload["passages"]
    assert isinstance(passages, list)
    assert [p["retrieved_sha256"] for p in passages] == [digest(c0.text), digest(c1.text)]
    assert [p["query_sha256"] for p in passages] == [digest(QUESTION)] * 2
    assert [p["locator"] for p in passages] == [c0.locator.to_json(), c1.locator.to_json()]
    assert [p["chunk"]["chunk_id"] for p in passages] == ["returns#0", "returns#1"]
    assert contents == {digest(t): t for t in (QUESTION, ANSWER, c0.text, c1.text)}
    assert QUESTION not in json.dumps(payload)  # texts travel beside the signature, not in it


def test_a_model_input_must_be_an_exact_substring_of_the_prompt(recorder: Recorder) -> None:
    returns = source_revision("returns", RETURNS)
    text = chunks(RETURNS)[0].text
    rec = recorder.start(QUESTION, AUTH, "support")
    p = rec.retrieved(text, returns, rank=1, score=0.5, query=QUESTION)
    with pytest.raises(ModelInputError, match="the prompt does not carry the retrieved text"):
        rec.sent("context: Gift cards are never refunded.")
    with pytest.raises(ModelInputError, match="not an exact substring"):
        rec.model_input(p, "[doc 1] " + text, prompt=f"context: {text}")
    rec.model_input(p, "[doc 1] " + text, prompt=["system: be brief", f"context: [doc 1] {text}"])
    with pytest.raises(ModelInputError, match="already recorded"):
        rec.model_input(p, text, prompt=text)


def test_a_model_input_must_carry_the_retrieved_text(recorder: Recorder) -> None:
    """Any substring of the prompt is not enough: it must contain the passage or be part of it."""
    returns = source_revision("returns", RETURNS)
    text = chunks(RETURNS)[0].text
    prompt = f"System: be brief.\n\nContext:\n[1] {text[:30]}…\n[2] {text}\n\nQ: {QUESTION}"
    rec = recorder.start(QUESTION, AUTH, "support")
    unrelated, labelled, cut, rewrapped, escaped = (
        rec.retrieved(text, returns, rank=n, score=0.5, query="q") for n in range(1, 6)
    )
    with pytest.raises(ModelInputError, match="neither contains the retrieved text nor is part of it"):
        rec.model_input(unrelated, "System:", prompt=prompt)
    rec.model_input(labelled, f"[2] {text}", prompt=prompt)
    with pytest.raises(ModelInputError, match="keeping at least 50% of it"):
        rec.model_input(cut, text[:30], prompt=prompt)  # too little of it: a phrase, maybe another's
    rec.model_input(cut, text[:40], prompt=f"[1] {text[:40]}…")  # cut to fit the context: part of it
    wrapped = text.replace("refund within", "refund\n   within")
    rec.model_input(rewrapped, wrapped, prompt=f"Context:\n{wrapped}")
    as_json = json.dumps({"passage": text, "note": "quoted"})
    with pytest.raises(ModelInputError, match="rewritten=True"):
        rec.model_input(escaped, as_json.replace("thirty", "30"), prompt=as_json.replace("thirty", "30"))
    rec.model_input(
        escaped, as_json.replace("thirty", "30"), prompt=as_json.replace("thirty", "30"), rewritten=True
    )
    assert all(rec.has_model_input(p) for p in (labelled, cut, rewrapped, escaped))
    assert not rec.has_model_input(unrelated)


def test_close_refuses_a_passage_the_model_input_of_which_is_unknown(recorder: Recorder) -> None:
    rec = recorder.start(QUESTION, AUTH, "support")
    rec.retrieved(chunks(RETURNS)[0].text, source_revision("returns", RETURNS), rank=1, score=0.5, query="q")
    rec.answer(ANSWER)
    with pytest.raises(ModelInputError, match="p1: no model input"):
        rec.close()
    assert list(recorder.outbox.directory.iterdir()) == []


def test_citations_must_lie_inside_the_answer(recorder: Recorder) -> None:
    rec = recorder.start(QUESTION, AUTH, "support")
    p = rec.retrieved(
        chunks(RETURNS)[0].text, source_revision("returns", RETURNS), rank=1, score=0.5, query="q"
    )
    with pytest.raises(CitationError, match="before answer"):
        rec.cite(0, 3, p)
    rec.answer(ANSWER)
    for start, end in ((0, len(ANSWER) + 1), (-1, 4), (5, 5), (6, 2)):
        with pytest.raises(CitationError, match="outside the answer"):
            rec.cite(start, end, p)
    with pytest.raises(CitationError, match="does not contain"):
        rec.cite_text("sixty days", p)
    with pytest.raises(CitationError, match="at least one passage"):
        rec.cite(0, 3)
    other = recorder.start(QUESTION, AUTH, "support")
    q = other.retrieved(
        chunks(RETURNS)[0].text, source_revision("returns", RETURNS), rank=1, score=0.5, query="q"
    )
    with pytest.raises(CitationError, match="not a passage of record"):
        rec.cite(0, 3, q)
    rec.cite(0, len(ANSWER), p)


def test_a_passage_needs_its_revision_and_must_occur_in_it(recorder: Recorder) -> None:
    rec = recorder.start(QUESTION, AUTH, "support")
    with pytest.raises(RecordError, match="needs the source revision"):
        rec.retrieved("Gift cards are never refunded.", None, rank=1, score=0.5, query="q")
    with pytest.raises(LocateError, match="does not occur in the revision"):
        rec.retrieved(
            "Gift cards are refunded.", source_revision("returns", RETURNS), rank=1, score=0.5, query="q"
        )
    with pytest.raises(RecordError, match="chunk_id is required"):
        rec.retrieved("within thirty days", source_revision("returns", RETURNS), rank=1, score=0.5, query="q")
    assert rec.passages == ()
    p = rec.retrieved(
        "within thirty days",
        source_revision("returns", RETURNS),
        rank=1,
        score=0.5,
        query="q",
        chunk_id="returns@120",
        chunker=Chunker("fixed-window/2", {"size": 20}),
    )
    assert (p.locator.paragraph, p.locator.heading_path) == (0, ("Returns policy", "Refund window"))


def test_a_repeated_text_needs_saying_which_occurrence(recorder: Recorder) -> None:
    doc = "# A\n\nSame sentence.\n\n# B\n\nSame sentence.\n"
    rev = source_revision("dup", doc)
    rec = recorder.start(QUESTION, AUTH, "support")
    with pytest.raises(LocateError, match="occurs 2 times"):
        rec.retrieved("Same sentence.", rev, rank=1, score=0.5, query="q")
    second = rec.retrieved("Same sentence.", rev, rank=1, score=0.5, query="q", occurrence=1)
    near = rec.retrieved("Same sentence.", rev, rank=2, score=0.4, query="q", near=doc.index("# B"))
    first = rec.retrieved("Same sentence.", rev, rank=3, score=0.3, query="q", near=0)
    assert second.locator == near.locator and second.locator.heading_path == ("B",)
    assert first.locator.heading_path == ("A",)
    # the chunk is the one at the locator, not the first chunk of equal text
    assert [p.chunk_id for p in rec.passages] == ["dup#1", "dup#1", "dup#0"]


def _chunk_claim(path: Path) -> list[object]:
    payload, _ = _payload(path)
    passages = payload["passages"]
    assert isinstance(passages, list)
    return [(p["chunk"]["chunk_id"], p["chunk"]["pipeline_version"]) for p in passages]


def test_a_pipeline_chunk_id_is_signed_as_the_reference_chunker_only_when_it_is_one(
    case: Case, recorder: Recorder
) -> None:
    """A pipeline's own chunk id with the chunker left out: the SDK checks what it signs.

    The text of the reference chunk at the locator keeps `tracer-para-chunker/1`; any
    other text (a naive splitter's window) is recorded as `unspecified`, never as the
    reference chunker, and still ingests and traces.
    """
    rev = source_revision("returns", RETURNS)
    whole, window = chunks(RETURNS)[1].text, "within thirty days of delivery."
    with recorder.start(QUESTION, AUTH, "support", answer_id="ans-claims") as rec:
        rec.retrieved(whole, rev, rank=1, score=0.9, query="q", chunk_id="node-7f3a")
        rec.retrieved(window, rev, rank=2, score=0.8, query="q", chunk_id="returns#3")
        rec.sent([whole, window])
        rec.answer(ANSWER)
    path = next(recorder.outbox.directory.glob("answer-ans-claims-*.json"))
    assert _chunk_claim(path) == [("node-7f3a", "tracer-para-chunker/1"), ("returns#3", "unspecified")]
    report = ingest_files(case, recorder.write_revision(rev), path)
    assert report.ok and not report.faults, report.to_json()
    t = trace_of(case, "ans-claims")
    assert [p.transform.state for p in t.passages] == ["found_at_locator", "found_at_locator"]


def test_an_explicit_reference_chunker_claim_is_checked(recorder: Recorder) -> None:
    rev = source_revision("returns", RETURNS)
    rec = recorder.start(QUESTION, AUTH, "support")
    with pytest.raises(RecordError, match="not one tracer-para-chunker/1 chunk"):
        rec.retrieved(
            "within thirty days", rev, rank=1, score=0.5, query="q", chunk_id="c", chunker=Chunker()
        )
    p = rec.retrieved(chunks(RETURNS)[0].text, rev, rank=1, score=0.5, query="q", chunker=Chunker())
    assert (p.chunk_id, p.chunker.version) == ("returns#0", "tracer-para-chunker/1")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rank": -1}, "rank"),
        ({"rank": True}, "rank"),
        ({"score": float("nan")}, "score"),
        ({"score": "0.5"}, "score"),
        ({"query": ""}, "query"),
        ({"retrieved_at": "2026-02-30T10:00:00Z"}, "not a real date"),
        ({"retrieved_at": "2026-02-01 10:00:00"}, "RFC 3339"),
        ({"retrieved_at": datetime(2026, 2, 1, 10, 0)}, "time zone"),
        ({"passage_id": "x" * 513}, "at most 512"),
    ],
)
def test_malformed_fields_fail_at_the_call(
    recorder: Recorder, kwargs: dict[str, object], message: str
) -> None:
    rec = recorder.start(QUESTION, AUTH, "support")
    args: dict[str, object] = {"rank": 1, "score": 0.5, "query": "q", **kwargs}
    text = chunks(RETURNS)[0].text
    with pytest.raises(RecordError, match=message):
        rec.retrieved(text, source_revision("returns", RETURNS), **args)  # type: ignore[arg-type]


def test_parameters_must_be_interoperable_json() -> None:
    for bad in ({"big": 2**60}, {"x": float("inf")}, {"s": "\ud800"}, {"o": object()}):
        with pytest.raises(RecordError, match=r"not interoperable|UTF-8"):
            Chunker("c/1", bad)
        with pytest.raises(RecordError):
            Runtime("m", "t", "p", bad)
    assert dict(Runtime("m", "t", "p", {"temperature": 0.2}).parameters) == {"temperature": 0.2}


def test_a_record_closes_once_and_an_error_inside_with_writes_nothing(recorder: Recorder) -> None:
    rev = source_revision("returns", RETURNS)
    text = chunks(RETURNS)[0].text
    with pytest.raises(RuntimeError), recorder.start(QUESTION, AUTH, "support") as rec:
        rec.retrieved(text, rev, rank=1, score=0.5, query="q")
        raise RuntimeError("the model call failed")
    assert list(recorder.outbox.directory.iterdir()) == []
    with pytest.raises(RecordError, match="already closed"):
        rec.answer("late")
    done = recorder.start(QUESTION, AUTH, "support", answer_id="ans-x")
    done.answer("no passages needed")
    done.close()
    with pytest.raises(RecordError, match="already closed"):
        done.close()
    with pytest.raises(RecordError, match="already in the outbox"):
        recorder.start(QUESTION, AUTH, "support", answer_id="ans-x")


@pytest.mark.parametrize("folder", ["ingested", "rejected"])
def test_an_answer_id_already_ingested_or_rejected_is_refused_at_start(
    recorder: Recorder, folder: str
) -> None:
    """`tracer ingest-outbox` moves files aside; their ids stay taken (found at the call, not at ingest)."""
    done = recorder.start(QUESTION, AUTH, "support", answer_id="ghost-ans")
    done.answer("first")
    path = done.close().path
    (path.parent / folder).mkdir()
    path.rename(path.parent / folder / path.name)
    with pytest.raises(RecordError, match=f"ghost-ans.*{folder}"):
        recorder.start(QUESTION, AUTH, "support", answer_id="ghost-ans")
    with pytest.raises(RecordError, match=folder):
        recorder.start(QUESTION, AUTH, "support", answer_id="ghost-ans", kind="note")
    fresh = recorder.start(QUESTION, AUTH, "support", answer_id="ghost-ans-2")
    fresh.answer("second")
    fresh.close()


def test_a_crashed_writer_s_temporary_file_is_removed_once_stale(recorder: Recorder) -> None:
    outbox = recorder.outbox.directory
    stale, fresh = outbox / ".tmp-0123-answer-x.json", outbox / ".tmp-4567-answer-y.json"
    for f in (stale, fresh):
        f.write_bytes(b'{"half": ')
    old = time.time() - TEMP_MAX_AGE - 60
    os.utime(stale, (old, old))
    Outbox(outbox)  # the next process to open the outbox
    assert not stale.exists() and fresh.exists()  # a write in progress is left alone


def test_a_note_and_an_answer_citing_it_ingest_with_their_lineage(case: Case, recorder: Recorder) -> None:
    returns, shipping = source_revision("returns", RETURNS), source_revision("shipping", SHIPPING)
    a, b = chunks(RETURNS)[0], chunks(SHIPPING)[0]
    note_text = "Refunds: thirty days. Lost parcels: refunded after ten days."
    with recorder.start("summarize refunds", AUTH, "support", kind="note", answer_id="note-1") as rec:
        pa = rec.retrieved(a.text, returns, rank=1, score=0.9, query="refunds")
        pb = rec.retrieved(b.text, shipping, rank=2, score=0.8, query="refunds")
        rec.sent([a.text, b.text])
        rec.answer(note_text)
        rec.cite_text("Refunds: thirty days.", pa)
        rec.cite_text("Lost parcels: refunded after ten days.", pb)
    written = next(recorder.outbox.directory.glob("note-*.json"))
    memory = recorder.start("and lost parcels?", AUTH, "support", answer_id="ans-2")
    n = memory.retrieved_note(_as_note(written, note_text), rank=1, score=0.7, query="lost parcels")
    memory.model_input(n, f"[memory note-1]\n{note_text}", prompt=f"Notes:\n[memory note-1]\n{note_text}")
    memory.answer("Lost parcels are refunded after ten days.")
    memory.cite(0, 41, n)
    out = memory.close()
    revs = [recorder.write_revision(returns), recorder.write_revision(shipping)]
    report = ingest_files(case, *revs, written, out.path)
    assert report.ok and not report.faults, report.to_json()
    payload, _ = _payload(out.path)
    assert payload["lineage"] == ["note-1"]
    t = trace_of(case, "ans-2")
    assert [node.answer_id for node in t.lineage] == ["note-1"]
    assert t.passages[0].transform.state == "matches_source"
    assert t.integrity == "intact" and t.currency == "verified"


def _as_note(path: Path, text: str) -> Note:
    assert path.name.startswith("note-note-1-")
    return Note("note-1", text, "support", "northstar-support-assistant/memory")


def test_nothing_secret_reaches_the_outbox(case: Case, recorder: Recorder) -> None:
    path = _record_two(recorder)
    raw = path.read_bytes()
    secret = case.producer._signing.private_bytes_raw()
    for form in (secret, secret.hex().encode(), base64.b64encode(secret)):
        assert form not in raw
    assert "key_id" in repr(recorder.signer) and secret.hex() not in repr(recorder)


def test_a_record_started_without_its_question_needs_it_before_close(recorder: Recorder) -> None:
    rec = recorder.start_without_question(AUTH, "support", answer_id="ans-later")
    assert rec.question is None
    rec.answer("no passages needed")
    with pytest.raises(RecordError, match="close before set_question"):
        rec.close()
    with pytest.raises(RecordError, match="question"):
        rec.set_question("")
    rec.set_question(QUESTION)
    with pytest.raises(RecordError, match="already set"):
        rec.set_question("another")
    payload, contents = _payload(rec.close().path)
    assert contents[str(payload["question_sha256"])] == QUESTION
