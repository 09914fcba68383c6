"""The manifest payload's TypedDicts name exactly the members its JSON Schemas allow.

ingest reads a validated payload through `store.payloads`; if a schema gains, loses or
makes optional a member and the types do not follow (or the other way round), mypy
would check the code against a shape no payload has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import payloads
from store.records import ChunkJSON, LocatorJSON, SourceJSON

SCHEMAS = Path(__file__).resolve().parents[2] / "store" / "schemas"


def _schema(version: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SCHEMAS / f"manifest-{version}.schema.json").read_text("utf-8"))
    return doc


def _object(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = schema
    for part in path:
        node = node["properties"][part]
        if node.get("type") == "array":
            node = node["items"]
    return node


_SHAPES: list[tuple[tuple[str, ...], Any]] = [
    ((), payloads.ManifestPayloadJSON),
    (("producer",), payloads.ManifestProducerJSON),
    (("runtime",), payloads.ManifestRuntimeJSON),
    (("authorization",), payloads.ManifestAuthorizationJSON),
    (("passages",), payloads.ManifestPassageJSON),
    (("passages", "source"), SourceJSON),
    (("passages", "document"), payloads.ManifestDocumentJSON),
    (("passages", "chunk"), ChunkJSON),
    (("passages", "locator"), LocatorJSON),
    (("citations",), payloads.ManifestCitationJSON),
]


def _optional(shape: Any) -> set[str]:
    """Members marked NotRequired (postponed annotations hide the mark from the runtime)."""
    return {k for k, v in shape.__annotations__.items() if "NotRequired[" in str(v)}


@pytest.mark.parametrize(("path", "shape"), _SHAPES, ids=[s.__name__ for _, s in _SHAPES])
def test_the_members_are_the_schemas(path: tuple[str, ...], shape: Any) -> None:
    v1, v2 = (_object(_schema(v), path) for v in ("v1", "v2"))
    allowed = set(v1["properties"]) | set(v2["properties"])
    assert set(shape.__annotations__) == allowed
    # NotRequired exactly where some version may omit the member
    required_by_both = set(v1.get("required", ())) & set(v2.get("required", ()))
    assert _optional(shape) == allowed - required_by_both
