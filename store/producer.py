"""What a producer does: turn a draft manifest with inline texts into a signed input file.

Producers sign digests, not texts: each text is replaced by its SHA-256 in the signed
payload and travels beside the envelope in `contents`.  Used by `tracer pack`, by the
sample-vault generator and by tests, so all three exercise the real format.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, TypedDict

from store.canonical import canonical
from store.crypto import Identity, sha256_hex
from store.dsse import EnvelopeJSON, sign_envelope
from store.entries import MANIFEST_TYPE
from store.records import MANIFEST_V1, MANIFEST_V2
from store.words import ModelInput

__all__ = ["SignedInputJSON", "draft_to_input", "sign_payload"]

_TEXT_FIELDS = {
    "question": "question_sha256",
    "answer": "answer_sha256",
}
_PASSAGE_TEXT_FIELDS = {
    "retrieved_text": "retrieved_sha256",
    "model_input_text": "model_input_sha256",
    "query": "query_sha256",
}


class SignedInputJSON(TypedDict):
    """An input file for `tracer ingest`: the signed manifest and its texts by digest."""

    envelope: EnvelopeJSON
    contents: dict[str, str]


def sign_payload(payload: Mapping[str, object], producer: Identity) -> EnvelopeJSON:
    """DSSE envelope (as JSON) over the RFC 8785 bytes of `payload`."""
    return sign_envelope(canonical(payload), MANIFEST_TYPE, producer).to_json()


def draft_to_input(draft: dict[str, Any], producer: Identity, *, copy_draft: bool = True) -> SignedInputJSON:
    """{"envelope", "contents"} from a draft whose texts are inline.

    Draft fields `question`, `answer` and per-passage `retrieved_text`,
    `model_input_text` (defaults to the retrieved text, except for a passage whose
    `model_input` is `not_sent`, which has none) and `query` become digests. The query
    text is not kept (only its digest is evidence of which query ran). A draft without
    `schema` is `tracer.manifest/v2` when a passage states `model_input`, else v1.
    `copy_draft=False` is for a caller whose draft is its own, built for this call (the
    SDK's recorder): only the draft's own dict and its passages' dicts are changed.
    """
    payload = copy.deepcopy(draft) if copy_draft else draft
    contents: dict[str, str] = {}
    stated = any("model_input" in ps for ps in payload.get("passages", []))
    payload.setdefault("schema", MANIFEST_V2 if stated else MANIFEST_V1)
    payload.setdefault("kind", "answer")
    payload.setdefault("lineage", [])
    for text_field, digest_field in _TEXT_FIELDS.items():
        if text_field in payload:
            text = payload.pop(text_field)
            payload[digest_field] = sha256_hex(text.encode("utf-8"))
            contents[payload[digest_field]] = text
    for ps in payload.get("passages", []):
        _passage_digests(ps, contents)
    return {"envelope": sign_payload(payload, producer), "contents": contents}


def _passage_digests(ps: dict[str, Any], contents: dict[str, str]) -> None:
    """A draft passage's texts become digests; all but the query's are kept in `contents`."""
    if ps.get("model_input") != ModelInput.NOT_SENT:
        ps.setdefault("model_input_text", ps.get("retrieved_text"))
    for text_field, digest_field in _PASSAGE_TEXT_FIELDS.items():
        if text_field in ps:
            text = ps.pop(text_field)
            ps[digest_field] = sha256_hex(text.encode("utf-8"))
            if text_field != "query":
                contents[ps[digest_field]] = text
