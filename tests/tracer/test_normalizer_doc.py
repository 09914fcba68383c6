"""docs/normalizer.md's test vectors hold for the reference implementation."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tracer.engine.textnorm import normalize
from tracer.engine.textnorm2 import normalize2

DOC = Path(__file__).resolve().parents[2] / "docs" / "normalizer.md"


def vectors() -> list[dict[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Test vectors", 1)[1]
    block = re.search(r"```json\n(.*?)\n```", section, re.S)
    assert block is not None, "docs/normalizer.md has no JSON block under 'Test vectors'"
    found = json.loads(block.group(1))
    assert isinstance(found, list) and len(found) >= 20
    return found


@pytest.mark.parametrize("vector", vectors(), ids=lambda v: v["input"][:30])
def test_vector(vector: dict[str, str]) -> None:
    assert normalize(vector["input"]) == vector["norm1"]
    assert normalize2(vector["input"]) == vector["norm2"]
    assert normalize2(vector["norm2"]) == vector["norm2"]
