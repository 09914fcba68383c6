"""The quote a passage is compared by: in the coordinates of the normalizer compared
under (`carry`), and what may be assumed of a cited revision whose text is gone
(`stand_in`).  Shared by today's currency and the answer-time check, so both compare
the same words."""

from __future__ import annotations

from store.records import Chain, Locator
from tracer.engine.normalizers import NORM1, Normalizer, carry_to_v2
from tracer.engine.textnorm import CHUNKER_VERSION

__all__ = ["carry", "stand_in"]


def carry(
    quote: str, loc: Locator, old: str | None, recorded: Normalizer, norm: Normalizer
) -> tuple[str, Locator]:
    """A recorded quote and locator in the coordinates of the normalizer compared under.

    `old` is the cited revision's text when it can be read. Only ``/1`` → ``/2`` is a
    carry; a passage recorded under the version compared under is returned as it is.
    """
    if recorded is norm:
        return quote, loc
    c = carry_to_v2(quote, loc.heading_path, loc.paragraph, loc.char_start, loc.char_end, old)
    return c.quote, Locator(c.heading_path, c.paragraph, c.char_start, c.char_end)


def stand_in(chain: Chain, quote: str, loc: Locator, norm: Normalizer = NORM1) -> str:
    """What relocation may assume about a cited revision whose text is gone (purged).

    relocate.py anchors an occurrence as firmly as the quote was anchored in the cited
    revision: a whole paragraph must still be a whole paragraph, so a qualified sentence
    ("... 60 EUR for trips inside the EU only") never passes for the old one ("... 60
    EUR").  Without the cited text there is nothing to anchor from and any substring
    would match.  A chunk of the reference paragraph chunker is a whole paragraph by
    construction, so for it a stand-in text holding the quote as one block at its
    recorded offset restores exactly that anchoring; for other chunkers nothing can be
    assumed and an empty text (plain substring matching) is used.
    """
    if chain.chunk.pipeline_version != CHUNKER_VERSION or loc.char_start < 3:
        return ""
    stand_in = "x" * (loc.char_start - 2) + "\n\n" + quote
    normalized = norm.structure(stand_in).text
    return stand_in if normalized[loc.char_start : loc.char_start + len(quote)] == quote else ""
