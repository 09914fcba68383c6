"""The normalizer versions this build knows, and carrying a ``/1`` locator over to ``/2``.

A passage names the normalizer its locator refers to (``normalizer_version``). It is
checked under that version unless the investigator asks for another one
(``tracer revalidate --normalizer tracer-norm/2``); every verdict names the version that
produced it. ``docs/normalizer.md`` specifies both versions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from tracer.engine.textnorm import NORMALIZER_VERSION, Structure, normalize_quote, parse_structure
from tracer.engine.textnorm2 import (
    NORMALIZER_V2,
    Structure2,
    normalize_quote2,
    parse_structure2,
    render_title,
)

__all__ = [
    "KNOWN",
    "NORM1",
    "NORM2",
    "RECORDED",
    "Normalizer",
    "by_version",
    "carry_to_v2",
]

#: the choice "check every passage under the version it was recorded with"
RECORDED: Final = "recorded"


@dataclass(frozen=True)
class Normalizer:
    """One normalizer version: its document structure and its quote form."""

    version: str
    structure: Callable[[str], Structure]
    quote: Callable[[str], str]
    title: Callable[[str], str]


def _same(title: str) -> str:
    return title


NORM1: Final = Normalizer(NORMALIZER_VERSION, parse_structure, normalize_quote, _same)
NORM2: Final = Normalizer(NORMALIZER_V2, parse_structure2, normalize_quote2, render_title)
KNOWN: Final = {n.version: n for n in (NORM1, NORM2)}


def by_version(version: str) -> Normalizer | None:
    return KNOWN.get(version)


@dataclass(frozen=True)
class Carried:
    """A quote and its locator expressed in ``tracer-norm/2`` coordinates."""

    quote: str
    heading_path: tuple[str, ...]
    paragraph: int
    char_start: int
    char_end: int


def carry_to_v2(
    quote1: str,
    heading_path: tuple[str, ...],
    paragraph: int,
    char_start: int,
    char_end: int,
    cited_text: str | None,
) -> Carried:
    """Carry a quote recorded under ``/1`` (and its locator) over to ``/2``.

    When the cited revision's text is readable and the quote sits at its recorded range,
    covering whole ``/1`` blocks (what the paragraph chunker records), the ``/2`` quote is
    the ``/2`` text of those blocks, cut from the source with its line structure, so list
    items keep their markers' meaning. Otherwise the folded quote itself is normalized
    under ``/2`` (a marker in the middle of a folded list then still counts), and the
    recorded heading titles are rendered. Either way the quote is the historical one.
    """
    if cited_text is not None:
        s1 = parse_structure(cited_text)
        if s1.text[char_start:char_end] == quote1 and quote1:
            whole = _whole_blocks(cited_text, s1, char_start, char_end)
            if whole is not None:
                return whole
            return _folded(quote1, heading_path, paragraph, parse_structure2(cited_text), s1, char_start)
    q = normalize_quote2(quote1)
    return Carried(q, tuple(render_title(t) for t in heading_path), paragraph, -1, -1)


def _whole_blocks(cited_text: str, s1: Structure, char_start: int, char_end: int) -> Carried | None:
    """The ``/2`` text of the ``/1`` blocks that exactly span [char_start, char_end), cut
    from the source with its line structure; None when the range is not whole blocks."""
    first = s1.block_at(char_start)
    last = s1.block_at(char_end - 1)
    if first is None or last is None or (first.start, last.end) != (char_start, char_end):
        return None
    lo = s1.blocks.index(first)
    hi = s1.blocks.index(last)
    s2 = parse_structure2(cited_text)
    inside = [b for b, p in zip(s2.blocks, s2.parent, strict=True) if lo <= p <= hi]
    if not inside:
        return None
    start, end = inside[0].start, inside[-1].end
    return Carried(s2.text[start:end], s2.heading_path_at(start), inside[0].index, start, end)


def _folded(
    quote1: str,
    heading_path: tuple[str, ...],
    paragraph: int,
    s2: Structure2,
    s1: Structure,
    char_start: int,
) -> Carried:
    """A partial-block quote: its ``/2`` form, placed in the ``/2`` blocks of its ``/1`` block."""
    q = normalize_quote2(quote1)
    block = s1.block_at(char_start)
    if block is not None and q:
        lo = s1.blocks.index(block)
        for b, p in zip(s2.blocks, s2.parent, strict=True):
            if p == lo:
                at = s2.text.find(q, b.start)
                if at >= 0:
                    return Carried(q, s2.heading_path_at(at), b.index, at, at + len(q))
                break
    return Carried(q, tuple(render_title(t) for t in heading_path), paragraph, -1, -1)
