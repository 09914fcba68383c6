"""The typed records hold exactly what was signed, and the views derived from them are
the rows the signed JSON implies (checked against a reference written on the JSON)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.entries import LogEntry
from store.errors import InputError
from store.records import Locator, MalformedRecordError, Manifest, TransformKey, located_chain
from store.schema import VIEW_COLUMNS
from store.schemacheck import validate
from store.views import Rows, derive
from tests.store.test_ingest import _schema_docs

_PAYLOAD: dict[str, Any] = dict(_schema_docs())["manifest-v1"]
_encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode

# markup, escapes, bidi and zero-width characters, lone surrogates excluded (not UTF-8)
_text = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], include_characters="\x1b\u202e\u200b[]\n"),
    min_size=1,
    max_size=10,
)
_digest = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)


@st.composite
def _manifests(draw: st.DrawFn) -> dict[str, Any]:
    p = copy.deepcopy(_PAYLOAD)
    p["answer_id"], p["run_id"], p["collection"] = draw(_text), draw(_text), draw(_text)
    p["kind"] = draw(st.sampled_from(["answer", "note"]))
    p["question_sha256"], p["answer_sha256"] = draw(_digest), draw(_digest)
    p["lineage"] = draw(st.lists(_text, max_size=3))
    base = p["passages"][0]
    passages = []
    for i in range(draw(st.integers(1, 4))):
        ps = copy.deepcopy(base)
        ps["passage_id"] = f"{draw(_text)}-{i}"
        ps["collection"] = draw(_text)
        ps["document"]["document_id"], ps["document"]["uri"] = draw(_text), draw(_text)
        ps["source"]["path"] = draw(_text)
        ps["locator"] = {
            "heading_path": draw(st.lists(_text, max_size=3)),
            "paragraph": draw(st.integers(0, 50)),
            "char_start": draw(st.integers(0, 10**6)),
            "char_end": draw(st.integers(0, 10**6)),
        }
        ps["chunk"]["parameters"] = draw(st.dictionaries(_text, st.integers(), max_size=2))
        ps["retrieved_sha256"], ps["model_input_sha256"] = draw(_digest), draw(_digest)
        ps["rank"] = draw(st.integers(0, 100))
        ps["score"] = draw(st.one_of(st.integers(-5, 5), st.floats(-1, 1, allow_nan=False)))
        if draw(st.booleans()):
            ps["derived_from"] = draw(_text)
        passages.append(ps)
    p["passages"] = passages
    p["citations"] = [
        {"answer_start": 0, "answer_end": draw(st.integers(0, 99)), "passage_ids": [ps["passage_id"]]}
        for ps in passages
    ]
    return p


def _reference_rows(seq: int, signer: str, p: dict[str, Any]) -> Rows:
    """The rows a manifest implies, written on the JSON without the records."""
    out: Rows = {t: [] for t in VIEW_COLUMNS}
    out["v_answers"].append(
        (seq, p["run_id"], p["answer_id"], p["kind"], p["generated_at"], p["producer"]["system"],
         p["producer"]["version"], signer, p["collection"], p["question_sha256"], p["answer_sha256"],
         len(p["passages"]), len(p["citations"]), _encode(p["lineage"]), "[]")
    )  # fmt: skip
    out["v_digests"] += [
        (seq, p["question_sha256"], "question", p["collection"]),
        (seq, p["answer_sha256"], "answer", p["collection"]),
    ]
    for i, ps in enumerate(p["passages"]):
        d, s, c, loc = ps["document"], ps["source"], ps["chunk"], ps["locator"]
        out["v_passages"].append(
            (seq, p["answer_id"], i, ps["passage_id"], ps["collection"], d["document_id"], d["uri"],
             d["revision"], d["backend"], s["system"], s["path"], s["revision"], c["chunk_id"],
             c["pipeline_version"], _encode(loc["heading_path"]), loc["paragraph"], loc["char_start"],
             loc["char_end"], ps["retrieved_sha256"], ps["model_input_sha256"], ps["normalizer_version"],
             ps["retrieved_at"], ps["rank"], float(ps["score"]), ps["query_sha256"], ps.get("derived_from"))
        )  # fmt: skip
        out["v_digests"] += [
            (seq, ps["retrieved_sha256"], "retrieved", ps["collection"]),
            (seq, ps["model_input_sha256"], "model_input", ps["collection"]),
        ]
    for i, c in enumerate(p["citations"]):
        out["v_citations"].append(
            (seq, p["answer_id"], i, c["answer_start"], c["answer_end"], _encode(c["passage_ids"]))
        )
    return out


def _entry(p: dict[str, Any]) -> LogEntry:
    body = {"kind": "manifest", "seq": 7, "envelope": {"signatures": [{"keyid": "k"}]}, "faults": []}
    return LogEntry(json.dumps(body).encode(), body, parsed_payload=p)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=_manifests())
def test_a_record_holds_what_was_signed_and_derives_the_reference_rows(p: dict[str, Any]) -> None:
    try:
        validate(p, "manifest-v1", "gen.json")
    except InputError:
        return  # not a manifest ingest would accept (the generator stays inside the schema)
    m = Manifest.from_json(p)
    assert (m.answer_id, m.run_id, m.kind, m.collection) == (
        p["answer_id"],
        p["run_id"],
        p["kind"],
        p["collection"],
    )
    assert m.lineage == tuple(p["lineage"])
    assert m.producer.to_json() == p["producer"]
    for rec, ps in zip(m.passages, p["passages"], strict=True):
        assert rec.chain_json() == {
            k: ps[k] for k in ("chunk", "locator", "normalizer_version", "document", "source")
        }
        assert rec.derived_from == ps.get("derived_from")
        assert rec.score == ps["score"] and type(rec.score) is type(ps["score"])
    assert [list(c.passage_ids) for c in m.citations] == [c["passage_ids"] for c in p["citations"]]
    assert set(m.sources) == set(p["lineage"]) | {
        ps["derived_from"] for ps in p["passages"] if "derived_from" in ps
    }
    rows: Rows = {t: [] for t in VIEW_COLUMNS}
    derive(7, _entry(p), rows)
    assert rows == _reference_rows(7, "k", p)
    with_record: Rows = {t: [] for t in VIEW_COLUMNS}
    derive(7, _entry(p).with_payload(p, m), with_record)
    assert with_record == rows


@pytest.mark.parametrize(
    "path",
    [
        ("answer_id",),
        ("producer", "system"),
        ("passages", 0, "locator"),
        ("passages", 0, "document", "revision"),
        ("passages", 0, "chunk", "parameters"),
        ("citations", 0, "passage_ids"),
        ("passages",),
    ],
)
def test_a_payload_missing_a_member_is_malformed_not_a_key_error(path: tuple[Any, ...]) -> None:
    p = copy.deepcopy(_PAYLOAD)
    parent: Any = p
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    with pytest.raises(MalformedRecordError):
        Manifest.from_json(p)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda p: p.__setitem__("lineage", "ans-1"),  # a string is not a list of ids
        lambda p: p["passages"][0]["locator"].__setitem__("heading_path", ["a", 1]),
        lambda p: p["citations"][0].__setitem__("passage_ids", [1]),
        lambda p: p.__setitem__("passages", [None]),
        lambda p: p.__setitem__("producer", "x"),
    ],
)
def test_a_payload_of_the_wrong_shape_is_malformed(mutate: Any) -> None:
    p = copy.deepcopy(_PAYLOAD)
    mutate(p)
    with pytest.raises(MalformedRecordError):
        Manifest.from_json(p)


def test_only_exact_str_and_int_keys_share_a_transform_verdict() -> None:
    base = ("0" * 64, "support", "tracer-norm/1", "doc", "r1")
    exact = TransformKey(*base, 1, 5)
    assert exact.memoizable
    # equal and equally hashed in Python, yet a different signed value: never memoized
    for odd in (1.0, True):
        key = TransformKey(*base, odd, 5)  # type: ignore[arg-type]
        assert key == exact and not key.memoizable
    assert TransformKey(*base[:4], "1", 1, 5) != TransformKey(*base[:4], 1, 1, 5)  # type: ignore[arg-type]


def test_a_located_import_chain_reads_as_a_producer_passage_does() -> None:
    ps = _PAYLOAD["passages"][0]
    document, chain = located_chain(ps)
    assert document.to_json() == ps["document"]
    assert (chain.document_id, chain.revision) == (ps["document"]["document_id"], ps["document"]["revision"])
    loc = ps["locator"]
    assert chain.locator == Locator(
        tuple(loc["heading_path"]), loc["paragraph"], loc["char_start"], loc["char_end"]
    )
