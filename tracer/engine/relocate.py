"""Currency of a historical quote against a later revision of its source.

The question is "does the source still say this today?", answered so that a reviewer can
re-derive every verdict by hand:

* ``verified`` and ``moved`` are decided only by exact occurrences of the normalized
  quote in the normalized later text, plus a structural check on the heading path. A
  similarity score never produces them; it may only point at the passage most likely to
  be the quote's successor when the verdict is already ``stale``.
* ``ambiguous`` is returned whenever the structure does not single out one occurrence:
  guessing between two places that both say the sentence would be a silent claim about
  which one the answer relied on.
* ``old_excerpt`` is always the historical quote exactly as given, and
  ``current_excerpt`` is always a slice of the normalized later text. The two never trade
  places (the never-substitute rule).

An occurrence counts only if it is anchored at least as firmly as the quote was in the
cited revision: a quote that was a whole paragraph must still be a whole paragraph, and a
quote that began and ended on word boundaries must still do so. Otherwise
"Refunds within 30 days." would be found inside "Refunds within 30 days, except sale
items." or "130 days", and a qualified or altered statement would pass as current. A
quote that was cut mid-word in the cited revision (a fixed-size chunker) keeps that
freedom. When the quote cannot be found at its locator in the cited revision, there is no
anchoring evidence and a plain substring match is used.

The callers decide ``unavailable`` and ``unchecked``; this module never returns them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

from store.records import Locator
from tracer.engine.normalizers import NORM1, Normalizer
from tracer.engine.textnorm import Block, Structure
from tracer.engine.vocabulary import Currency, CurrencyReason

__all__ = [
    "AMBIGUOUS",
    "MOVED",
    "REASONS",
    "SIMILARITY_THRESHOLD",
    "STALE",
    "STATES",
    "VERIFIED",
    "Locator",
    "Relocation",
    "check_same_revision",
    "headings_compatible",
    "relocate",
    "renumbered",
    "still_says",
]

VERIFIED: Final = Currency.VERIFIED
MOVED: Final = Currency.MOVED
STALE: Final = Currency.STALE
AMBIGUOUS: Final = Currency.AMBIGUOUS
STATES: Final = frozenset({VERIFIED, MOVED, STALE, AMBIGUOUS})

REASONS: Final = frozenset(
    {
        CurrencyReason.AT_LOCATOR,
        CurrencyReason.NOT_AT_LOCATOR,
        CurrencyReason.NORMALIZED_IDENTICAL,
        CurrencyReason.UNCHANGED_AT_LOCATOR,
        CurrencyReason.RELOCATED_SAME_SECTION,
        CurrencyReason.RELOCATED_COMPATIBLE_SECTION,
        CurrencyReason.RELOCATED_HEADING_AGREES,
        CurrencyReason.RELOCATED_RENUMBERED_SECTION,
        CurrencyReason.MULTIPLE_MATCHES,
        CurrencyReason.UNIQUE_MATCH_INCOMPATIBLE_SECTION,
        CurrencyReason.QUOTE_CHANGED,
        CurrencyReason.QUOTE_REMOVED,
        CurrencyReason.EMPTY_QUOTE,
    }
)

SIMILARITY_THRESHOLD: Final = 0.6
MAX_PROPOSALS: Final = 5
_TOKEN: Final = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Relocation:
    state: Currency
    reason: CurrencyReason
    locator: Locator | None
    candidates: tuple[Locator, ...]
    current_excerpt: str | None
    old_excerpt: str


def _fold_heading(title: str) -> str:
    return " ".join(title.split()).casefold()


def _fold_path(path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_fold_heading(t) for t in path)


# An enumeration label in front of a heading's words. Renumbering a legal text changes
# these and nothing else, so only shapes that are nothing but a label count:
# - a section number of 1-3 digits per level followed by "." or ")": "9.", "10.", "2)",
#   "4.2.", "2.3.1)"; a 4-digit number is a year ("2023. Fees" is not a label);
# - a single letter or a well-formed roman numeral from i to xcix (so "civil" and "mild"
#   are words) followed by "." or ")": "R.", "A)", "IV.", "xiv)";
# - any of those in parentheses: "(a)", "(iv)", "(3)";
# - a dotted section number with no terminator, "4.2 Data retention", only when the
#   title goes on with a capital letter: "1.5 percent fee" is a quantity.
# The label must be followed by a space and more of the title; ":" is never a terminator
# ("2023: Fee schedule", "Civil: Remedies" are words).
_SECTION_NUMBER: Final = r"\d{1,3}(?:\.\d{1,3})*"
_ROMAN: Final = r"(?=[ivxl])(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_LABEL_CORE: Final = rf"(?:{_SECTION_NUMBER}|{_ROMAN}|[a-z])"
_LABEL: Final = re.compile(
    rf"(?:\({_LABEL_CORE}\)|{_LABEL_CORE}[.)]|(?P<bare>\d{{1,3}}(?:\.\d{{1,3}})+)) +(?=(?P<next>\S))",
    re.IGNORECASE | re.ASCII,
)


def _strip_label(title: str) -> str:
    """A heading title without its enumeration label (``R. Changes`` -> ``Changes``)."""
    folded = " ".join(title.split())
    m = _LABEL.match(folded)
    if m is None or (m.group("bare") is not None and not m.group("next").isupper()):
        return folded
    return folded[m.end() :]


def _unlabelled(path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_fold_heading(_strip_label(t)) for t in path)


def headings_compatible(recorded: tuple[str, ...], found: tuple[str, ...]) -> bool:
    """Whether ``found`` can be the recorded section after an edit of the outline.

    Compatible means: equal up to case and whitespace, or the same innermost heading, or
    the recorded path survives as a prefix (subsections were added) or a suffix (the
    section was nested under a new parent) of the new one. An empty recorded path carries
    no structural claim and so is compatible with everything.
    """
    return _compatible(_fold_path(recorded), _fold_path(found))


def renumbered(recorded: tuple[str, ...], found: tuple[str, ...]) -> bool:
    """Whether ``found`` is the recorded section with only its enumeration labels changed.

    The paths are compared as `headings_compatible` does once every heading has lost its
    label (``R. Changes to These Terms`` and ``Q. Changes to These Terms`` agree); a
    heading whose words or numbers changed is not renumbering (``2023: Fee schedule``,
    ``1.5 percent fee``, ``Civil: Remedies`` carry no label; see ``_LABEL``).
    """
    return not headings_compatible(recorded, found) and _compatible(_unlabelled(recorded), _unlabelled(found))


def _compatible(rec: tuple[str, ...], new: tuple[str, ...]) -> bool:
    if rec == new:
        return True
    if rec and new and rec[-1] == new[-1]:
        return True
    n = len(rec)
    return n <= len(new) and (new[:n] == rec or new[len(new) - n :] == rec)


class _Edge(IntEnum):
    OPEN = 0
    WORD = 1
    BLOCK = 2


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("M")


def _left_edge(text: str, start: int) -> _Edge:
    if start == 0 or text[start - 1] == "\n":
        return _Edge.BLOCK
    if _is_word(text[start - 1]) and _is_word(text[start]):
        return _Edge.OPEN
    return _Edge.WORD


def _right_edge(text: str, end: int) -> _Edge:
    if end == len(text) or text[end] == "\n":
        return _Edge.BLOCK
    if _is_word(text[end - 1]) and _is_word(text[end]):
        return _Edge.OPEN
    return _Edge.WORD


@dataclass(frozen=True)
class _Anchor:
    left: _Edge
    right: _Edge

    def admits(self, text: str, start: int, end: int) -> bool:
        return _left_edge(text, start) >= self.left and _right_edge(text, end) >= self.right


_UNANCHORED: Final = _Anchor(_Edge.OPEN, _Edge.OPEN)


def _at_locator(quote: str, locator: Locator, text: str) -> bool:
    start, end = locator.char_start, locator.char_end
    return 0 <= start <= end <= len(text) and text[start:end] == quote


def _anchor_from(quote: str, locator: Locator, structure: Structure) -> _Anchor:
    if not _at_locator(quote, locator, structure.text):
        return _UNANCHORED
    text = structure.text
    return _Anchor(_left_edge(text, locator.char_start), _right_edge(text, locator.char_end))


def _occurrences(quote: str, structure: Structure, anchor: _Anchor) -> list[tuple[int, int]]:
    # Overlapping search: a non-overlapping scan could step over the very occurrence
    # that sits at the recorded locator.
    text = structure.text
    found: list[tuple[int, int]] = []
    i = text.find(quote)
    while i >= 0:
        end = i + len(quote)
        if anchor.admits(text, i, end):
            found.append((i, end))
        i = text.find(quote, i + 1)
    return found


def _locate(structure: Structure, start: int, end: int) -> Locator:
    # A normalized quote never starts with whitespace, so ``start`` lies inside a block.
    block = structure.block_at(start)
    return Locator(
        heading_path=structure.heading_path_at(start),
        paragraph=block.index if block is not None else -1,
        char_start=start,
        char_end=end,
    )


def _block_locator(block: Block) -> Locator:
    return Locator(block.heading_path, block.index, block.start, block.end)


def _result(
    state: Currency,
    reason: CurrencyReason,
    quote: str,
    *,
    locator: Locator | None = None,
    candidates: tuple[Locator, ...] = (),
    current_excerpt: str | None = None,
) -> Relocation:
    return Relocation(
        state=state,
        reason=reason,
        locator=locator,
        candidates=candidates,
        current_excerpt=current_excerpt,
        old_excerpt=quote,
    )


# What similarity leaves out: link destinations, autolinks and tags, bare URLs, and the
# Markdown marker characters (a successor that only gained a link or emphasis around the
# same words must still look like the quote).
_NOT_WORDS: Final = re.compile(r"\]\([^)]*\)|<[^<>]*>|(?:https?|ftp)://\S+")
_MARKERS: Final = str.maketrans(dict.fromkeys("*_[]\\#", " "))
#: token -> one character; shared by every proposal of a process, reset when it grows large
_VOCABULARY: dict[str, str] = {}
_VOCABULARY_LIMIT: Final = 800_000


def _tokens(text: str) -> tuple[str, ...]:
    """Words and punctuation of the rendered words (link targets and markup left out)."""
    return tuple(_TOKEN.findall(_NOT_WORDS.sub(" ", text).translate(_MARKERS)))


@functools.lru_cache(maxsize=65536)
def _interned(text: str) -> str:
    """A text's tokens as one character each, so the native matcher compares token sequences."""
    ids = _VOCABULARY
    out = []
    for t in _tokens(text):
        ch = ids.get(t)
        if ch is None:
            n = len(ids) + 0x100
            ch = ids[t] = chr(n if n < 0xD800 else n + 0x800)
        out.append(ch)
    return "".join(out)


def _similarity(quote: str, window: str) -> float:
    """Similarity of two token strings, 0.0 when the threshold is out of reach.

    Words and punctuation marks are compared rather than characters: on characters, the
    stray letters every English text shares let an unrelated neighbouring block lift a
    shortened paragraph over the threshold. The ratio is the Indel similarity
    ``2·LCS / (len(quote) + len(window))`` (rapidfuzz, in native code).

    A window longer than the quote (a sentence quoted out of a paragraph that has since
    grown) is also scored on its quote-length stretch that aligns best with the quote,
    since the plain ratio of a short sequence against a long one cannot reach the
    threshold however faithful it is. Every window holding that stretch then scores the
    same, and the caller's preference for the smallest window picks the tightest excerpt.
    No stretch can share more than the LCS of the whole window with the quote, so
    ``2·LCS / (LCS + len(quote))`` bounds every stretch's ratio and lets a window that
    cannot reach the threshold be skipped without aligning.
    """
    cut = SIMILARITY_THRESHOLD * 100
    if len(window) <= len(quote):
        return fuzz.ratio(quote, window, score_cutoff=cut) / 100
    lcs = LCSseq.similarity(quote, window)
    if not quote or 2.0 * lcs / (lcs + len(quote)) < SIMILARITY_THRESHOLD:
        return 0.0
    best = max(fuzz.ratio(quote, window), fuzz.partial_ratio(quote, window))
    return best / 100 if best >= cut else 0.0


@dataclass(frozen=True)
class _Proposal:
    tier: int
    score: float
    size: int
    distance: int
    locator: Locator

    def key(self) -> tuple[int, float, int, int, int, int]:
        loc = self.locator
        return (self.tier, -self.score, self.size, self.distance, loc.char_start, loc.char_end)


def _proposals(quote: str, locator: Locator, structure: Structure) -> list[_Proposal]:
    blocks = structure.blocks
    # Also one block fewer and one more than the quote spans, so that a paragraph split
    # or merged since the cited revision can still be proposed.
    quote_blocks = quote.count("\n\n") + 1
    sizes = sorted({max(1, quote_blocks - 1), quote_blocks, quote_blocks + 1})
    if len(_VOCABULARY) > _VOCABULARY_LIMIT:  # before, never during, one proposal
        _VOCABULARY.clear()
        _interned.cache_clear()
    quote_tokens = _interned(quote)
    block_tokens = [_interned(b.text) for b in blocks]
    quote_set = set(quote_tokens)
    found: list[_Proposal] = []
    for size in sizes:
        for i in range(len(blocks) - size + 1):
            window = blocks[i : i + size]
            if all(b.is_heading for b in window):
                continue
            window_tokens = "".join(block_tokens[i : i + size])
            # a window sharing no token with the quote cannot be its successor
            if quote_set.isdisjoint(window_tokens):
                continue
            score = _similarity(quote_tokens, window_tokens)
            if score < SIMILARITY_THRESHOLD:
                continue
            start, end = window[0].start, window[-1].end
            path = window[0].heading_path
            loc = Locator(path, window[0].index, start, end)
            tier = _tier(locator.heading_path, path)
            found.append(_Proposal(tier, score, size, abs(window[0].index - locator.paragraph), loc))
    found.sort(key=_Proposal.key)
    return found


def _tier(cited: tuple[str, ...], path: tuple[str, ...]) -> int:
    """How well a proposal's heading path agrees with the cited one: 0 the same, 1
    compatible or renumbered, 2 neither."""
    if path == cited:
        return 0
    if headings_compatible(cited, path) or renumbered(cited, path):
        return 1
    return 2


def _not_found(quote: str, normalized_quote: str, locator: Locator, structure: Structure) -> Relocation:
    """Rule 3: the quote is gone; propose its most likely successor, or show the section."""
    proposals = _proposals(normalized_quote, locator, structure)
    if proposals:
        chosen: list[Locator] = []
        for p in proposals:
            loc = p.locator
            if all(loc.char_end <= c.char_start or c.char_end <= loc.char_start for c in chosen):
                chosen.append(loc)
            if len(chosen) == MAX_PROPOSALS:
                break
        best = chosen[0]
        return _result(
            STALE,
            CurrencyReason.QUOTE_CHANGED,
            quote,
            locator=best,
            candidates=tuple(chosen),
            current_excerpt=structure.text[best.char_start : best.char_end],
        )
    rec = _unlabelled(locator.heading_path)
    section = [b for b in structure.paragraphs() if _unlabelled(b.heading_path) == rec]
    if not section:
        return _result(STALE, CurrencyReason.QUOTE_REMOVED, quote)
    nearest = min(section, key=lambda b: (abs(b.index - locator.paragraph), b.index))
    return _result(
        STALE,
        CurrencyReason.QUOTE_REMOVED,
        quote,
        locator=_block_locator(nearest),
        current_excerpt=nearest.text,
    )


def _same_revision(quote: str, normalized_quote: str, locator: Locator, structure: Structure) -> Relocation:
    if not normalized_quote:
        return _result(STALE, CurrencyReason.EMPTY_QUOTE, quote)
    anchor = _anchor_from(normalized_quote, locator, structure)
    occurrences = _occurrences(normalized_quote, structure, anchor)
    candidates = tuple(_locate(structure, s, e) for s, e in occurrences)
    if _at_locator(normalized_quote, locator, structure.text):
        here = _locate(structure, locator.char_start, locator.char_end)
        return _result(
            VERIFIED,
            CurrencyReason.AT_LOCATOR,
            quote,
            locator=here,
            candidates=candidates,
            current_excerpt=normalized_quote,
        )
    if occurrences:
        return _result(STALE, CurrencyReason.NOT_AT_LOCATOR, quote, candidates=candidates)
    return _not_found(quote, normalized_quote, locator, structure)


def check_same_revision(quote: str, locator: Locator, text: str, norm: Normalizer = NORM1) -> Relocation:
    """Check a quote against the revision it cites, when that revision is still current.

    Only the recorded character range can verify. Finding the quote elsewhere in the same
    revision means the recorded locator is wrong, which is a fault in the transformation
    trace, not a move: ``stale`` with reason ``not_at_locator`` and the places found.
    ``norm`` is the normalizer the quote, the locator and the text are compared under.
    """
    return _same_revision(quote, norm.quote(quote), locator, norm.structure(text))


def still_says(
    quote: str, locator: Locator, cited_text: str, later_text: str, norm: Normalizer = NORM1
) -> bool:
    """Whether a later revision still holds the quote, anchored as firmly (no verdict, no proposal).

    The cheap question behind "when did the source stop saying this?": at least one
    anchored occurrence of the normalized quote, as `relocate` would count it.
    """
    q = norm.quote(quote)
    if not q:
        return False
    later = norm.structure(later_text)
    return bool(_occurrences(q, later, _anchor_from(q, locator, norm.structure(cited_text))))


def relocate(
    quote: str, locator: Locator, cited_text: str, later_text: str, norm: Normalizer = NORM1
) -> Relocation:
    """Decide whether a later revision still says what the cited revision said.

    ``quote`` is the historical passage, ``locator`` its place in the normalized cited
    revision, ``norm`` the normalizer both are expressed in. In order: identical
    normalized revisions are checked as one revision (``normalized_identical``); then
    exact, anchored occurrences in the later revision decide between ``verified``,
    ``moved`` and ``ambiguous`` by heading path alone (labels such as ``R.`` or ``9.``
    aside: ``relocated_renumbered_section``); only when there is no occurrence does
    similarity come in, to show the likeliest successor beside a ``stale`` verdict
    (``quote_changed``) or, failing that, what the recorded section says now
    (``quote_removed``).
    """
    q = norm.quote(quote)
    cited = norm.structure(cited_text)
    later = norm.structure(later_text)
    if cited.text == later.text:
        return _normalized_identical(quote, q, locator, later)
    if not q:
        return _result(STALE, CurrencyReason.EMPTY_QUOTE, quote)

    occurrences = _occurrences(q, later, _anchor_from(q, locator, cited))
    if not occurrences:
        return _not_found(quote, q, locator, later)
    return _by_heading(quote, locator, later, [_locate(later, s, e) for s, e in occurrences])


def _normalized_identical(quote: str, q: str, locator: Locator, later: Structure) -> Relocation:
    """Identical normalized revisions are checked as one revision; a verified quote says why."""
    same = _same_revision(quote, q, locator, later)
    if same.state != VERIFIED:
        return same
    return _result(
        VERIFIED,
        CurrencyReason.NORMALIZED_IDENTICAL,
        quote,
        locator=same.locator,
        candidates=same.candidates,
        current_excerpt=same.current_excerpt,
    )


def _by_heading(quote: str, locator: Locator, later: Structure, found: list[Locator]) -> Relocation:
    """Exact, anchored occurrences decide by heading path alone: the same section, a
    compatible one, a renumbered one, or several places (ambiguous)."""
    candidates = tuple(found)
    same_section, agreeing, relabelled = _by_section(locator.heading_path, found)

    def placed(state: Currency, reason: CurrencyReason, loc: Locator) -> Relocation:
        return _placed(state, reason, quote, loc, candidates, later)

    if len(same_section) == 1:
        loc = same_section[0]
        if (loc.paragraph, loc.char_start, loc.char_end) == (
            locator.paragraph,
            locator.char_start,
            locator.char_end,
        ):
            return placed(VERIFIED, CurrencyReason.UNCHANGED_AT_LOCATOR, loc)
        return placed(MOVED, CurrencyReason.RELOCATED_SAME_SECTION, loc)
    if len(found) == 1:
        if agreeing:
            return placed(MOVED, CurrencyReason.RELOCATED_COMPATIBLE_SECTION, found[0])
        if relabelled:
            return placed(MOVED, CurrencyReason.RELOCATED_RENUMBERED_SECTION, found[0])
        return _result(
            AMBIGUOUS, CurrencyReason.UNIQUE_MATCH_INCOMPATIBLE_SECTION, quote, candidates=candidates
        )
    if len(agreeing) == 1:
        return placed(MOVED, CurrencyReason.RELOCATED_HEADING_AGREES, agreeing[0])
    if not agreeing and len(relabelled) == 1:
        return placed(MOVED, CurrencyReason.RELOCATED_RENUMBERED_SECTION, relabelled[0])
    return _result(AMBIGUOUS, CurrencyReason.MULTIPLE_MATCHES, quote, candidates=candidates)


def _by_section(
    cited: tuple[str, ...], found: list[Locator]
) -> tuple[list[Locator], list[Locator], list[Locator]]:
    """The occurrences in the cited section, in a compatible one, and in a renumbered one."""
    same_section = [loc for loc in found if loc.heading_path == cited]
    agreeing = [loc for loc in found if headings_compatible(cited, loc.heading_path)]
    relabelled = [loc for loc in found if renumbered(cited, loc.heading_path)]
    return same_section, agreeing, relabelled


def _placed(
    state: Currency,
    reason: CurrencyReason,
    quote: str,
    loc: Locator,
    candidates: tuple[Locator, ...],
    later: Structure,
) -> Relocation:
    """A verdict placing the quote at `loc` of the later revision, with its text there."""
    return _result(
        state,
        reason,
        quote,
        locator=loc,
        candidates=candidates,
        current_excerpt=later.text[loc.char_start : loc.char_end],
    )
