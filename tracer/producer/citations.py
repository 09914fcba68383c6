"""A citation of a record: answer characters `[start, end)` and the passages they rest on.

The range is checked against the answer it cites (code points, as Python counts) and a
quoted text is found in the answer once, or at the occurrence asked for, so a citation
never points past the answer or at the wrong repeat of a phrase.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.payloads import ManifestCitationJSON
from tracer.producer import model as m
from tracer.producer.errors import CitationError

__all__ = ["Citation", "check_range", "quoted_range"]


@dataclass(frozen=True, slots=True)
class Citation:
    """Answer characters `[start, end)` rest on the passages `passage_ids`."""

    start: int
    end: int
    passage_ids: tuple[str, ...]

    def to_json(self) -> ManifestCitationJSON:
        return {"answer_start": self.start, "answer_end": self.end, "passage_ids": list(self.passage_ids)}


def check_range(start: int, end: int, length: int) -> None:
    """A citation range is two integers with 0 <= start < end <= the answer's length."""
    for value, what in ((start, "answer_start"), (end, "answer_end")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise CitationError(f"{what}: expected an integer, got {value!r}")
    if not 0 <= start < end <= length:
        raise CitationError(
            f"citation [{start}, {end}) is outside the answer's {length} characters (or empty)"
        )


def quoted_range(answer: str, quoted: str, occurrence: int | None) -> tuple[int, int]:
    """The range of `answer` that reads exactly `quoted`: its only occurrence, or the
    `occurrence`-th (from 0) when it repeats."""
    m.text(quoted, "cited text")
    starts: list[int] = []
    i = answer.find(quoted)
    while i >= 0:
        starts.append(i)
        i = answer.find(quoted, i + 1)
    if not starts:
        raise CitationError(f"the answer does not contain {quoted[:60]!r}")
    if occurrence is None and len(starts) > 1:
        raise CitationError(f"{quoted[:60]!r} occurs {len(starts)} times in the answer: pass occurrence=")
    n = 0 if occurrence is None else occurrence
    if not 0 <= n < len(starts):
        raise CitationError(f"occurrence {n} asked for, {quoted[:60]!r} occurs {len(starts)} time(s)")
    return starts[n], starts[n] + len(quoted)
