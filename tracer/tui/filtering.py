"""The `/` filter line: free text plus `producer:` `document:` `state:` `answer-time:` `question:`
`tag:` `from:` `to:`.

The SQL-side filters go to `AnswerFilter`; `state:` is matched against the words the
engine computed for each answer (the TUI never computes a state itself), so is
`answer-time:` (`superseded`: answered from a revision already superseded then), and
`question:` against the recorded question the engine released (verified, in scope).
`tag:` keeps the answers a case-file tag in force names (`CaseDesk.answers_tagged`, only
tags the viewer may see; of the selected case when one is selected).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from store.filters import AnswerFilter
from tracer.engine.vocabulary import Currency, Integrity

if TYPE_CHECKING:
    from tracer.engine.trace import Summary

__all__ = ["FILTER_HELP", "FilterError", "ListFilter", "parse_filter"]

FILTER_HELP = (
    "id or words  producer:NAME  document:ID  state:WORD  answer-time:superseded  question:WORD  "
    "tag:TAG  from:YYYY-MM-DD  to:YYYY-MM-DD"
)
#: both axes, integrity first, as the error message lists them
_STATE_WORDS: tuple[str, ...] = (*Integrity, *Currency)
_KEYS = {"producer", "document", "doc", "state", "answer-time", "at", "question", "q", "tag", "from", "to"}


class FilterError(ValueError):
    pass


@dataclass(frozen=True)
class ListFilter:
    where: AnswerFilter = field(default_factory=AnswerFilter)
    states: tuple[str, ...] = ()
    source: str = ""
    #: words the recorded question must contain (case-insensitive)
    question: tuple[str, ...] = ()
    #: answer-time states the answer must have (current, unknown, superseded)
    answer_time: tuple[str, ...] = ()
    #: case-file tags the answer must carry (resolved to answer ids in `where` by `with_tags`)
    tags: tuple[str, ...] = ()

    def with_tags(self, tagged: dict[str, list[str]]) -> ListFilter:
        """This filter with `tag:` resolved: only answers every named tag is on."""
        if not self.tags:
            return self
        keep: set[str] | None = None
        for tag in self.tags:
            ids = set(tagged.get(tag, ()))
            keep = ids if keep is None else keep & ids
        return replace(self, where=replace(self.where, answer_ids=tuple(sorted(keep or ()))))

    @property
    def computed(self) -> bool:
        """True when rows can only be kept after the engine has looked at each answer."""
        return bool(self.states or self.question or self.answer_time)

    def keeps(self, s: Summary, question: str | None = None) -> bool:
        if not all(w in (s.integrity, s.currency) for w in self.states):
            return False
        if not all(w == s.answer_time for w in self.answer_time):
            return False
        text = (question or "").casefold()
        return all(w.casefold() in text for w in self.question)


_ALIASES = {"doc": "document", "q": "question", "at": "answer-time"}


def _checked(key: str, value: str) -> str:
    """`value` of a `key:` that takes a known word or must not be empty (FilterError)."""
    from tracer.engine.answertime import ANSWER_TIME  # the engine loads after the first frame

    if key == "tag" and not value:
        raise FilterError("tag: needs a tag, e.g. tag:dropped-exception")
    if key == "state" and value not in _STATE_WORDS:
        raise FilterError(f"unknown state {value!r}; states are {', '.join(_STATE_WORDS)}")
    if key == "answer-time" and value not in ANSWER_TIME:
        raise FilterError(f"unknown answer-time state {value!r}; they are {', '.join(ANSWER_TIME)}")
    return value


def parse_filter(line: str) -> ListFilter:
    try:
        parts = shlex.split(line)
    except ValueError as exc:
        raise FilterError(f"cannot read the filter: {exc}") from exc
    words: list[str] = []
    got: dict[str, str] = {}
    #: the keys that may repeat, each value kept in order
    many: dict[str, list[str]] = {"question": [], "tag": [], "state": [], "answer-time": []}
    for part in parts:
        key, sep, value = part.partition(":")
        if not sep or key.lower() not in _KEYS:
            words.append(part)
            continue
        key = _ALIASES.get(key.lower(), key.lower())
        if key not in many:
            got[key] = value
        elif value or key != "question":  # an empty question: matches every answer
            many[key].append(_checked(key, value))
    where = AnswerFilter(
        text=" ".join(words),
        producer=got.get("producer", ""),
        document=got.get("document", ""),
        date_from=got.get("from", ""),
        date_to=got.get("to", ""),
    )
    return ListFilter(
        where,
        tuple(many["state"]),
        line.strip(),
        tuple(many["question"]),
        tuple(many["answer-time"]),
        tuple(many["tag"]),
    )
