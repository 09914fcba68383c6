"""Ingest: what is accepted, what is refused (and where), and what is kept as a fault."""

from __future__ import annotations

import base64
import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import admin
from store.canonical import member_path
from store.crypto import Identity, sha256_hex
from store.dsse import sign_envelope
from store.entries import MANIFEST_TYPE
from store.ingest import IngestReport, ingest
from store.keyring import DataKeys
from store.producer import draft_to_input
from tests.helpers import Case, manifest, passage, revision, signed
from tracer.engine.verify import verify

DOC = (
    "# Returns policy\n\n## Refund window\n\n"
    "Customers may request a refund within thirty days of delivery.\n\n"
    "## Exceptions\n\nGift cards are never refunded.\n"
)
ANSWER = "Refunds are accepted within thirty days."


def _rev(rev: str = "A", doc: str = "returns", collection: str = "support") -> dict[str, Any]:
    return revision(doc, rev, DOC, "2026-01-05T00:00:00Z", collection=collection)


def _draft(answer_id: str = "ans-1", **kw: Any) -> dict[str, Any]:
    return manifest(answer_id, ANSWER, [passage(_rev(), "thirty days")], **kw)


def _state(case: Case) -> tuple[int, str]:
    return case.vault.size(), case.vault.latest_checkpoint().note


def _only_rejection(report: IngestReport) -> tuple[str, str, str]:
    assert not report.ok
    assert len(report.rejected) == 1, report.to_json()
    r = report.rejected[0]
    return r.file, r.path, r.message


# -- accepted ----------------------------------------------------------------------------


def test_valid_revision_manifest_and_deletion(case: Case) -> None:
    before = case.vault.size()
    deletion = {
        "schema": "tracer.document_deletion/v1",
        "document_id": "returns",
        "deleted_at": "2026-07-01T00:00:00Z",
        "reason": "retired",
    }
    report = case.ingest(_rev(), signed(case, _draft()), deletion)
    assert report.ok and report.appended, report.to_json()
    assert [a.kind for a in report.accepted] == ["revision", "manifest", "document_deletion"]
    assert [a.seq for a in report.accepted] == [before, before + 1, before + 2]
    assert report.faults == []
    assert report.checkpoint_size == case.vault.size() == before + 3
    # one batch, one checkpoint, covering all three
    assert case.vault.latest_checkpoint().size == before + 3
    v = case.vault
    assert v.query("SELECT answer_id, faults FROM v_answers") == [("ans-1", "[]")]
    assert v.query("SELECT document_id, revision FROM v_revisions") == [("returns", "A")]
    assert v.query("SELECT document_id, reason FROM v_deletions") == [("returns", "retired")]
    assert [e.kind for e in (v.entry(before), v.entry(before + 1), v.entry(before + 2))] == [
        "revision",
        "manifest",
        "document_deletion",
    ]


def test_manifest_envelope_is_kept_exactly_as_signed(case: Case) -> None:
    inp = signed(case, _draft())
    report = case.ingest(inp)
    assert report.ok
    entry = case.vault.entry(report.accepted[0].seq)
    assert entry.body["envelope"] == inp["envelope"]
    assert entry.body["ingested_at"] == "2026-06-01T00:00:00Z"


def test_texts_are_stored_by_digest_and_readable(case: Case) -> None:
    inp = signed(case, _draft())
    case.ingest(inp)
    keys = DataKeys(case.vault, case.custodian)
    for digest, text in inp["contents"].items():
        got = keys.decrypt(digest)
        assert got is not None and got[1] == text.encode("utf-8")


def test_same_text_in_two_collections_is_readable_in_each(case: Case) -> None:
    ra, rb = _rev(collection="support"), _rev(doc="returns-copy", collection="restricted")
    ps = [passage(ra, "thirty days", "p1"), passage(rb, "thirty days", "p2", rank=2)]
    assert ps[0]["retrieved_text"] == ps[1]["retrieved_text"]
    report = case.ingest(signed(case, manifest("ans-2", ANSWER, ps)))
    assert report.ok and report.faults == [], report.to_json()
    digest = sha256_hex(ps[0]["retrieved_text"].encode())
    assert sorted(r[0] for r in case.vault.blobs.rows(digest)) == ["restricted", "support"]


# -- refused: not JSON, schema, signatures, keys ------------------------------------------


def test_not_json_is_rejected(case: Case) -> None:
    path = case.inputs / "broken.json"
    path.write_text('{"envelope": ', encoding="utf-8")
    report = ingest(case.vault, [path], case.custodian, "2026-06-01T00:00:00Z")
    file, where, message = _only_rejection(report)
    assert file == str(path) and where == "$" and "not JSON" in message


def test_missing_file_is_rejected(case: Case, tmp_path: Path) -> None:
    report = ingest(case.vault, [tmp_path / "nope.json"], case.custodian, "2026-06-01T00:00:00Z")
    _file, where, message = _only_rejection(report)
    assert where == "$" and "cannot read" in message


@pytest.mark.parametrize(
    ("mutate", "path", "expect"),
    [
        (lambda d: d.pop("title"), "$", "'title' is a required property"),
        (lambda d: d.update(extra=1), "$", "Additional properties are not allowed"),
        (lambda d: d.update(committed_at=5), "$.committed_at", "is not of type 'string'"),
        (lambda d: d.update(committed_at="2026-01-05"), "$.committed_at", "does not match"),
        (lambda d: d.update(committed_at="2026-13-45T25:61:00Z"), "$.committed_at", "not a valid RFC 3339"),
        (lambda d: d.update(document_id=""), "$.document_id", "should be non-empty"),
    ],
)
def test_revision_schema_violations_name_path_and_expectation(
    case: Case, mutate: Any, path: str, expect: str
) -> None:
    doc = _rev()
    mutate(doc)
    report = case.ingest(doc)
    file, where, message = _only_rejection(report)
    assert file.endswith(".json") and where == path and expect in message, message
    assert "(schema source-revision-v1)" in message or "RFC 3339" in message


def _payload_mutation(case: Case, mutate: Any) -> dict[str, Any]:
    inp = signed(case, _draft())
    payload = json.loads(base64.b64decode(inp["envelope"]["payload"]))
    mutate(payload)
    from store.producer import sign_payload

    inp["envelope"] = sign_payload(payload, case.producer)
    return inp


@pytest.mark.parametrize(
    ("mutate", "path", "expect"),
    [
        (lambda p: p["passages"][0].update(rank=-1), "$.envelope.payload.passages[0].rank", "minimum"),
        (lambda p: p.pop("answer_id"), "$.envelope.payload", "'answer_id' is a required property"),
        (
            lambda p: p["citations"][0].update(passage_ids=[]),
            "$.envelope.payload.citations[0].passage_ids",
            "should be non-empty",
        ),
        (lambda p: p.update(answer_sha256="ABC"), "$.envelope.payload.answer_sha256", "does not match"),
        (
            lambda p: p.update(generated_at="2026-02-30T10:00:00Z"),
            "$.envelope.payload.generated_at",
            "not a valid RFC 3339",
        ),
    ],
)
def test_manifest_schema_violations_name_path_and_expectation(
    case: Case, mutate: Any, path: str, expect: str
) -> None:
    report = case.ingest(_payload_mutation(case, mutate))
    _file, where, message = _only_rejection(report)
    assert where == path and expect in message, (where, message)


def test_input_file_schema_violation(case: Case) -> None:
    inp = signed(case, _draft())
    del inp["contents"]
    _file, where, message = _only_rejection(case.ingest(inp))
    assert where == "$" and "'contents' is a required property" in message


def test_unknown_input_kind(case: Case) -> None:
    _file, where, message = _only_rejection(case.ingest({"schema": "something/v9"}))
    assert where == "$.schema" and "expected a manifest input" in message


def test_strict_json_inside_the_signed_payload(case: Case) -> None:
    inp = signed(case, _draft())
    raw = b'{"schema": "tracer.manifest/v1", "kind": "answer", "kind": "note"}'
    env = sign_envelope(raw, MANIFEST_TYPE, case.producer)
    inp["envelope"] = env.to_json()
    _file, where, message = _only_rejection(case.ingest(inp))
    assert where == "$.envelope.payload.kind" and "duplicate key" in message


def test_strict_json_in_the_input_file(case: Case) -> None:
    path = case.inputs / "lone.json"
    path.write_text('{"schema": "tracer.source_revision/v1", "content": "x\\ud800"}', encoding="utf-8")
    report = ingest(case.vault, [path], case.custodian, "2026-06-01T00:00:00Z")
    _file, where, message = _only_rejection(report)
    assert where == "$.content" and "lone surrogate" in message


def test_wrong_payload_type(case: Case) -> None:
    inp = signed(case, _draft())
    payload = base64.b64decode(inp["envelope"]["payload"])
    inp["envelope"] = sign_envelope(payload, "application/json", case.producer).to_json()
    _file, where, message = _only_rejection(case.ingest(inp))
    assert where == "$.envelope.payloadType" and MANIFEST_TYPE in message


def test_bad_signature(case: Case) -> None:
    inp = signed(case, _draft())
    sig = bytearray(base64.b64decode(inp["envelope"]["signatures"][0]["sig"]))
    sig[0] ^= 1
    inp["envelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    _file, where, message = _only_rejection(case.ingest(inp))
    assert where == "$.envelope.signatures" and "does not verify" in message


def test_payload_changed_after_signing(case: Case) -> None:
    inp = signed(case, _draft())
    payload = json.loads(base64.b64decode(inp["envelope"]["payload"]))
    payload["answer_id"] = "ans-forged"
    inp["envelope"]["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    _file, where, message = _only_rejection(case.ingest(inp))
    assert where == "$.envelope.signatures" and "does not verify" in message


def test_unknown_producer_key(case: Case) -> None:
    stranger = Identity.from_seed("stranger", b"stranger")
    _file, where, message = _only_rejection(case.ingest(signed(case, _draft(), stranger)))
    assert where == "$.envelope.signatures" and "no signature by a known key" in message
    assert stranger.key_id in message


def test_revoked_key_before_and_after(case: Case) -> None:
    revoked_at = "2026-03-01T00:00:00Z"
    admin.revoke_producer_key(case.vault, case.custodian, case.producer.key_id, revoked_at, "leaked")
    # signed (generated) before the revocation, ingested long after: still valid
    before = case.ingest(signed(case, _draft("ans-before", generated_at="2026-02-28T23:59:59Z")))
    assert before.ok and before.appended, before.to_json()
    # signed at or after the revocation: refused
    for i, when in enumerate(("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")):
        after = case.ingest(signed(case, _draft(f"ans-after-{i}", generated_at=when)))
        _file, where, message = _only_rejection(after)
        assert where == "$.envelope.signatures" and f"revoked at {revoked_at}" in message


def test_revocation_compares_instants_not_strings(case: Case) -> None:
    admin.revoke_producer_key(case.vault, case.custodian, case.producer.key_id, "2026-03-01T06:00:00Z")
    # 10:00+05:00 is 05:00Z, an hour before the revocation (a string compare says after)
    ok = case.ingest(signed(case, _draft("ans-offset", generated_at="2026-03-01T10:00:00+05:00")))
    assert ok.ok, ok.to_json()
    # 06:00:00.5Z is half a second after (a string compare says before: '.' < 'Z')
    late = case.ingest(signed(case, _draft("ans-frac", generated_at="2026-03-01T06:00:00.5Z")))
    assert "revoked at" in _only_rejection(late)[2]


def test_key_validity_windows_and_rotation(case: Case) -> None:
    old = Identity.from_seed("producer-2025", b"p-2025")
    new = Identity.from_seed("producer-2026", b"p-2026")
    cut = "2026-03-01T00:00:00Z"
    admin.add_producer_key(case.vault, case.custodian, old.public, "2026-01-01T00:00:00Z", valid_until=cut)
    admin.add_producer_key(case.vault, case.custodian, new.public, "2026-01-01T00:00:00Z", valid_from=cut)
    cases = [
        (old, "2026-02-28T00:00:00Z", None),
        (old, "2026-03-01T00:00:00Z", "outside its validity window"),
        (new, "2026-03-01T00:00:00Z", None),
        (new, "2026-02-28T00:00:00Z", "not valid before"),
    ]
    for i, (key, when, refusal) in enumerate(cases):
        report = case.ingest(signed(case, _draft(f"ans-{i}", generated_at=when), key))
        if refusal is None:
            assert report.ok, report.to_json()
        else:
            _file, where, message = _only_rejection(report)
            assert where == "$.envelope.signatures" and refusal in message and when in message


def test_duplicate_answer_id_in_one_run_and_across_runs(case: Case) -> None:
    first = signed(case, _draft("ans-dup"))
    report = case.ingest(first, signed(case, _draft("ans-dup")))
    _file, where, message = _only_rejection(report)
    assert where == "$.envelope.payload.answer_id" and "this ingest run" in message
    assert not report.appended
    assert case.ingest(first).ok
    seq = case.vault.query("SELECT seq FROM v_answers WHERE answer_id = 'ans-dup'")[0][0]
    _file, where, message = _only_rejection(case.ingest(signed(case, _draft("ans-dup"))))
    assert where == "$.envelope.payload.answer_id" and f"log entry {seq}" in message


def test_duplicate_checks_keep_file_order_and_verdicts(case: Case) -> None:
    """The answer-id check runs once per call, after the other checks: verdicts and the
    order of rejections are those of checking each file in turn."""
    assert case.ingest(signed(case, _draft("ans-old"))).ok
    stranger = Identity.from_seed("stranger", b"stranger")
    files = [
        signed(case, _draft("ans-x"), producer=stranger),  # refused for its signature
        signed(case, _draft("ans-x")),  # so this one is the first ans-x: fine
        signed(case, _draft("ans-old")),  # in the log already
        signed(case, _draft("ans-x")),  # second ans-x of this run
        signed(case, _draft("ans-y")),
    ]
    report = ingest(case.vault, [case.write(f) for f in files], case.custodian, "2026-06-01T00:00:00Z", True)
    seq = case.vault.query("SELECT seq FROM v_answers WHERE answer_id = 'ans-old'")[0][0]
    got = [(r.path, r.message.split(" (")[-1]) for r in report.rejected]
    assert [r.file for r in report.rejected] == [str(case.inputs / f"input-{n:04d}.json") for n in (2, 4, 5)]
    assert got[0][0] == "$.envelope.signatures"
    assert got[1:] == [
        ("$.envelope.payload.answer_id", f"log entry {seq})"),
        ("$.envelope.payload.answer_id", "this ingest run)"),
    ]
    assert [a.ident for a in report.accepted] == ["ans-x", "ans-y"]
    assert report.appended and report.checkpoint_size == case.vault.size()


def test_a_reused_revision_id_with_other_text_says_bump_the_revision(case: Case) -> None:
    """The same words as the SDK's `write_revision`: from the vault and within one batch."""
    assert case.ingest(_rev()).ok
    changed = {**_rev(), "content": DOC.replace("thirty", "fourteen")}
    _file, where, message = _only_rejection(case.ingest(changed))
    assert where == "$.revision" and "already ingested with other content" in message
    assert "bump the revision (a new revision id)" in message
    again = _rev("B")
    report = case.ingest(again, {**again, "content": DOC + "\nMore.\n"})
    assert not report.ok and len(report.rejected) == 1
    assert "bump the revision" in report.rejected[0].message
    _file, where, message = _only_rejection(case.ingest(_rev()))
    assert "already ingested" in message and "bump" not in message


def test_duplicate_revision_and_deletion_of_unknown_document(case: Case) -> None:
    assert case.ingest(_rev()).ok
    _file, where, message = _only_rejection(case.ingest(_rev()))
    assert where == "$.revision" and "already ingested" in message
    deletion = {
        "schema": "tracer.document_deletion/v1",
        "document_id": "never-seen",
        "deleted_at": "2026-07-01T00:00:00Z",
        "reason": "x",
    }
    _file, where, message = _only_rejection(case.ingest(deletion))
    assert where == "$.document_id" and "no revision" in message


# -- all or nothing -------------------------------------------------------------------------


def test_one_bad_file_appends_nothing_and_lists_every_rejection(case: Case) -> None:
    size, note = _state(case)
    bad_sig = signed(case, _draft("ans-bad"))
    bad_sig["envelope"]["signatures"][0]["sig"] = base64.b64encode(b"\0" * 64).decode()
    files = [
        case.write(_rev(), "good-rev.json"),
        case.write(signed(case, _draft("ans-good")), "good-manifest.json"),
        case.write(bad_sig, "bad-sig.json"),
        case.write({"schema": "tracer.source_revision/v1"}, "bad-schema.json"),
    ]
    report = ingest(case.vault, files, case.custodian, "2026-06-01T00:00:00Z")
    assert not report.ok and not report.appended and report.checkpoint_size is None
    assert sorted(Path(r.file).name for r in report.rejected) == ["bad-schema.json", "bad-sig.json"]
    assert all(a.seq == -1 for a in report.accepted)
    assert _state(case) == (size, note)
    assert case.vault.query("SELECT count(*) FROM v_answers") == [(0,)]
    assert case.vault.query("SELECT count(*) FROM blobs") == [(0,)]
    case.reopen()
    assert _state(case) == (size, note)

    skipped = ingest(case.vault, files, case.custodian, "2026-06-01T00:00:00Z", skip_invalid=True)
    assert not skipped.ok and skipped.appended
    assert sorted(Path(r.file).name for r in skipped.rejected) == ["bad-schema.json", "bad-sig.json"]
    assert [Path(a.file).name for a in skipped.accepted] == ["good-rev.json", "good-manifest.json"]
    assert case.vault.size() == size + 2 == skipped.checkpoint_size
    assert case.vault.latest_checkpoint().size == size + 2


def test_nothing_valid_with_skip_invalid_appends_nothing(case: Case) -> None:
    size, note = _state(case)
    path = case.write({"schema": "nope"})
    report = ingest(case.vault, [path], case.custodian, "2026-06-01T00:00:00Z", skip_invalid=True)
    assert not report.ok and not report.appended
    assert _state(case) == (size, note)


# -- signed but internally wrong: kept, with every fault recorded ----------------------------


def test_faulty_manifest_is_kept_as_signed_with_faults(case: Case) -> None:
    draft = _draft("ans-faulty", citations=[(0, 5, ["p1", "ghost"]), (0, len(ANSWER) + 10, ["p1"])])
    draft["passages"].append(copy.deepcopy(draft["passages"][0]))
    draft["passages"][1].update(passage_id="p2", retrieved_text="Gift cards are never refunded.", rank=2)
    inp = signed(case, draft)
    p2_digest = sha256_hex(b"Gift cards are never refunded.")
    inp["contents"][p2_digest] = "Gift cards are ALWAYS refunded."
    q_digest = sha256_hex(b"What does the policy say?")
    del inp["contents"][q_digest]
    inp["contents"][sha256_hex(b"stray")] = "stray"

    report = case.ingest(inp)
    assert report.ok and report.appended, report.to_json()
    got = {(f.path, f.code) for f in report.faults}
    assert got == {
        ("$.citations[0].passage_ids[1]", "unknown_passage"),
        ("$.citations[1].answer_end", "answer_range_outside"),
        ("$.passages[1].retrieved_sha256", "text_digest_mismatch"),
        ("$.question_sha256", "text_not_supplied"),
        (member_path("$.contents", sha256_hex(b"stray")), "unreferenced_text"),
    }
    assert all(f.answer_id == "ans-faulty" and f.file.endswith(".json") for f in report.faults)
    entry = case.vault.entry(report.accepted[0].seq)
    assert entry.body["envelope"] == inp["envelope"]
    assert {(f["path"], f["code"]) for f in entry.body["faults"]} == got
    (faults_json,) = case.vault.query("SELECT faults FROM v_answers WHERE answer_id = 'ans-faulty'")[0]
    assert {(f["path"], f["code"]) for f in json.loads(faults_json)} == got
    # texts that did not match their digest, or were not supplied, are not stored
    assert case.vault.blobs.rows(p2_digest) == []
    assert case.vault.blobs.rows(q_digest) == []
    # and verify reports each fault against the record
    report_v = verify(case.vault)
    faults = [f for f in report_v.findings if f.kind == "producer_fault"]
    assert {(f.record["path"], f.detail.split(":")[0]) for f in faults} == got
    assert all(f.seq == entry.seq for f in faults)


def test_inverted_ranges_are_faults(case: Case) -> None:
    draft = _draft("ans-inverted", citations=[(10, 5, ["p1"])])
    draft["passages"][0]["locator"].update(char_start=50, char_end=10)
    report = case.ingest(signed(case, draft))
    assert report.ok
    assert {(f.path, f.code) for f in report.faults} == {
        ("$.citations[0]", "bad_answer_range"),
        ("$.passages[0].locator", "bad_locator"),
    }


# -- the compiled schema fast path agrees with jsonschema ---------------------------------

_ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    2.5,
    -0.5,
    "",
    "x",
    "A" * 513,
    "0" * 64,
    "0" * 64 + "\n",
    "tracer.manifest/v1",
    "note",
    "2026-02-01T10:00:01Z",
    [],
    [1],
    ["x"],
    {},
    {"x": 1},
    {"": ""},
]


def _odd() -> st.SearchStrategy[Any]:
    return st.sampled_from(_ODD_VALUES).map(copy.deepcopy)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*at, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*at, i)))
    return out


@functools.cache
def _schema_docs() -> list[tuple[str, Any]]:
    producer = Identity.from_seed("fast-path", b"fast-path")
    inp = draft_to_input(_draft(), producer)
    payload = json.loads(base64.b64decode(inp["envelope"]["payload"]))
    v2 = _draft()
    v2["passages"][0]["model_input"] = "not_sent"
    v2["citations"] = []
    v2_payload = json.loads(base64.b64decode(draft_to_input(v2, producer)["envelope"]["payload"]))
    return [
        ("manifest-v1", payload),
        ("manifest-v2", v2_payload),
        ("manifest-input-v1", inp),
        ("source-revision-v1", _rev()),
    ]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_compiled_schema_check_agrees_with_jsonschema(data: st.DataObject) -> None:
    from store.schemacheck import validators as _validators

    name, doc = data.draw(st.sampled_from(_schema_docs()))
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        action = data.draw(st.sampled_from(["set", "delete", "add"]))
        parent: Any = doc
        for step in path[:-1]:
            parent = parent[step]
        if not path:
            doc = data.draw(_odd())
            break
        last = path[-1]
        if action == "delete":
            del parent[last]
        elif action == "add" and isinstance(parent[last], dict):
            parent[last][data.draw(st.sampled_from(["x", "answer_id", "0" * 64]))] = data.draw(_odd())
        elif action == "add" and isinstance(parent[last], list):
            parent[last].append(data.draw(_odd()))
        else:
            parent[last] = data.draw(_odd())
    validator, fast = _validators(name)
    assert fast(doc) == validator.is_valid(doc)
