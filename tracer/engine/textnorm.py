"""The versioned text normalizer and the block structure of a markdown document.

Every locator in a trace manifest (heading path, paragraph, character range) and every
quote comparison is made on the normalized form, so that re-wrapping, trailing spaces,
extra blank lines, CRLF and NFD/NFC differences between revisions can never be mistaken
for a change of content, while any change of words always is.

The contract of ``tracer-norm/1``:

* Unicode NFC.
* The text is cut into blocks at blank lines (empty or whitespace-only lines). Inside a
  block every run of whitespace (newlines, tabs, NBSP and the other Unicode spaces) is
  folded to one ASCII space and the block is stripped. Empty blocks are dropped and the
  blocks are joined with ``"\\n\\n"``.
* Two markdown refinements, needed for the heading path to mean anything: an ATX heading
  line is always a block of its own (markdown lets a heading sit directly above its
  paragraph), and a fenced code block is always one block from its opening to its closing
  fence, blank lines included, with no headings inside it (so a shell ``# comment`` in a
  runbook is not a section).

Both refinements are decided on the whitespace-folded line, which makes the structure a
function of the normalized text alone: ``parse_structure(normalize(t))`` describes the
same blocks as ``parse_structure(t)``. That is what lets a stored normalized revision
be re-parsed later without drift. The price is that a re-wrap which moves ``#`` or a
code fence to the start of a line changes the normalized form; in markdown it changes
the document's meaning too.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

__all__ = [
    "CHUNKER_VERSION",
    "NORMALIZER_VERSION",
    "Block",
    "Chunk",
    "Structure",
    "chunk_document",
    "fold_whitespace",
    "normalize",
    "normalize_quote",
    "parse_structure",
]

NORMALIZER_VERSION = "tracer-norm/1"
CHUNKER_VERSION = "tracer-para-chunker/1"

BLOCK_SEPARATOR = "\n\n"

_ATX = re.compile(r"(#{1,6})(?: (.*))?")
_ATX_CLOSING = re.compile(r"(?:^| )#+$")
_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})(.*)")


def fold_whitespace(text: str) -> str:
    """One ASCII space per whitespace run, so wrapping and spacing never count as change."""
    return " ".join(text.split())


def _atx_heading(folded_line: str) -> tuple[int, str] | None:
    m = _ATX.fullmatch(folded_line)
    if m is None:
        return None
    title = _ATX_CLOSING.sub("", m.group(2) or "").strip()
    return len(m.group(1)), title


def _fence_opening(folded_line: str) -> tuple[str, int] | None:
    # The rest of an opening line may not contain the fence character at all. CommonMark
    # allows tildes in a tilde fence's info string; refusing them is what guarantees that
    # a closed fence, once folded onto one line, can never be read as an opening again.
    m = _FENCE_OPEN.fullmatch(folded_line)
    if m is None:
        return None
    run = m.group(1)
    if run[0] in m.group(2):
        return None
    return run[0], len(run)


def _closes_fence(folded_line: str, fence: tuple[str, int]) -> bool:
    char, length = fence
    return len(folded_line) >= length and folded_line == char * len(folded_line)


@dataclass(frozen=True)
class _RawBlock:
    text: str
    heading: tuple[int, str] | None


def _split_blocks(text: str) -> list[_RawBlock]:
    blocks: list[_RawBlock] = []
    pending: list[str] = []
    fence: tuple[str, int] | None = None

    def flush() -> None:
        if pending:
            blocks.append(_RawBlock(" ".join(pending), None))
            pending.clear()

    for line in unicodedata.normalize("NFC", text).splitlines():
        folded = fold_whitespace(line)
        if fence is not None:
            if folded:
                pending.append(folded)
            if _closes_fence(folded, fence):
                flush()
                fence = None
            continue
        if not folded:
            flush()
            continue
        opening = _fence_opening(folded)
        if opening is not None:
            flush()
            pending.append(folded)
            fence = opening
            continue
        heading = _atx_heading(folded)
        if heading is not None:
            flush()
            blocks.append(_RawBlock(folded, heading))
            continue
        pending.append(folded)
    flush()
    return blocks


def normalize(text: str) -> str:
    """The ``tracer-norm/1`` form: the only text that locators and quotes refer to."""
    return BLOCK_SEPARATOR.join(b.text for b in _split_blocks(text))


@functools.lru_cache(maxsize=16384)
def normalize_quote(text: str) -> str:
    """Quotes use the document normalizer unchanged, since a quote may span paragraphs.

    Memoized: popular chunks are quoted by many answers, and relocation normalizes the
    quote it is handed once more (the normalizer is idempotent, so that is a cache hit).
    """
    return normalize(text)


@dataclass(frozen=True)
class Block:
    """One block of normalized text and where it sits in the document's outline.

    ``index`` counts paragraphs (non-heading blocks) over the whole document; a heading
    block carries the index the next paragraph will get, so that indices stay monotone.
    """

    index: int
    heading_path: tuple[str, ...]
    is_heading: bool
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Structure:
    """Normalized text plus its blocks, for turning character offsets into locators."""

    text: str
    blocks: tuple[Block, ...]

    def _last_starting_at_or_before(self, offset: int) -> int:
        return bisect_right(self.blocks, offset, key=lambda b: b.start) - 1

    def heading_path_at(self, offset: int) -> tuple[str, ...]:
        """The outline in force at ``offset``; a separator belongs to the block before it."""
        i = self._last_starting_at_or_before(offset)
        return self.blocks[i].heading_path if i >= 0 else ()

    def block_at(self, offset: int) -> Block | None:
        i = self._last_starting_at_or_before(offset)
        if i >= 0 and offset < self.blocks[i].end:
            return self.blocks[i]
        return None

    def paragraphs(self) -> tuple[Block, ...]:
        return tuple(b for b in self.blocks if not b.is_heading)


@functools.lru_cache(maxsize=2048)
def parse_structure(text: str) -> Structure:
    """Normalize, then assign every block its heading path and paragraph index."""
    stack: list[tuple[int, str]] = []
    blocks: list[Block] = []
    pieces: list[str] = []
    offset = 0
    paragraph = 0
    for raw in _split_blocks(text):
        block_text = raw.text
        if blocks:
            offset += len(BLOCK_SEPARATOR)
        if raw.heading is not None:
            level, title = raw.heading
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
        path = tuple(title for _, title in stack)
        end = offset + len(block_text)
        blocks.append(
            Block(
                index=paragraph,
                heading_path=path,
                is_heading=raw.heading is not None,
                start=offset,
                end=end,
                text=block_text,
            )
        )
        pieces.append(block_text)
        if raw.heading is None:
            paragraph += 1
        offset = end
    return Structure(text=BLOCK_SEPARATOR.join(pieces), blocks=tuple(blocks))


@dataclass(frozen=True)
class Chunk:
    chunk_index: int
    heading_path: tuple[str, ...]
    paragraph: int
    start: int
    end: int
    text: str


def chunk_document(text: str) -> list[Chunk]:
    """The reference chunker ``tracer-para-chunker/1``: one chunk per paragraph block.

    Fixtures and the sample vault are built with it, so its locators are exactly the
    ones relocation reasons about.
    """
    structure = parse_structure(text)
    return [
        Chunk(
            chunk_index=n,
            heading_path=b.heading_path,
            paragraph=b.index,
            start=b.start,
            end=b.end,
            text=b.text,
        )
        for n, b in enumerate(structure.paragraphs())
    ]
