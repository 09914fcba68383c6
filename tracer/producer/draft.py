"""The manifest draft a record signs on close: its fields in one frozen value, and each
passage as the draft carries it, its model input as the record's ledger says.

Kept apart from `AnswerRecord` so the one place the draft's shape is written is short
enough to read beside `docs/json.md`; nothing here checks or computes a fact (the record
did, at the call that gave it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from store.records import MANIFEST_V1, MANIFEST_V2
from store.words import ModelInput
from tracer.producer.citations import Citation
from tracer.producer.model import Authorization, Producer, Runtime
from tracer.producer.modelinput import ModelInputs
from tracer.producer.passages import Passage

__all__ = ["Draft", "Kind", "passage_json"]

Kind = Literal["answer", "note"]


@dataclass(frozen=True, slots=True)
class Draft:
    """Everything one record's manifest states, as `close` hands it to the signer."""

    kind: Kind
    run_id: str
    answer_id: str
    generated_at: str
    producer: Producer
    runtime: Runtime
    authorization: Authorization
    collection: str
    question: str | None
    answer: str
    passages: tuple[Passage, ...]
    inputs: ModelInputs
    citations: tuple[Citation, ...]
    lineage: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            # v1 while every passage was sent as v1 means it (older readers verify it); v2
            # states each passage's model input once one was rewritten or not sent
            "schema": MANIFEST_V2 if self.inputs.needs_v2 else MANIFEST_V1,
            "kind": self.kind,
            "run_id": self.run_id,
            "answer_id": self.answer_id,
            "generated_at": self.generated_at,
            "producer": self.producer.to_json(),
            "runtime": self.runtime.to_json(),
            "authorization": self.authorization.to_json(),
            "collection": self.collection,
            "question": self.question,
            "answer": self.answer,
            "passages": [passage_json(p, self.inputs) for p in self.passages],
            "citations": [c.to_json() for c in self.citations],
            "lineage": list(self.lineage),
        }


def passage_json(p: Passage, inputs: ModelInputs) -> dict[str, Any]:
    """A passage as the draft carries it, its model input as `inputs` records it."""
    out: dict[str, Any] = {
        "passage_id": p.passage_id,
        "collection": p.collection,
        "source": p.source.to_json(),
        "document": p.document.to_json(),
        "chunk": {
            "chunk_id": p.chunk_id,
            "pipeline_version": p.chunker.version,
            "parameters": dict(p.chunker.parameters),
        },
        "locator": p.locator.to_json(),
        "retrieved_text": p.text,
        "normalizer_version": p.normalizer_version,
        "retrieved_at": p.retrieved_at,
        "rank": p.rank,
        "score": p.score,
        "query": p.query,
    }
    state = inputs.state(p.passage_id)
    if inputs.needs_v2:
        out["model_input"] = None if state is None else state.value
    if state != ModelInput.NOT_SENT:
        out["model_input_text"] = inputs.text(p.passage_id)
    if p.derived_from is not None:
        out["derived_from"] = p.derived_from
    return out
