"""Locators computed from the revision text, by tracer's own chunker and normalizer.

There is one implementation of the block rules: `tracer.engine.textnorm`. This module
only asks it questions, so a locator the SDK writes is, by construction, the locator
`tracer verify` and `tracer trace` check (`docs/chunking.md` states the rules).

A locator is valid when the normalized revision, sliced at `[char_start, char_end)`,
equals the normalized passage (what `tracer verify` checks); `locate` finds that slice.
Both versions the engine checks are offered (`normalizer=`): `tracer-norm/1` (these
functions' default, so a locator computed here matches what older callers recorded)
and `tracer-norm/2`, which reads Markdown-only edits as no change; the recorder signs
`DEFAULT_NORMALIZER` (`/2`) unless told otherwise. The reference chunker
`tracer-para-chunker/1` is defined over `/1` blocks whichever version locates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.crypto import sha256_hex
from store.records import Locator
from tracer.engine.normalizers import KNOWN, Normalizer
from tracer.engine.textnorm import (
    CHUNKER_VERSION,
    NORMALIZER_VERSION,
    Structure,
    parse_structure,
)
from tracer.engine.textnorm2 import NORMALIZER_V2
from tracer.producer.errors import LocateError

#: what the recorder signs unless told otherwise: Markdown-only edits are no change
DEFAULT_NORMALIZER = NORMALIZER_V2

__all__ = [
    "CHUNKER_VERSION",
    "DEFAULT_NORMALIZER",
    "NORMALIZER_VERSION",
    "Locator",
    "RevisionChunk",
    "chunk_report",
    "chunks",
    "locate",
    "normalizer",
    "occurrences",
]


@dataclass(frozen=True, slots=True)
class RevisionChunk:
    """One chunk of the reference chunker `tracer-para-chunker/1`: a paragraph block."""

    chunk_index: int
    text: str
    locator: Locator


def chunks(revision_text: str) -> tuple[RevisionChunk, ...]:
    """The reference chunker's chunks of a revision: one per paragraph block, in order."""
    structure = parse_structure(revision_text)
    return tuple(
        RevisionChunk(n, b.text, Locator(b.heading_path, b.index, b.start, b.end))
        for n, b in enumerate(structure.paragraphs())
    )


def normalizer(version: str) -> Normalizer:
    """The engine's normalizer of this version; `LocateError` for one it does not know."""
    norm = KNOWN.get(version)
    if norm is None:
        raise LocateError(f"normalizer {version!r}: expected one of {', '.join(sorted(KNOWN))}")
    return norm


def occurrences(
    revision_text: str, passage_text: str, *, normalizer_version: str = NORMALIZER_VERSION
) -> tuple[Locator, ...]:
    """Every place (overlapping ones too) where the normalized passage occurs."""
    norm = normalizer(normalizer_version)
    structure = norm.structure(revision_text)
    quote = norm.quote(passage_text)
    if not quote:
        return ()
    found: list[Locator] = []
    i = structure.text.find(quote)
    while i >= 0:
        found.append(_locator_at(structure, i, i + len(quote)))
        i = structure.text.find(quote, i + 1)
    return tuple(found)


def _locator_at(structure: Structure, start: int, end: int) -> Locator:
    # A normalized quote never starts with whitespace, so `start` lies inside a block.
    block = structure.block_at(start)
    if block is None:  # pragma: no cover - see above
        raise LocateError(f"offset {start} falls between blocks")
    return Locator(structure.heading_path_at(start), block.index, start, end)


def locate(
    revision_text: str,
    passage_text: str,
    *,
    occurrence: int | None = None,
    near: int | None = None,
    what: str = "passage",
    normalizer_version: str = NORMALIZER_VERSION,
) -> Locator:
    """The locator of `passage_text` in `revision_text`.

    A passage that occurs once is located there. One that occurs several times needs a
    choice: `occurrence` (0-based, in document order) or `near`, a character offset in
    the *raw* revision text such as LangChain's `start_index` or LlamaIndex's
    `start_char_idx`; the occurrence closest to where that offset lands after
    normalization is taken. Either way the result is checked by the engine.
    `normalizer_version` says whose coordinates (`tracer-norm/1` or `/2`).
    """
    norm = normalizer(normalizer_version)
    if not norm.quote(passage_text):
        raise LocateError(f"{what}: the text is empty once normalized ({norm.version})")
    found = occurrences(revision_text, passage_text, normalizer_version=norm.version)
    if not found:
        raise LocateError(
            f"{what}: the text does not occur in the revision, even after normalization "
            f"({norm.version}); was it cut from another revision or rewritten?"
        )
    if occurrence is not None:
        if not 0 <= occurrence < len(found):
            raise LocateError(
                f"{what}: occurrence {occurrence} asked for, the text occurs {len(found)} time(s)"
            )
        chosen = found[occurrence]
    elif len(found) == 1:
        chosen = found[0]
    elif near is not None:
        if not 0 <= near <= len(revision_text):
            raise LocateError(f"{what}: near={near} is outside the revision (0..{len(revision_text)})")
        target = _normalized_offset(norm, revision_text, near)
        chosen = min(found, key=lambda loc: (abs(loc.char_start - target), loc.char_start))
    else:
        starts = ", ".join(str(loc.char_start) for loc in found[:10])
        raise LocateError(
            f"{what}: the text occurs {len(found)} times (at normalized offsets {starts}); "
            "pass occurrence= or near= to say which one was retrieved"
        )
    # The engine's check (currency.transform): the normalized revision at the locator is
    # the normalized passage. True by construction; kept so a change there cannot drift.
    if norm.structure(revision_text).text[chosen.char_start : chosen.char_end] != norm.quote(passage_text):
        raise LocateError(f"{what}: the computed locator does not hold the passage")  # pragma: no cover
    return chosen


def _normalized_offset(norm: Normalizer, revision_text: str, raw_offset: int) -> int:
    """Roughly where a raw offset lands in the normalized text (only to pick between
    occurrences of one passage; the locator itself is always an exact match)."""
    before = norm.structure(revision_text[:raw_offset]).text
    return len(before) + (2 if before else 0)


def chunk_report(text: str) -> dict[str, Any]:
    """What `tracer chunk --json` prints and what the vectors in docs/vectors/chunking hold."""
    structure = parse_structure(text)
    blocks = []
    for n, b in enumerate(structure.blocks):
        blocks.append(
            {
                "block": n,
                "kind": "heading" if b.is_heading else "paragraph",
                "heading_path": list(b.heading_path),
                "paragraph": b.index,
                "char_start": b.start,
                "char_end": b.end,
                "text": b.text,
                "sha256": sha256_hex(b.text.encode("utf-8")),
            }
        )
    return {
        "normalizer_version": NORMALIZER_VERSION,
        "chunker_version": CHUNKER_VERSION,
        "input_sha256": sha256_hex(text.encode("utf-8")),
        "normalized_sha256": sha256_hex(structure.text.encode("utf-8")),
        "normalized_length": len(structure.text),
        "normalized": structure.text,
        "blocks": blocks,
        "chunks": [
            {
                "chunk_index": c.chunk_index,
                **c.locator.to_json(),
                "text": c.text,
                "sha256": sha256_hex(c.text.encode("utf-8")),
            }
            for c in chunks(text)
        ],
    }
