"""The registry of words agrees with the documents, both ways, and with the code."""

from __future__ import annotations

import re
from pathlib import Path

from store.records import MODEL_INPUT_STATES
from tracer.engine.states import CURRENCY, INTEGRITY, MODEL_INPUT, MODEL_INPUT_MEANING
from tracer.engine.vocabulary import (
    FINDINGS,
    STATE_MEANINGS,
    Currency,
    FindingKind,
    Integrity,
    ModelInput,
    Severity,
)

ROOT = Path(__file__).resolve().parents[2]


def _section(doc: str, start: str, stop: str) -> str:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    i = text.index(start)
    j = text.find(stop, i + len(start))
    return text[i : j if j >= 0 else len(text)]


def _first_column(text: str) -> set[str]:
    return set(re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.MULTILINE))


def test_finding_kinds_are_the_documented_ones_both_ways() -> None:
    documented = _first_column(_section("json.md", "### Finding kinds", "\n## "))
    assert documented == {k.value for k in FindingKind}
    assert set(FINDINGS) == set(FindingKind)
    for kind, term in FINDINGS.items():
        assert term.meaning and term.severity in Severity, kind


def test_state_words_are_the_documented_ones_both_ways() -> None:
    integrity = _first_column(_section("states.md", "## Integrity", "\n## "))
    currency = _first_column(_section("states.md", "## Currency", "\n### "))
    assert integrity == {s.value for s in Integrity} == set(INTEGRITY)
    assert currency == {s.value for s in Currency} == set(CURRENCY)
    assert [s.value for s in Integrity] == list(INTEGRITY)  # the order is the strictness
    assert [s.value for s in Currency] == list(CURRENCY)


def test_model_input_words_are_the_documented_ones_and_the_stores() -> None:
    """The words a v2 manifest signs (store), registered (engine) and documented, alike."""
    documented = _first_column(_section("states.md", "## Model input", "\n## "))
    assert documented == {s.value for s in ModelInput} == set(MODEL_INPUT) == set(MODEL_INPUT_STATES)
    assert [s.value for s in ModelInput] == list(MODEL_INPUT) == list(MODEL_INPUT_STATES)
    assert STATE_MEANINGS["model_input"] == MODEL_INPUT_MEANING
    assert all(MODEL_INPUT_MEANING[w] for w in MODEL_INPUT)
    assert not set(MODEL_INPUT) & set(INTEGRITY)  # never folded into the integrity axis


_EMITTERS = re.compile(
    r"""(?:\bfinding\(|self\.find\(|self\._tfind\(|RosterProblem\([^,]+,[^,]+,\s*)\s*["']([a-z_]+)["']"""
)


def test_every_finding_kind_the_code_emits_is_registered() -> None:
    emitted: set[str] = set()
    for folder in ("store", "tracer"):
        for path in (ROOT / folder).rglob("*.py"):
            emitted |= set(_EMITTERS.findall(path.read_text(encoding="utf-8")))
    # statement problems and transform verdicts are emitted through variables
    assert emitted, "the scan found no emitter: the pattern is out of date"
    unknown = {k for k in emitted if k not in {f.value for f in FindingKind}} - {"roster_change_refused"}
    assert not unknown, f"finding kinds emitted but not registered (and documented): {sorted(unknown)}"
