"""The checker's vocabulary: one pinned failure, and the result of checking a pack."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from store.errors import InputError

if TYPE_CHECKING:
    from tracer.report.recorded import EvidenceRecord

__all__ = ["Failure", "PackVerification"]


@dataclass(frozen=True)
class Failure:
    """One check that failed, pinned to the file, JSON path and answer/passage it concerns."""

    file: str
    path: str
    message: str
    answer_id: str = ""
    passage_id: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"file": self.file, "path": self.path, "message": self.message}
        if self.answer_id:
            out["answer_id"] = self.answer_id
        if self.passage_id:
            out["passage_id"] = self.passage_id
        return out

    def line(self) -> str:
        who = ""
        if self.answer_id:
            who = (
                f" [answer {self.answer_id}"
                + (f" passage {self.passage_id}" if self.passage_id else "")
                + "]"
            )
        return f"{self.file} {self.path}{who}: {self.message}"


@dataclass
class PackVerification:
    """Everything `verify-pack` found; `ok` only when no check failed.

    `ok` is what the pack proves (it is authentic); `recorded` is what its evidence
    records (findings, states, holds), read from report.json and true only if `ok`.
    """

    pack: Path
    failures: list[Failure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    checked: Counter[str] = field(default_factory=Counter)
    facts: dict[str, Any] = field(default_factory=dict)
    recorded: EvidenceRecord | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    def fail(self, file: str, path: str, message: str, answer_id: str = "", passage_id: str = "") -> None:
        failure = Failure(file, path, message, answer_id, passage_id)
        if failure not in self.failures:
            self.failures.append(failure)

    def guard(self, file: str, path: str, answer_id: str = "", passage_id: str = "") -> _Guard:
        """Turn a malformed structure into a pinned failure instead of a crash."""
        return _Guard(self, Failure(file, path, "", answer_id, passage_id))

    def to_json(self) -> dict[str, Any]:
        return {
            "pack": str(self.pack),
            "ok": self.ok,
            "authentic": self.ok,
            "recorded": None if self.recorded is None else self.recorded.to_json(),
            "checked": dict(sorted(self.checked.items())),
            "facts": self.facts,
            "failures": [f.to_json() for f in self.failures],
            "warnings": self.warnings,
        }


class _Guard:
    """Context manager behind `PackVerification.guard`; swallows only shape errors."""

    _SHAPE = (KeyError, IndexError, TypeError, ValueError, AttributeError, InputError)

    def __init__(self, v: PackVerification, where: Failure):
        self.v, self.where = v, where

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if exc is None or not isinstance(exc, self._SHAPE):
            return False
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
        self.v.failures.append(replace(self.where, message=f"malformed: {what}"))
        return True
