"""Fixture 2 of docs/fixtures.md: the restart runbook whose production exception was dropped.

The passage says "restart, except in production"; the answer says "restart".  The
record must show exactly what was retrieved (with the exception), what went into the
model, and what was answered (without it), and each citation must map its exact
character range of the stored answer to the passages behind it.
"""

from __future__ import annotations

import json

from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.serialize import trace_json
from tracer.engine.trace import AnswerTrace, Tracer

CONDITION = (
    "Restart the API pods with `kubectl rollout restart deployment/api`. Exception: in "
    "production, page the on-call SRE and wait for approval before restarting."
)
EXCEPTION = "Exception: in production, page the on-call SRE and wait for approval before restarting."
ROLLBACK = "Roll back with `kubectl rollout undo deployment/api` if error rates stay high."
RUNBOOK = f"""# Restart runbook

## Restarting the API
{CONDITION}

```sh
# drain the node first
kubectl drain node-1
```

## Rollback

{ROLLBACK}
"""
CLAIM_1 = "Run `kubectl rollout restart deployment/api` to restart the API pods."
CLAIM_2 = "If error rates stay high, run `kubectl rollout undo deployment/api`."
ANSWER = f"{CLAIM_1} {CLAIM_2}"


def rev() -> dict[str, object]:
    return revision("restart-runbook", "r1", RUNBOOK, "2026-01-10T00:00:00Z", collection="ops")


def build(
    case: Case, model_input: str | None = None, extra_citation: tuple[int, int, list[str]] | None = None
) -> None:
    r = rev()
    p1 = passage(r, "Exception", "p-restart")
    if model_input is not None:
        p1["model_input_text"] = model_input
    p2 = passage(r, "Roll back", "p-rollback", rank=2)
    cits = [(0, len(CLAIM_1), ["p-restart"]), (len(CLAIM_1) + 1, len(ANSWER), ["p-rollback"])]
    if extra_citation:
        cits.append(extra_citation)
    draft = manifest(
        "ans-restart",
        ANSWER,
        [p1, p2],
        citations=cits,
        collection="ops",
        question="How do I restart the API?",
    )
    report = case.ingest(r, signed(case, draft))
    assert report.ok, report.to_json()


def trace(case: Case) -> AnswerTrace:
    s = case.session("ines")
    try:
        return Tracer(s).trace("ans-restart")
    finally:
        s.close()


def test_retrieved_has_the_exception_and_the_answer_does_not(case: Case) -> None:
    build(case)
    t = trace(case)
    p = t.passages[0]
    assert p.retrieved.text == CONDITION
    assert p.model_input.text == CONDITION
    assert EXCEPTION in p.retrieved.text
    assert t.answer.text == ANSWER
    assert "production" not in t.answer.text
    assert t.question.text == "How do I restart the API?"
    assert t.integrity == "intact" and t.currency == "verified"
    assert p.transform.state == "found_at_locator"
    # The chain down to the source revision.
    assert p.record is not None
    chain = p.record.located()
    assert p.record.document.revision == "r1" and chain.source.revision == "src-r1"
    assert chain.chunk.chunk_id == "restart-runbook#0"
    assert chain.locator.heading_path == ("Restart runbook", "Restarting the API")
    assert t.runtime["model"] == "model-x" and t.authorization["decision"] == "allow"


def test_citations_map_exact_spans(case: Case) -> None:
    build(case)
    t = trace(case)
    assert [(c.answer_start, c.answer_end) for c in t.citations] == [
        (0, len(CLAIM_1)),
        (len(CLAIM_1) + 1, len(ANSWER)),
    ]
    assert [c.span for c in t.citations] == [CLAIM_1, CLAIM_2]
    assert [[p.passage_id for p in c.passages] for c in t.citations] == [["p-restart"], ["p-rollback"]]
    assert t.citations[1].passages[0].retrieved.text == ROLLBACK
    j = trace_json(t)
    answer = j["answer"].get("text")
    assert isinstance(answer, str)
    for c in j["citations"]:
        assert answer[c["answer_start"] : c["answer_end"]] == c["span"]
    assert [c["span"] for c in j["citations"]] == [CLAIM_1, CLAIM_2]


def test_json_shows_retrieved_and_answered_verbatim(case: Case) -> None:
    build(case)
    j = trace_json(trace(case))
    assert j["passages"][0]["retrieved"]["text"] == CONDITION
    assert j["passages"][0]["model_input"]["text"] == CONDITION
    assert j["answer"].get("text") == ANSWER
    assert j["passages"][0]["retrieved"]["state"] == "intact"
    assert j["passages"][0]["retrieved"]["recomputed"] == j["passages"][0]["retrieved"]["digest"]
    assert json.loads(json.dumps(j)) == j


def test_model_input_that_cut_the_exception_is_shown_as_sent(case: Case) -> None:
    """The pipeline truncated the passage before the model: both texts are on record."""
    cut = CONDITION[: CONDITION.index(" Exception")]
    build(case, model_input=cut)
    p = trace(case).passages[0]
    assert p.retrieved.text == CONDITION
    assert p.model_input.text == cut
    assert p.retrieved.digest != p.model_input.digest
    assert p.integrity == "intact"


def test_citation_outside_the_answer_is_a_fault_without_span(case: Case) -> None:
    build(case, extra_citation=(len(ANSWER) - 3, len(ANSWER) + 40, ["p-restart"]))
    t = trace(case)
    assert t.citations[2].span is None
    assert [f["code"] for f in t.faults] == ["answer_range_outside"]
    assert t.faults[0]["path"] == "$.citations[2].answer_end"
