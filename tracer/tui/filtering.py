"""The `/` filter line: free text plus `producer:` `document:` `state:` `from:` `to:`.

The SQL-side filters go to `AnswerFilter`; `state:` is matched against the words the
engine computed for each answer (the TUI never computes a state itself).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from store.queries import AnswerFilter
from tracer.engine.states import CURRENCY, INTEGRITY

if TYPE_CHECKING:
    from tracer.engine.trace import Summary

__all__ = ["FILTER_HELP", "FilterError", "ListFilter", "parse_filter"]

FILTER_HELP = "words  producer:NAME  document:ID  state:WORD  from:YYYY-MM-DD  to:YYYY-MM-DD"
_KEYS = {"producer", "document", "doc", "state", "from", "to"}


class FilterError(ValueError):
    pass


@dataclass(frozen=True)
class ListFilter:
    where: AnswerFilter = field(default_factory=AnswerFilter)
    states: tuple[str, ...] = ()
    source: str = ""

    def keeps(self, s: Summary) -> bool:
        return all(w in (s.integrity, s.currency) for w in self.states)


def parse_filter(line: str) -> ListFilter:
    try:
        parts = shlex.split(line)
    except ValueError as exc:
        raise FilterError(f"cannot read the filter: {exc}") from exc
    words: list[str] = []
    got: dict[str, str] = {}
    states: list[str] = []
    for part in parts:
        key, sep, value = part.partition(":")
        if not sep or key.lower() not in _KEYS:
            words.append(part)
            continue
        key = "document" if key.lower() == "doc" else key.lower()
        if key == "state":
            if value not in INTEGRITY and value not in CURRENCY:
                raise FilterError(f"unknown state {value!r}; states are {', '.join(INTEGRITY + CURRENCY)}")
            states.append(value)
        else:
            got[key] = value
    where = AnswerFilter(
        text=" ".join(words),
        producer=got.get("producer", ""),
        document=got.get("document", ""),
        date_from=got.get("from", ""),
        date_to=got.get("to", ""),
    )
    return ListFilter(where, tuple(states), line.strip())
