"""docs/normalizer.md's test vectors hold for the reference implementation.

The regular expressions the page spells out (its ```re blocks) are the implementation's,
so a reader never has to open the code to learn them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tracer.engine.relocate import _LABEL
from tracer.engine.textnorm import normalize
from tracer.engine.textnorm2 import _ATOM, normalize2

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


def test_the_spelled_out_regular_expressions_are_the_implementations() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = [
        "".join(line.strip() for line in b.splitlines())
        for b in re.findall(r"```re\n(.*?)\n *```", text, re.S)
    ]
    assert _ATOM.pattern in blocks, "the inline span regex in docs/normalizer.md is not _ATOM's"
    assert _LABEL.pattern in blocks, "the heading label regex in docs/normalizer.md is not _LABEL's"
