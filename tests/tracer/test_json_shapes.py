"""docs/json.md's field lists and the TypedDicts the engine builds its `--json` from agree.

Each documented block's member names are compared, both ways, with the keys of the
TypedDicts that build it.  Names a block leaves to the prose (say `imported`) must then
appear in the prose of the same section; names the block shows from what a producer
signed (`runtime`, `authorization_at_run_time`) must be the manifest schema's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from store.entries import FaultJSON
from store.records import ChainJSON, ChunkJSON, DocumentJSON, LocatorJSON, ProducerJSON, SourceJSON
from tracer.engine import jsonshapes as js
from tracer.engine.vocabulary import Currency, Integrity

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')
#: counts are keyed by state words: those are the registry's, not members
_WORDS = {w.value for w in Integrity} | {w.value for w in Currency} | {"superseded", "current", "unknown"}


def _section(title: str) -> str:
    i = DOC.index(title)
    j = DOC.find("\n## ", i + len(title))
    return DOC[i : j if j >= 0 else len(DOC)]


def _blocks(text: str) -> list[str]:
    return re.findall(r"```jsonc?\n(.*?)```", text, flags=re.DOTALL)


def _documented(block: str) -> set[str]:
    return set(_KEY.findall(block)) - _WORDS


def _keys(*shapes: Any) -> set[str]:
    out: set[str] = set()
    for s in shapes:
        out |= set(s.__required_keys__) | set(s.__optional_keys__)
    return out


def _manifest_object(name: str) -> set[str]:
    schema = json.loads((ROOT / "docs" / "schemas" / "manifest-v1.schema.json").read_text(encoding="utf-8"))
    return set(schema["properties"][name]["properties"])


_SHARED = DOC[: DOC.index("\n## ")]
_VERIFY = _section("## `tracer verify")
_TRACE = _section("## `tracer trace")
_REVALIDATE = _section("## `tracer revalidate")
_IMPACT = _section("## `tracer impact")
_PASSAGE = (
    js.PassageJSON,
    js.EffectiveJSON,
    js.TransformJSON,
    ChainJSON,
    ChunkJSON,
    DocumentJSON,
    SourceJSON,
)
_CURRENCY = (js.CurrencyJSON, js.CitedRevisionJSON, js.CurrentRevisionJSON)
_ANSWER_TIME = (
    js.AnswerTimeJSON,
    js.RevisionJSON,
    js.InForceJSON,
    js.VerdictJSON,
    js.ChangedInJSON,
)
_VERDICTS = (
    js.AnswerStateJSON,
    js.CitationVerdictJSON,
    js.PassageVerdictJSON,
    js.VerdictJSON,
    js.StateReasonJSON,
)


def _prose_list(text: str, start: str) -> set[str]:
    """The backticked words of the paragraph beginning with `start`: counts' and records'
    members, which are a `dict` in the code because their keys vary."""
    i = text.index(start)
    return set(re.findall(r"`([a-z_]+)`", text[i : text.find("\n\n", i)]))


#: (name, documented block, its shapes, members the prose documents, members a producer signed)
CASES: list[tuple[str, str, tuple[Any, ...], str, set[str]]] = [
    (
        "verify",
        _blocks(_VERIFY)[0],
        (js.VerifyJSON, js.VerifiedCheckpointJSON, js.FindingJSON, js.FindingRecord),
        _VERIFY,
        _prose_list(_VERIFY, "`counts` keys:")
        | ({"transform_found_at_locator"} if "`transform_<state>`" in _VERIFY else set()),
    ),
    ("text and locator", _blocks(_SHARED)[0], (js.TextJSON, js.TombstoneJSON, LocatorJSON), _SHARED, set()),
    (
        "trace",
        _blocks(_TRACE)[0],
        (
            js.TraceJSON,
            js.SignatureJSON,
            ProducerJSON,
            js.CitationJSON,
            js.NoteJSON,
            js.CheckpointRefJSON,
            js.TransformFailureJSON,
            FaultJSON,
        ),
        _TRACE,
        _manifest_object("runtime") | _manifest_object("authorization"),
    ),
    ("passage", _blocks(_TRACE)[1], _PASSAGE + _CURRENCY + _ANSWER_TIME, _TRACE, set()),
    ("lineage node", _blocks(_TRACE)[3], (js.LineageJSON,), _TRACE, set()),
    # impact's members are revalidate's plus its own; an imported row's mark is in the trace's prose
    ("revalidate", _blocks(_REVALIDATE)[0], (js.RevalidationJSON, *_VERDICTS, js.CheckpointRefJSON),
     _REVALIDATE + _IMPACT + _TRACE, set()),
    ("impact", _blocks(_IMPACT)[0], (js.RevalidationJSON, js.ImpactHoldJSON, js.SubjectJSON, js.PersonJSON,
     js.AnswerStateJSON), _IMPACT + _REVALIDATE + _TRACE, set()),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "shapes", "prose", "signed"), CASES, ids=[c[0] for c in CASES])
def test_documented_members_are_the_typed_ones(
    name: str, block: str, shapes: tuple[Any, ...], prose: str, signed: set[str]
) -> None:
    documented, typed = _documented(block), _keys(*shapes)
    untyped = documented - typed - signed
    assert not untyped, f"{name}: docs/json.md shows members no TypedDict has: {sorted(untyped)}"
    in_prose = {k for k in typed - documented if f"`{k}`" in prose or f'"{k}"' in prose}
    undocumented = typed - documented - in_prose
    assert not undocumented, f"{name}: members docs/json.md does not name: {sorted(undocumented)}"


def _required(shape: Any) -> set[str]:
    """Keys not marked NotRequired (postponed annotations hide the mark from the runtime)."""
    return {k for k, v in shape.__annotations__.items() if "NotRequired[" not in str(v)}


def test_a_finding_record_has_the_documented_members() -> None:
    """`finding(**record)` takes only FindingRecord's members, so mypy holds every call
    site to this list; the prose names each, beside the roles of a text."""
    roles = {"question", "answer", "retrieved", "model_input"}  # `revision` is also a member
    named = (
        _prose_list(_VERIFY, "Each finding:") - roles - {"kind", "seq", "null", "record", "detail", "verify"}
    )
    assert named | {"kind"} == _keys(js.FindingRecord)


def test_an_out_of_scope_passage_shows_every_member_it_has() -> None:
    hidden = _documented(_blocks(_TRACE)[2])
    assert hidden == _required(js.PassageJSON) | {"state", "reason"}  # of currency and answer_time
