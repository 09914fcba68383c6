"""The chunk a passage is signed as cut by: the reference chunker only for its own chunk.

`tracer-para-chunker/1` is the engine's chunker; claiming it for a text that is not its
chunk at the passage's locator would sign a fact the vault's check then refutes, so it
is claimed only when the text is that chunk, and a pipeline's own chunk id is otherwise
signed with the chunker the pipeline names, or `unspecified`.
"""

from __future__ import annotations

from tracer.engine.textnorm import CHUNKER_VERSION, normalize_quote, parse_structure
from tracer.engine.textnorm2 import NORMALIZER_V2, parse_structure2
from tracer.producer import model as m
from tracer.producer.errors import RecordError
from tracer.producer.locate import Locator, chunks
from tracer.producer.model import Chunker, SourceRevision

__all__ = ["UNSPECIFIED_CHUNKER", "chunk_claim", "reference_chunk"]

#: the chunker recorded for a pipeline's own chunk id when the pipeline does not name one
UNSPECIFIED_CHUNKER = "unspecified"
#: made once: a Chunker checks its parameters through RFC 8785 when it is made
_REFERENCE = Chunker()
_UNSPECIFIED = Chunker(UNSPECIFIED_CHUNKER)


def reference_chunk(content: str, text: str, loc: Locator, version: str) -> int | None:
    """The index of the `tracer-para-chunker/1` chunk the text is, at its locator; None
    when it is not one. The chunker is defined over `tracer-norm/1` blocks: under `/2`
    the `/1` block is the one the located `/2` block lies in (`Structure2.parent`)."""
    if version != NORMALIZER_V2:
        return next(
            (
                c.chunk_index
                for c in chunks(content)
                if (c.locator.char_start, c.locator.char_end) == (loc.char_start, loc.char_end)
            ),
            None,
        )
    s2 = parse_structure2(content)
    block = s2.block_at(loc.char_start)
    if block is None:
        return None
    s1 = parse_structure(content)
    b1 = s1.blocks[s2.parent[s2.blocks.index(block)]]
    if b1.is_heading or b1.text != normalize_quote(text):
        return None
    return next(n for n, b in enumerate(s1.paragraphs()) if b is b1)


def chunk_claim(
    revision: SourceRevision, index: int | None, chunk_id: str | None, chunker: Chunker | None, what: str
) -> tuple[str, Chunker]:
    """The chunk id and chunker a passage is signed with; a reference claim is checked.

    `tracer-para-chunker/1` is claimed only for the reference chunk at the passage's
    locator (given or defaulted). A pipeline chunk id with the chunker left out is
    signed as `unspecified` when the text is not that chunk: the SDK does not know
    which splitter cut it and never says it was tracer's.
    """
    if chunker is None:
        chunker = _REFERENCE if index is not None or chunk_id is None else _UNSPECIFIED
    if chunker.version == CHUNKER_VERSION and index is None:
        if chunk_id is None:
            raise RecordError(
                f"{what}: chunk_id is required (the text is not one {CHUNKER_VERSION} chunk); pass "
                "chunk_id= and chunker=Chunker('<your splitter>/<version>', {...})"
            )
        raise RecordError(
            f"{what}: the text is not one {CHUNKER_VERSION} chunk at its locator, so that chunker "
            "is not claimed; pass chunker=Chunker('<your splitter>/<version>', {...}) or leave it out"
        )
    if chunk_id is None:
        if index is None:
            raise RecordError(f"{what}: chunk_id is required with chunker {chunker.version!r}")
        chunk_id = f"{revision.document_id}#{index}"
    return m.name(chunk_id, "chunk_id"), chunker
