"""docs/vectors/chunking: what a producer in another language checks its chunker against.

Each vector holds an input document, the exact `tracer chunk --json` report for it, and
locate cases; the implementation must reproduce every one of them byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tracer.producer import LocateError, chunk_report, locate, occurrences

VECTORS = sorted((Path(__file__).resolve().parents[2] / "docs" / "vectors" / "chunking").glob("*.json"))


def test_there_are_vectors_for_every_rule() -> None:
    names = {p.stem.split("-", 1)[1] for p in VECTORS}
    assert {
        "headings",
        "not-headings",
        "fences",
        "one-paragraph-things",
        "whitespace",
        "unicode",
        "repeats",
        "closing-sequences",
        "overlaps",
        "byte-order-mark",
    } <= names


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_the_implementation_reproduces_the_vector(path: Path) -> None:
    vec: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    text = vec["input"]
    assert chunk_report(text) == vec["expected"]
    exp = vec["expected"]
    # The vector is self-consistent, so a reader can trust each number on its own:
    assert exp["input_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert exp["normalized"] == "\n\n".join(b["text"] for b in exp["blocks"])
    for b in exp["blocks"]:
        assert exp["normalized"][b["char_start"] : b["char_end"]] == b["text"]
    for case in vec["locate"]:
        found = [loc.to_json() for loc in occurrences(text, case["passage"])]
        assert found == case["occurrences"]
        if "expected" in case:
            assert (
                locate(text, case["passage"], occurrence=case.get("occurrence")).to_json() == case["expected"]
            )
        else:
            with pytest.raises(LocateError):
                locate(text, case["passage"], occurrence=case.get("occurrence"))
