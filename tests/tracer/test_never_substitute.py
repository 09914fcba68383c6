"""The never-substitute rule, as a property over random revision histories.

Whatever happens to the source after the answer (paragraphs inserted, words changed,
the sentence duplicated, whitespace-only rewraps, the document deleted, revisions or
the passage itself purged by retention), every trace keeps the historical slots
(retrieved text, model-input text, question, answer, citation spans, old excerpt) to the
text originally recorded, or to nothing; text that exists only in later revisions
appears nowhere but in the labelled current-revision excerpt.

Text added by a later revision carries a unique marker word, so "appears only in the
current excerpt" is a plain substring check over the serialized trace.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import admin
from store.crypto import sha256_hex
from tests.helpers import manifest, new_case, passage, revision, signed
from tracer.engine.serialize import trace_json
from tracer.engine.session import unlock
from tracer.engine.textnorm import normalize, normalize_quote
from tracer.engine.trace import Tracer
from tracer.engine.trust import TrustStore
from tracer.engine.vocabulary import Currency, Integrity

SENTENCE = "Customers may request a refund within thirty days of delivery."
MODEL_INPUT = f"[1] {SENTENCE}"
QUESTION = "How long do I have to ask for a refund?"
ANSWER = "You have thirty days from delivery."
MARK = "Zq"
# Each example builds a vault; on a RAM disk when there is one, since DuckDB syncs every commit.
SCRATCH = (
    "/dev/shm" if Path("/dev/shm").is_dir() else None
)  # prefix of the marker words; never in the base text

BASE: list[tuple[str, list[str]]] = [
    ("Refund window", [SENTENCE, "Refunds are paid within five business days."]),
    ("Exchanges", ["Items may be exchanged within sixty days."]),
    ("Contact", ["Write to the returns desk."]),
]

Op = tuple[Any, ...]
ops = st.one_of(
    st.tuples(st.just("insert"), st.integers(0, 2), st.integers(0, 3)),
    st.tuples(st.just("word"), st.integers(0, 2), st.integers(0, 3)),
    st.tuples(st.just("duplicate"), st.integers(0, 2)),
    st.tuples(st.just("whitespace")),
    st.tuples(st.just("delete")),
    st.tuples(st.just("purge_revision"), st.integers(0, 8)),
    st.tuples(st.just("purge_passage")),
)


def render(sections: list[tuple[str, list[str]]], spaced: bool = False) -> str:
    out = ["# Returns policy", ""]
    for heading, paras in sections:
        out += [f"## {heading}", ""]
        for p in paras:
            out += [p.replace(" ", "  \n ") if spaced else p, ""]
    text = "\n".join(out)
    return text.replace("\n", "\r\n") + "\r\n\r\n" if spaced else text


@dataclass
class History:
    inputs: list[dict[str, Any]] = field(default_factory=list)
    revisions: list[str] = field(default_factory=list)  # contents, in order
    purges: list[str] = field(default_factory=list)  # digests to purge after ingest
    markers: list[str] = field(default_factory=list)


def day(n: int) -> str:
    return f"2026-{1 + n // 28:02d}-{1 + n % 28:02d}T00:00:00Z"


def build_history(import_cited: bool, steps: list[Op]) -> History:
    h = History()
    sections = [(hd, list(ps)) for hd, ps in BASE]
    t = 0

    def add(content: str) -> None:
        nonlocal t
        t += 1
        name = f"r{len(h.revisions)}"
        h.revisions.append(content)
        if name != "r0" or import_cited:
            h.inputs.append(revision("refund", name, content, day(t)))

    add(render(sections))
    for n, op in enumerate(steps):
        kind = op[0]
        if kind == "insert":
            marker = f"{MARK}{n}ins"
            _hd, paras = sections[op[1]]
            paras.insert(min(op[2], len(paras)), f"A new paragraph mentions {marker} here.")
            h.markers.append(marker)
            add(render(sections))
        elif kind == "word":
            marker = f"{MARK}{n}w"
            _hd, paras = sections[op[1]]
            i = min(op[2], len(paras) - 1)
            words = paras[i].split(" ")
            words[min(5, len(words) - 1)] = marker
            paras[i] = " ".join(words)
            h.markers.append(marker)
            add(render(sections))
        elif kind == "duplicate":
            sections[op[1]][1].append(SENTENCE)
            add(render(sections))
        elif kind == "whitespace":
            add(render(sections, spaced=True))
        elif kind == "delete":
            t += 1
            h.inputs.append(
                {
                    "schema": "tracer.document_deletion/v1",
                    "document_id": "refund",
                    "deleted_at": day(t),
                    "reason": "retired",
                }
            )
        elif kind == "purge_revision":
            digest = sha256_hex(h.revisions[op[1] % len(h.revisions)].encode())
            if (op[1] % len(h.revisions) or import_cited) and digest not in h.purges:
                h.purges.append(digest)
        elif kind == "purge_passage":
            digest = sha256_hex(SENTENCE.encode())
            if digest not in h.purges:
                h.purges.append(digest)
    return h


def _strings(value: Any, path: str = "") -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _strings(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in _strings(v, f"{path}[{i}]")]
    return []


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(import_cited=st.booleans(), steps=st.lists(ops, max_size=5))
def test_historical_slots_never_hold_current_text(import_cited: bool, steps: list[Op]) -> None:
    h = build_history(import_cited, steps)
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        case = new_case(Path(tmp) / "vault")
        try:
            r0 = revision("refund", "r0", h.revisions[0], day(1))
            draft = manifest(
                "ans",
                ANSWER,
                [passage(r0, "thirty", model_input_text=MODEL_INPUT)],
                question=QUESTION,
            )
            if not h.inputs or h.inputs[0].get("schema") != "tracer.source_revision/v1":
                h.inputs = [x for x in h.inputs if x.get("schema") != "tracer.document_deletion/v1"]
            assert case.ingest(*h.inputs, signed(case, draft)).ok
            for digest in h.purges:
                admin.purge(case.vault, case.custodian, digest, "retention", "expired", "records", day(200))
            case.vault.close()
            trust = TrustStore(Path(tmp) / "home")  # every example is a new vault with the same origin
            s = unlock(case.path, case.investigators["ines"], trust=trust, read_only=True)
            try:
                t = Tracer(s).trace("ans", record=False)
            finally:
                s.close()
        finally:
            case.close()

    p = t.passages[0]
    # Historical slots: the recorded text or nothing, never anything else.
    assert p.retrieved.text in (SENTENCE, None)
    assert p.model_input.text in (MODEL_INPUT, None)
    assert t.answer.text in (ANSWER, None)
    assert t.question.text in (QUESTION, None)
    assert t.citations[0].span in (ANSWER, None)
    if p.retrieved.text is None:
        assert p.retrieved.state == "purged" and p.retrieved.tombstone is not None
    cited = p.currency.cited_text
    if cited is not None:
        assert cited.text in (h.revisions[0], None)
    rel = p.currency.relocation
    if rel is not None:
        assert rel.old_excerpt == normalize_quote(SENTENCE)
    assert type(p.currency.state) is Currency and p.currency.reason  # a registered word, not a str
    assert type(p.integrity) is Integrity and type(t.integrity) is Integrity and type(t.currency) is Currency

    # Current text: only in the labelled excerpt, and only from the latest revision.
    latest = p.currency.current
    if p.currency.current_excerpt is not None:
        assert latest is not None
        latest_text = next(c for c in h.revisions if sha256_hex(c.encode()) == latest.content_sha256)
        assert p.currency.current_excerpt in normalize(latest_text)
    doc = trace_json(t)
    excerpt_path = ".passages[0].currency.current_revision.excerpt"
    for path, text in _strings(doc):
        if path == excerpt_path:
            continue
        for marker in h.markers:
            assert marker not in text, (path, marker)
    assert json.loads(json.dumps(doc)) == doc
