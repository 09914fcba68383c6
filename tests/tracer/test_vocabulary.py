"""The registry of words agrees with the documents, both ways, and types the code.

The registry's words are StrEnums; every field and parameter holding a state or a
finding kind is annotated with one, so `mypy --strict` refuses an unregistered word
wherever it is written (a scan of the source could not see words passed through
variables).  The last test keeps those annotations from sliding back to `str`.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from store.audit import _FACTS_CTE, DigestVerdict, ViewDiff, ordered_counts
from store.casefile import CaseProblem, Note
from store.entries import EntryKind, Statement, entry_kind
from store.ingest import Accepted
from store.ingestprep import Prepared
from store.records import MODEL_INPUT_STATES
from store.roster import RosterProblem
from tracer.engine.answertime import ANSWER_TIME_REASONS, AnswerTime, AnswerTimeReason, AnswerTimeState
from tracer.engine.currency import CurrencyResult
from tracer.engine.evidence import TextResult
from tracer.engine.journal import JournalEntry
from tracer.engine.logcheck import Finding
from tracer.engine.relocate import REASONS, Relocation
from tracer.engine.trace import (
    AnswerTrace,
    CitationTrace,
    CitationVerdict,
    LineageNode,
    PassageTrace,
    PassageVerdict,
    Summary,
)
from tracer.engine.transform import TRANSFORM_FAILURES, Transform
from tracer.engine.vocabulary import (
    CURRENCY_MEANING,
    FINDINGS,
    INTEGRITY_MEANING,
    MODEL_INPUT_MEANING,
    Currency,
    CurrencyReason,
    FindingKind,
    Integrity,
    ModelInput,
    Severity,
    SignatureState,
    TransformState,
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
    assert integrity == {s.value for s in Integrity}
    assert currency == {s.value for s in Currency}
    assert set(INTEGRITY_MEANING) == set(Integrity) and all(INTEGRITY_MEANING.values())
    assert set(CURRENCY_MEANING) == set(Currency) and all(CURRENCY_MEANING.values())


def test_model_input_words_are_the_documented_ones_and_the_stores() -> None:
    """The words a v2 manifest signs (store), registered (engine) and documented, alike;
    `not_sent` is also the integrity word shown where such a passage's model input would be."""
    documented = _first_column(_section("states.md", "## Model input", "\n## "))
    assert documented == {s.value for s in ModelInput} == set(MODEL_INPUT_STATES)
    assert set(MODEL_INPUT_MEANING) == set(ModelInput) and all(MODEL_INPUT_MEANING.values())
    assert Integrity.NOT_SENT.value == ModelInput.NOT_SENT.value


def _words(text: str) -> set[str]:
    """Every backquoted word of a table's first column, several to a cell."""
    cells = re.findall(r"^\| (`[^|]+`) \|", text, flags=re.MULTILINE)
    return {w for cell in cells for w in re.findall(r"`([a-z_]+)`", cell)}


def test_currency_reasons_are_the_documented_ones_both_ways() -> None:
    documented = _first_column(_section("states.md", "### Currency reason codes", "\n## "))
    assert documented == {r.value for r in CurrencyReason}
    assert REASONS <= set(CurrencyReason)


def test_transform_states_are_the_documented_ones_both_ways() -> None:
    documented = _words(_section("states.md", "## The transformation trace", "\n## "))
    assert documented == {s.value for s in TransformState}
    failures = {k.value.removeprefix("transform_") for k in FindingKind if k.value.startswith("transform_")}
    assert {s.value for s in TRANSFORM_FAILURES} == failures


def test_answer_time_states_are_the_documented_ones_both_ways() -> None:
    section = _section("states.md", "## Answer time", "\n## ")
    assert _first_column(section) == {s.value for s in AnswerTimeState}
    rows = re.findall(r"^\| `[a-z_]+` \| ([^|]+) \|", section, flags=re.MULTILINE)
    reasons = {w for cell in rows for w in re.findall(r"`([a-z_]+)`", cell)}
    assert reasons == {r.value for r in AnswerTimeReason} == set(ANSWER_TIME_REASONS)
    assert all(ANSWER_TIME_REASONS.values())


def test_signature_states_are_the_documented_ones() -> None:
    """`trace --json`'s signature state is valid or signature_invalid (docs/json.md); a
    journal line `tracer access --json` cannot read is `unreadable`."""
    block = _section("json.md", "## `tracer trace", "\n## ")
    assert '"signature": {"state": "valid"' in block and '// or "signature_invalid"' in block
    assert {s.value for s in SignatureState} == {"valid", "signature_invalid", "unreadable"}


def _annotations(cls: type) -> dict[str, object]:
    return {f.name: f.type for f in dataclasses.fields(cls)}


#: every field that holds a registered word, and the enum it must be annotated with
_TYPED: list[tuple[type, str, str]] = [
    (TextResult, "state", "Integrity"),
    (CurrencyResult, "state", "Currency"),
    (Relocation, "state", "Currency"),
    (Relocation, "reason", "CurrencyReason"),
    (CurrencyResult, "reason", "CurrencyReason"),
    (PassageVerdict, "reason", "CurrencyReason"),
    (PassageVerdict, "state", "Currency"),
    (PassageVerdict, "effective_currency", "Currency"),
    (PassageTrace, "integrity", "Integrity"),
    (PassageTrace, "effective_integrity", "Integrity"),
    (PassageTrace, "effective_currency", "Currency"),
    (PassageTrace, "model_input_state", "ModelInput | None"),
    (RosterProblem, "code", "FindingKind"),
    (CaseProblem, "code", "FindingKind"),
    (ViewDiff, "problem", "FindingKind"),
    (DigestVerdict, "verdict", "TextVerdict"),
    (Finding, "kind", "FindingKind"),
    (Transform, "state", "TransformState"),
    (AnswerTime, "state", "AnswerTimeState"),
    (AnswerTime, "reason", "AnswerTimeReason"),
    (PassageVerdict, "answer_time_reason", "AnswerTimeReason"),
    (PassageVerdict, "answer_time", "AnswerTimeState"),
    (CitationVerdict, "answer_time", "AnswerTimeState"),
    (Summary, "answer_time", "AnswerTimeState"),
    (AnswerTrace, "answer_time", "AnswerTimeState"),
    (AnswerTrace, "signature", "SignatureState"),
    (JournalEntry, "signature", "SignatureState"),
    (Statement, "kind", "EntryKind"),
    (Note, "kind", "EntryKind"),
    (Prepared, "kind", "EntryKind"),
    (Accepted, "kind", "EntryKind"),
    (Summary, "reasons", "tuple[Reason, ...]"),
    (AnswerTrace, "reasons", "tuple[Reason, ...]"),
] + [
    (cls, axis, axis.capitalize())
    for cls in (CitationVerdict, Summary, CitationTrace, LineageNode, AnswerTrace)
    for axis in ("integrity", "currency")
]


@pytest.mark.parametrize(("cls", "name", "enum"), _TYPED, ids=lambda x: getattr(x, "__name__", str(x)))
def test_state_fields_are_typed_with_the_registry(cls: type, name: str, enum: str) -> None:
    """mypy only refuses a stray word where the field says which words it takes."""
    assert _annotations(cls)[name] == enum


def test_every_verdict_the_text_audit_sql_writes_is_a_text_verdict() -> None:
    """The audit's CASE writes its words as SQL literals; each must parse as the enum the
    rows are read into, or a stray word would fail the audit at read time, not at review."""
    from store.words import TextVerdict

    written = set(re.findall(r"THEN '([a-z_]+)'", _FACTS_CTE))
    assert written and written <= {v.value for v in TextVerdict}


def test_text_verdict_counts_list_the_ordinary_outcomes_first_then_by_name() -> None:
    from store.words import TextVerdict as V

    counts = {V.CHECKSUM_MISMATCH: 2, V.INTACT: 5, V.PURGED: 1, V.MISSING: 0, V.OUT_OF_SCOPE: 3}
    assert ordered_counts(counts) == [
        (V.PURGED, 1),
        (V.OUT_OF_SCOPE, 3),
        (V.INTACT, 5),
        (V.CHECKSUM_MISMATCH, 2),
    ]


def test_entry_kinds_are_one_list_and_a_word_read_back_is_parsed_not_trusted() -> None:
    """Every kind set is made of `EntryKind` members, and a word read from the file names
    a member or nothing: an unknown kind never reaches code typed with the enum."""
    from store import entries

    sets = [entries.CUSTODIAN_KINDS, entries.INVESTIGATOR_KINDS, entries.ROSTER_KINDS, entries.ANSWER_KINDS]
    assert all(isinstance(k, EntryKind) for s in sets for k in s)
    assert entries.CUSTODIAN_KINDS | entries.INVESTIGATOR_KINDS | {EntryKind.MANIFEST} == set(EntryKind)
    assert entry_kind("tag") is EntryKind.TAG
    assert entry_kind("case_reopen") is None and entry_kind(None) is None and entry_kind(["tag"]) is None
