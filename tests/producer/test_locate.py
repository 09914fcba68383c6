"""Locators come from the engine's own chunker and pass the engine's own checks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.producer.conftest import RETURNS, SHIPPING
from tracer.engine.relocate import VERIFIED, Locator, check_same_revision
from tracer.engine.textnorm import chunk_document, normalize, normalize_quote
from tracer.producer import LocateError, chunks, locate, occurrences


def _engine_verifies(revision: str, passage: str, loc: object) -> bool:
    assert hasattr(loc, "char_start")
    engine = Locator(loc.heading_path, loc.paragraph, loc.char_start, loc.char_end)  # type: ignore[attr-defined]
    return check_same_revision(passage, engine, revision).state == VERIFIED


def test_chunks_are_the_reference_chunker_s() -> None:
    for doc in (RETURNS, SHIPPING):
        ours = [(c.chunk_index, c.text, c.locator.heading_path, c.locator.paragraph) for c in chunks(doc)]
        ref = [(c.chunk_index, c.text, c.heading_path, c.paragraph) for c in chunk_document(doc)]
        assert ours == ref
        for c in chunks(doc):
            assert locate(doc, c.text) == c.locator
            assert _engine_verifies(doc, c.text, c.locator)


def test_a_split_across_paragraphs_and_a_rewrap_still_locate() -> None:
    # What a fixed-size splitter returns: raw text, line breaks and all, across blocks.
    raw = SHIPPING[SHIPPING.index("refunded in full") : SHIPPING.index("Both track")]
    loc = locate(SHIPPING, raw)
    assert normalize(SHIPPING)[loc.char_start : loc.char_end] == normalize_quote(raw)
    assert loc.heading_path == ("Shipping", "Lost parcels") and loc.paragraph == 0
    assert _engine_verifies(SHIPPING, raw, loc)
    rewrapped = "We ship with\n   two carriers. Both track every parcel."
    assert locate(SHIPPING, rewrapped).heading_path == ("Shipping", "Carriers")


def test_what_does_not_occur_is_refused() -> None:
    for bad in ("", "   \n", "We ship with three carriers."):
        try:
            locate(SHIPPING, bad)
        except LocateError as exc:
            assert "empty" in str(exc) or "does not occur" in str(exc)
        else:
            raise AssertionError(bad)


_WORDS = st.sampled_from(["# Intro", "## Terms", "Refunds", "within", "30", "days.", "```", "- item", "ok"])
_SEP = st.sampled_from([" ", "\n", "\n\n", "  \t", "\r\n"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_WORDS, _SEP), min_size=1, max_size=25), st.data())
def test_any_located_substring_verifies_under_the_engine(
    parts: list[tuple[str, str]], data: st.DataObject
) -> None:
    doc = "".join(w + s for w, s in parts)
    i = data.draw(st.integers(0, len(doc) - 1))
    j = data.draw(st.integers(i + 1, len(doc)))
    piece = doc[i:j]
    found = occurrences(doc, piece)
    for n, loc in enumerate(found):
        assert locate(doc, piece, occurrence=n) == loc
        assert _engine_verifies(doc, piece, loc)
