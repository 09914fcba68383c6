"""An imported answer in a report: each answer-level fact with who vouches for it.

An imported trace (docs/import.md) was signed by whoever imported it, not by the
pipeline that ran.  The report says so once at the top of the answer and again beside
every fact it shows (run, generation time, producer, model, question, answer,
citations), with the fact's attestation from the statement's attestation map.  Shared
by report.md and report.html; the words are data, each view escapes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "IMPORTED_HEAD",
    "RUNTIME_ABSENT",
    "Fact",
    "answer_fact",
    "imported_mark",
    "is_imported",
    "passage_tag",
]

#: the line that opens an imported answer (the TUI and `tracer trace` say the same)
IMPORTED_HEAD = "IMPORTED — NOT ATTESTED BY THE PRODUCER"
_MARK = "imported — not attested by the producer"
#: what an export never records (docs/import.md): shown as `absent`, never as a value
RUNTIME_ABSENT = "an export records none"


@dataclass(frozen=True)
class Fact:
    state: str
    detail: str = ""

    def tag(self, mark: str) -> str:
        """`[imported — not attested by the producer: importer-computed]`"""
        return f"[{mark}: {self.state}]"


def is_imported(t: dict[str, Any]) -> bool:
    return isinstance(t.get("imported"), dict)


def imported_mark(t: dict[str, Any]) -> str:
    imp = t.get("imported") or {}
    return str(imp.get("mark") or _MARK)


def answer_fact(t: dict[str, Any], path: str, missing: str = RUNTIME_ABSENT) -> Fact:
    """The attestation of one answer-level field (`$.runtime.model`); `absent` when the
    map names none (a field an export cannot carry: prompt template, authorization)."""
    fields = (t.get("imported") or {}).get("fields") or {}
    f = fields.get(path)
    if not isinstance(f, dict):
        return Fact("absent", missing)
    return Fact(str(f.get("state") or "absent"), str(f.get("detail") or ""))


def passage_tag(p: dict[str, Any], name: str) -> str:
    """An imported passage text's mark and attestation (`retrieved_sha256`); "" for a
    producer's passage."""
    imp = p.get("imported")
    if not isinstance(imp, dict):
        return ""
    f = (imp.get("fields") or {}).get(name) or {}
    return Fact(str(f.get("state") or "absent")).tag(str(imp.get("mark") or _MARK))
