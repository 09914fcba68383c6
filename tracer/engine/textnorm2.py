"""``tracer-norm/2``: compare what a person reads, not how the Markdown spelled it.

The complete specification, with test vectors, is ``docs/normalizer.md``; this module is
its reference implementation and the test suite checks the vectors against it.

In short, ``tracer-norm/2`` is ``tracer-norm/1`` (NFC, blocks at blank lines, whitespace
folded, ATX headings and fenced code blocks as blocks of their own) plus:

* a list item line (a bullet ``-``, ``*``, ``+`` or an ordered ``1.``/``1)`` marker, where
  CommonMark would start a list item) starts a block of its own; a bullet is dropped, and
  an ordered item is written with the number a reader sees (the list's start number plus
  its position, so ``1999.`` stays ``1999.`` and lazy ``1.`` ``1.`` reads ``1.`` ``2.``);
* emphasis and strong delimiters (``*``, ``_``), backslash escapes and hard line breaks
  are dropped; ATX heading markers are written canonically (``#`` × level, one space,
  no closing sequence);
* a block that is only a thematic break is written ``---``.

Code spans, link destinations, autolinks, inline HTML and bare URLs are kept exactly as
written, and so are all words, numbers, link texts and link targets: changing any of
them changes the normalized text. The result is idempotent (normalizing normalized text
gives it back), which lets a producer's chunk text be normalized again by the checker.

The structure (heading paths, paragraph indices, blocks) is computed from the source
text; every ``tracer-norm/2`` block lies inside exactly one ``tracer-norm/1`` block
(``Structure2.parent``), which is how a locator recorded under ``/1`` is carried over.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Final

from tracer.engine.textnorm import (
    BLOCK_SEPARATOR,
    Block,
    Structure,
    _atx_heading,
    _closes_fence,
    _fence_opening,
    fold_whitespace,
)

__all__ = [
    "NORMALIZER_V2",
    "Structure2",
    "normalize2",
    "normalize_quote2",
    "parse_structure2",
    "render_inline",
    "render_title",
    "words",
]

NORMALIZER_V2: Final = "tracer-norm/2"

_BULLET: Final = re.compile(r"[-+*] (?=\S)")
_ORDERED: Final = re.compile(r"(\d{1,9})([.)]) (?=\S)")
_THEMATIC: Final = re.compile(r"(?:([-*_]) ?)(?:\1 ?){2,}")
# What a rendered paragraph must not start with: it would be read back as another kind
# of block (a heading, a fence, a list item or a thematic break).
_BLOCK_SYNTAX: Final = re.compile(r"#{1,6}(?: |$)|`{3,}|~{3,}|[-+*] |\d{1,9}[.)] ")

# Verbatim spans, in order of precedence: code spans (a backtick run closed by a run of
# the same length), link destinations with their optional title, autolinks and inline
# HTML tags, bare URLs.
_ATOM: Final = re.compile(
    r"(?P<code>(?P<ticks>`+).+?(?<!`)(?P=ticks)(?!`))"
    r"|(?P<dest>\]\((?:<[^<>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?: (?:\"[^\"]*\"|'[^']*'|\([^()]*\)))? ?\))"
    r"|(?P<tag><(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>@]+|/?[A-Za-z][^<>]*)>)"
    r"|(?P<url>(?:https?|ftp)://[^\s<>]*[^\s<>.,;:!?)\]'\"])"
    r"|\ufffc"  # a literal hole character of the source is held like any other span
)
_ESCAPE: Final = re.compile(r"\\([!-/:-@\[-`{-~])|\\(?= |$)")
_RUN: Final = re.compile(r"\*+|_+")
_HOLE: Final = "\ufffc"


def _is_space(ch: str) -> bool:
    return ch == "" or ch.isspace()


def _is_punct(ch: str) -> bool:
    # A held span counts as punctuation: link destinations, code spans and tags begin
    # with one (``]``, a backtick, ``<``), and a bare URL beside a delimiter behaves alike.
    return ch == _HOLE or (ch != "" and unicodedata.category(ch)[0] in "PS")


@dataclass
class _Delim:
    char: str
    start: int
    length: int
    can_open: bool
    can_close: bool


def _flanking(text: str, start: int, end: int) -> tuple[bool, bool]:
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    left = not _is_space(after) and (not _is_punct(after) or _is_space(before) or _is_punct(before))
    right = not _is_space(before) and (not _is_punct(before) or _is_space(after) or _is_punct(after))
    return left, right


def _delimiter(text: str, run: re.Match[str]) -> _Delim | None:
    """The delimiter a ``*``/``_`` run is, or None when it can neither open nor close."""
    left, right = _flanking(text, run.start(), run.end())
    char = run.group()[0]
    if char == "_":
        # an underscore run inside a word opens or closes only beside punctuation
        before = text[run.start() - 1] if run.start() > 0 else ""
        after = text[run.end()] if run.end() < len(text) else ""
        opens = left and (not right or _is_punct(before))
        closes = right and (not left or _is_punct(after))
    else:
        opens, closes = left, right
    if not (opens or closes):
        return None
    return _Delim(char, run.start(), len(run.group()), opens, closes)


def _close(d: _Delim, stack: list[_Delim], drop: list[bool]) -> None:
    """Match the closer `d` against the openers on `stack`, marking the pairs' characters dropped."""
    while d.can_close and d.length:
        at = next((k for k in range(len(stack) - 1, -1, -1) if stack[k].char == d.char), -1)
        if at < 0:
            return
        opener = stack[at]
        n = min(opener.length, d.length, 2)
        drop[opener.start + opener.length - n : opener.start + opener.length] = [True] * n
        drop[d.start : d.start + n] = [True] * n
        opener.length -= n
        d.start += n
        d.length -= n
        del stack[at + 1 :]  # openers between the pair stay literal
        if opener.length == 0:
            stack.pop()


def _emphasis_pass(text: str) -> str:
    """Drop every matched pair of ``*``/``_`` delimiter runs (CommonMark's flanking rules)."""
    delims = [d for m in _RUN.finditer(text) if (d := _delimiter(text, m)) is not None]
    drop = [False] * len(text)
    stack: list[_Delim] = []
    for d in delims:
        _close(d, stack, drop)
        if d.can_open and d.length:
            stack.append(d)
    return "".join(ch for ch, gone in zip(text, drop, strict=True) if not gone)


def _inline_pass(text: str) -> str:
    atoms: list[str] = []

    def hold(m: re.Match[str]) -> str:
        atoms.append(m.group())
        return _HOLE

    held = _ATOM.sub(hold, text)
    plain = fold_whitespace(_emphasis_pass(_ESCAPE.sub(lambda m: m.group(1) or "", held)))
    pieces = plain.split(_HOLE)
    out = [pieces[0]]
    for atom, piece in zip(atoms, pieces[1:], strict=True):
        out += [atom, piece]
    return "".join(out)


@functools.lru_cache(maxsize=65536)
def render_inline(text: str) -> str:
    """Inline Markdown syntax dropped, repeatedly until nothing changes (so idempotent)."""
    current = fold_whitespace(text)
    while True:
        nxt = _inline_pass(current)
        if nxt == current:
            return current
        current = nxt


def render_title(title: str) -> str:
    """A heading title as ``tracer-norm/2`` writes it (inline syntax and closing ``#`` dropped)."""
    current = title
    while True:
        nxt = re.sub(r"(?:^| )#+$", "", render_inline(current)).strip()
        if nxt == current:
            return current
        current = nxt


def _render_paragraph(folded: str, number: str | None = None) -> str:
    """A paragraph block's text; ``number`` is what an ordered item's marker is written as."""
    if _THEMATIC.fullmatch(folded):
        return "---"
    # Like headings under /1, a list item is recognised on the folded block, so that the
    # normalized text reads back as the same blocks (idempotence).
    body, marker = folded, ""
    m = _ORDERED.match(folded)
    if m is not None:
        body = folded[m.end() :]
        marker = f"{number if number is not None else int(m.group(1))}{m.group(2)} "
    elif (b := _BULLET.match(folded)) is not None:
        body = folded[b.end() :]
    rendered = render_inline(body)
    if not rendered or _BLOCK_SYNTAX.match(rendered) or _THEMATIC.fullmatch(rendered):
        # rendering would change what kind of block this is: keep the body as written
        return marker + body if marker else folded
    return marker + rendered


def _heading_text(level: int, title: str) -> str:
    return "#" * level + (" " + title if title else "")


# -- blocks --------------------------------------------------------------------------


@dataclass(frozen=True)
class _RawBlock2:
    text: str
    heading: tuple[int, str] | None
    parent: int  # index of the tracer-norm/1 block this one lies in


@dataclass
class _List:
    """The ordered list open in the walk: its delimiter, start number and items so far."""

    delim: str
    start: int
    items: int


@dataclass(frozen=True)
class _Item:
    """The list item the pending block is: its kind and, for an ordered one, its column."""

    delim: str | None  # "." or ")" for an ordered item, None for a bullet item
    content_column: int


def _columns(text: str, start: int = 0, column: int = 0) -> tuple[int, int]:
    """Columns taken by the whitespace at ``text[start:]`` (tab stops of 4): (end, column)."""
    i = start
    while i < len(text) and text[i].isspace():
        column = column + 4 - column % 4 if text[i] == "\t" else column + 1
        i += 1
    return i, column


def _content_column(line: str, marker: re.Match[str]) -> int:
    """CommonMark's content column of the ordered item starting on ``line`` (source form).

    The marker's column plus its width plus the spaces after it (1 to 4; more than 4
    count as 1, the rest being an indented code block's).
    """
    at, column = _columns(line)
    after_marker = column + len(marker.group(1)) + 1
    _, column = _columns(line, at + len(marker.group(1)) + 1, after_marker)
    spaces = column - after_marker
    return after_marker + (spaces if 1 <= spaces <= 4 else 1)


def _item_start(folded: str, line: str, pending: _Item | None, has_pending: bool) -> bool:
    if _THEMATIC.fullmatch(folded):
        return False
    if _BULLET.match(folded):
        return True
    m = _ORDERED.match(folded)
    if m is None:
        return False
    if not has_pending or int(m.group(1)) == 1:
        return True
    # CommonMark: only a list's first item has to start at 1 to interrupt a paragraph; the
    # next item of the same ordered list (same delimiter, not indented into the item's
    # content, where it would be a nested list's first item) interrupts at any number.
    return pending is not None and pending.delim == m.group(2) and _columns(line)[1] < pending.content_column


def _number(m: re.Match[str], open_list: _List | None) -> tuple[str, _List]:
    """The number an ordered item is written with, and the list it belongs to.

    The next item of the open list (same delimiter) is numbered as CommonMark renders it,
    start + position, when its source number is the list's start (lazy numbering,
    ``1.`` ``1.`` ``1.``) or already that ordinal; any other source number is kept, since
    without indentation it may be a nested list's own start. A new list's first item
    keeps its number: that is the start the reader sees (``1999.``).
    """
    written = int(m.group(1))
    if open_list is None or open_list.delim != m.group(2):
        return str(written), _List(m.group(2), written, 1)
    ordinal = open_list.start + open_list.items
    open_list.items += 1
    if written in (open_list.start, ordinal) and ordinal < 10**9:
        return str(ordinal), open_list
    return str(written), open_list


def _split_blocks2(text: str) -> list[_RawBlock2]:
    splitter = _Splitter2()
    for line in unicodedata.normalize("NFC", text).splitlines():
        splitter.line(line)
    return splitter.finish()


@dataclass
class _Splitter2:
    """One pass over a text's lines: the blocks so far and the block being gathered."""

    blocks: list[_RawBlock2] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    pending_item: _Item | None = None
    open_list: _List | None = None  # the ordered list the next item may continue
    parent: int = -1  # tracer-norm/1 block counter
    fence: tuple[str, int] | None = None
    v1_open: bool = False  # whether the current tracer-norm/1 block has started

    def flush(self, end_v1: bool) -> None:
        if self.pending:
            folded = " ".join(self.pending)
            # Numbered from the folded block, as the block is recognised (a first line
            # "1." alone folds with the next into "1. x"): the normalized text then
            # reads back as the same lists with the same numbers (idempotence).
            m = None if _THEMATIC.fullmatch(folded) else _ORDERED.match(folded)
            number = None
            if m is None:  # a bullet item, a paragraph or a thematic break ends the list
                self.open_list = None
            else:
                number, self.open_list = _number(m, self.open_list)
            self.blocks.append(_RawBlock2(_render_paragraph(folded, number), None, self.parent))
            self.pending.clear()
        self.pending_item = None
        if end_v1:
            self.v1_open = False

    def open_v1(self) -> None:
        if not self.v1_open:
            self.parent += 1
            self.v1_open = True

    def line(self, line: str) -> None:
        folded = fold_whitespace(line)
        if self.fence is not None:
            self._fenced(folded, self.fence)
            return
        if not folded:
            self.flush(True)
            return
        opening = _fence_opening(folded)
        if opening is not None:
            self.flush(True)
            self.open_v1()
            self.pending.append(folded)
            self.fence = opening
            self.open_list = None
            return
        heading = _atx_heading(folded)
        if heading is not None:
            self._heading(*heading)
            return
        if _item_start(folded, line, self.pending_item, bool(self.pending)):
            self.flush(False)
            self.open_v1()
            m = _ORDERED.match(folded)
            self.pending_item = _Item(None, 0) if m is None else _Item(m.group(2), _content_column(line, m))
        else:
            self.open_v1()
        self.pending.append(folded)

    def _fenced(self, folded: str, fence: tuple[str, int]) -> None:
        """A line inside a fenced block: kept as it is, up to the closing fence."""
        if folded:
            self.pending.append(folded)
        if _closes_fence(folded, fence):
            self.fence = None
            self.blocks.append(_RawBlock2(" ".join(self.pending), None, self.parent))
            self.pending.clear()
            self.v1_open = False

    def _heading(self, level: int, title: str) -> None:
        self.flush(True)
        self.open_v1()
        rendered = render_title(title)
        self.blocks.append(_RawBlock2(_heading_text(level, rendered), (level, rendered), self.parent))
        self.v1_open = False
        self.open_list = None

    def finish(self) -> list[_RawBlock2]:
        """The blocks, with an unclosed fence kept as one block to the end of the text."""
        if self.fence is not None and self.pending:
            self.blocks.append(_RawBlock2(" ".join(self.pending), None, self.parent))
            self.pending.clear()
            self.fence = None
        self.flush(True)
        return self.blocks


@dataclass(frozen=True)
class Structure2(Structure):
    """A ``tracer-norm/2`` structure; ``parent[i]`` is the ``/1`` block that block ``i`` lies in."""

    parent: tuple[int, ...] = ()


@functools.lru_cache(maxsize=2048)
def parse_structure2(text: str) -> Structure2:
    """Normalize under ``tracer-norm/2`` and give every block its heading path and index."""
    stack: list[tuple[int, str]] = []
    blocks: list[Block] = []
    parents: list[int] = []
    pieces: list[str] = []
    offset = 0
    paragraph = 0
    for raw in _split_blocks2(text):
        if blocks:
            offset += len(BLOCK_SEPARATOR)
        if raw.heading is not None:
            level, title = raw.heading
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
        end = offset + len(raw.text)
        blocks.append(
            Block(
                index=paragraph,
                heading_path=tuple(t for _, t in stack),
                is_heading=raw.heading is not None,
                start=offset,
                end=end,
                text=raw.text,
            )
        )
        parents.append(raw.parent)
        pieces.append(raw.text)
        if raw.heading is None:
            paragraph += 1
        offset = end
    return Structure2(text=BLOCK_SEPARATOR.join(pieces), blocks=tuple(blocks), parent=tuple(parents))


def normalize2(text: str) -> str:
    """The ``tracer-norm/2`` form of a text (see ``docs/normalizer.md``)."""
    return parse_structure2(text).text


@functools.lru_cache(maxsize=16384)
def normalize_quote2(text: str) -> str:
    """A quote under ``tracer-norm/2``: the document normalizer, memoized."""
    return normalize2(text)


_DEST_ONLY: Final = re.compile(r"\]\([^)]*\)|<[^<>]*>|(?:https?|ftp)://\S+|[\[\]]")


def words(text: str) -> str:
    """The rendered words of a normalized text, for proposing successors only.

    Link destinations, tags and URLs are dropped, so a link wrapped around unchanged
    words does not push a successor below the similarity cut-off. Never used to decide
    ``verified`` or ``moved``.
    """
    return render_inline(_DEST_ONLY.sub(" ", text))
