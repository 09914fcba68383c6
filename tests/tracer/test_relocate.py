"""Currency verdicts: the refund and runbook fixtures, the rule table, and properties."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tracer.engine.relocate import (
    AMBIGUOUS,
    MOVED,
    REASONS,
    STALE,
    STATES,
    VERIFIED,
    Locator,
    Relocation,
    check_same_revision,
    headings_compatible,
    relocate,
)
from tracer.engine.textnorm import Chunk, chunk_document, normalize, normalize_quote

SENTENCE = "Customers may request a refund within thirty days of delivery."

REV_A = f"""# Returns policy

## Refund window

{SENTENCE}

Refunds are paid to the original payment method within five business days.

## Exchanges

Items may be exchanged for a different size within sixty days.

## Contact

Write to returns@example.com or visit our Z\u00fcrich caf\u00e9 desk with your order number.
"""

INTRODUCTION = """## Introduction

This policy explains how returns, refunds and exchanges work for online orders.

"""

REV_B = REV_A.replace("## Refund window", INTRODUCTION + "## Refund window")
REV_C = REV_B.replace("thirty days", "fourteen days")
REV_D = REV_B + f"\n## Appendix\n\n{SENTENCE}\n"
REV_D_RENAMED = REV_D.replace("## Refund window", "## Money back")

REV_A_WHITESPACE = unicodedata.normalize(
    "NFD",
    REV_A.replace("within thirty days", "within  thirty\n   days")
    .replace("Exchanges\n", "Exchanges   \n\n\n")
    .replace("\n", "\r\n")
    .replace("Returns policy", "Returns\u00a0policy")
    + "\r\n\r\n   \r\n",
)

RUNBOOK_CONDITION = (
    "Restart the API pods with `kubectl rollout restart deployment/api`. Exception: in "
    "production, page the on-call SRE and wait for approval before restarting."
)

RUNBOOK = f"""# Restart runbook

## Restarting the API
{RUNBOOK_CONDITION}

```sh
# drain the node first
kubectl drain node-1
```

## Rollback

Roll back with `kubectl rollout undo deployment/api` if error rates stay high.
"""


def chunk_with(text: str, needle: str) -> Chunk:
    (chunk,) = [c for c in chunk_document(text) if needle in c.text]
    return chunk


def locator_of(chunk: Chunk) -> Locator:
    return Locator(chunk.heading_path, chunk.paragraph, chunk.start, chunk.end)


def refund_quote() -> tuple[str, Locator]:
    chunk = chunk_with(REV_A, "thirty days")
    assert chunk.text == SENTENCE
    return chunk.text, locator_of(chunk)


def at(text: str, loc: Locator | None) -> str:
    assert loc is not None
    return normalize(text)[loc.char_start : loc.char_end]


def assert_well_formed(r: Relocation, quote: str, later: str) -> None:
    assert r.state in STATES
    assert r.reason in REASONS
    assert r.old_excerpt == quote
    if r.current_excerpt is not None:
        assert r.current_excerpt in normalize(later)
    if r.state in (VERIFIED, MOVED):
        assert r.locator is not None
        assert at(later, r.locator) == normalize_quote(quote)
        assert r.current_excerpt == normalize_quote(quote)
        assert r.locator in r.candidates
    if r.state == AMBIGUOUS:
        assert r.locator is None
        assert r.current_excerpt is None
        assert r.candidates
    if r.locator is not None and r.current_excerpt is not None:
        assert at(later, r.locator) == r.current_excerpt


# --- the refund fixture ---------------------------------------------------------


def test_refund_a_against_itself_is_verified() -> None:
    quote, loc = refund_quote()
    r = relocate(quote, loc, REV_A, REV_A)
    assert (r.state, r.reason) == (VERIFIED, "normalized_identical")
    assert r.locator == loc
    assert_well_formed(r, quote, REV_A)


def test_refund_whitespace_only_edit_is_never_stale() -> None:
    quote, loc = refund_quote()
    assert REV_A_WHITESPACE != REV_A
    r = relocate(quote, loc, REV_A, REV_A_WHITESPACE)
    assert (r.state, r.reason) == (VERIFIED, "normalized_identical")
    assert r.locator == loc
    assert_well_formed(r, quote, REV_A_WHITESPACE)


def test_refund_b_inserted_introduction_moves_the_sentence() -> None:
    quote, loc = refund_quote()
    r = relocate(quote, loc, REV_A, REV_B)
    assert (r.state, r.reason) == (MOVED, "relocated_same_section")
    assert r.locator is not None
    assert r.locator.heading_path == ("Returns policy", "Refund window")
    assert r.locator.paragraph == loc.paragraph + 1
    assert r.locator.char_start > loc.char_start
    assert at(REV_B, r.locator) == SENTENCE
    assert r.candidates == (r.locator,)
    assert_well_formed(r, quote, REV_B)


def test_refund_c_fourteen_days_is_stale_with_both_excerpts() -> None:
    quote, loc = refund_quote()
    r = relocate(quote, loc, REV_A, REV_C)
    assert (r.state, r.reason) == (STALE, "quote_changed")
    assert r.old_excerpt == SENTENCE
    assert r.current_excerpt == SENTENCE.replace("thirty", "fourteen")
    assert "thirty" not in r.current_excerpt
    assert r.locator is not None
    assert r.locator.heading_path == ("Returns policy", "Refund window")
    assert_well_formed(r, quote, REV_C)


def test_refund_d_duplicate_in_appendix_resolved_by_heading() -> None:
    quote, loc = refund_quote()
    r = relocate(quote, loc, REV_A, REV_D)
    assert r.state == MOVED
    assert r.reason == "relocated_same_section"
    assert r.locator is not None
    assert r.locator.heading_path == ("Returns policy", "Refund window")
    assert [c.heading_path for c in r.candidates] == [
        ("Returns policy", "Refund window"),
        ("Returns policy", "Appendix"),
    ]
    assert_well_formed(r, quote, REV_D)


def test_refund_d_duplicate_without_heading_agreement_is_ambiguous() -> None:
    quote, loc = refund_quote()
    r = relocate(quote, loc, REV_A, REV_D_RENAMED)
    assert (r.state, r.reason) == (AMBIGUOUS, "multiple_matches")
    assert r.locator is None
    assert len(r.candidates) == 2
    assert_well_formed(r, quote, REV_D_RENAMED)


def test_refund_d_after_the_section_is_renamed_in_case_only() -> None:
    quote, loc = refund_quote()
    later = REV_D.replace("## Refund window", "## Refund  WINDOW")
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (MOVED, "relocated_heading_agrees")
    assert r.locator is not None
    assert r.locator.heading_path == ("Returns policy", "Refund WINDOW")
    assert len(r.candidates) == 2
    assert_well_formed(r, quote, later)


def test_refund_whole_history_in_order() -> None:
    quote, loc = refund_quote()
    verdicts = [
        (relocate(quote, loc, REV_A, later).state)
        for later in (REV_A, REV_A_WHITESPACE, REV_B, REV_C, REV_D, REV_D_RENAMED)
    ]
    assert verdicts == [VERIFIED, VERIFIED, MOVED, STALE, MOVED, AMBIGUOUS]


# --- the rule table -------------------------------------------------------------


def test_edit_after_the_quote_leaves_it_verified_at_its_locator() -> None:
    quote, loc = refund_quote()
    later = REV_A.replace("returns@example.com", "refunds@example.com")
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (VERIFIED, "unchanged_at_locator")
    assert r.locator == loc
    assert_well_formed(r, quote, later)


def test_unique_match_under_a_new_parent_is_compatible() -> None:
    quote, loc = refund_quote()
    later = REV_A.replace("# Returns policy", "# Customer service\n\n## Returns policy").replace(
        "## ", "### "
    )
    later = later.replace("### Returns policy", "## Returns policy")
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (MOVED, "relocated_compatible_section")
    assert r.locator is not None
    assert r.locator.heading_path == ("Customer service", "Returns policy", "Refund window")
    assert_well_formed(r, quote, later)


def test_unique_match_with_the_same_innermost_heading_is_compatible() -> None:
    quote, loc = refund_quote()
    later = REV_A.replace("# Returns policy", "# Refunds and returns")
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (MOVED, "relocated_compatible_section")
    assert_well_formed(r, quote, later)


def test_unique_match_in_an_unrelated_section_is_ambiguous() -> None:
    quote, loc = refund_quote()
    later = REV_A.replace("## Refund window", "## Money back")
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (AMBIGUOUS, "unique_match_incompatible_section")
    assert r.locator is None
    assert len(r.candidates) == 1
    assert r.candidates[0].heading_path == ("Returns policy", "Money back")
    assert_well_formed(r, quote, later)


def test_duplicate_inside_the_same_section_is_ambiguous_even_at_the_locator() -> None:
    quote, loc = refund_quote()
    later = REV_A.replace("## Exchanges", f"Repeated for emphasis:\n\n{SENTENCE}\n\n## Exchanges")
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (AMBIGUOUS, "multiple_matches")
    assert_well_formed(r, quote, later)


def test_removed_quote_shows_what_the_section_says_now() -> None:
    quote, loc = refund_quote()
    later = REV_A.replace(f"{SENTENCE}\n\n", "")
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (STALE, "quote_removed")
    assert r.current_excerpt is not None
    assert r.current_excerpt.startswith("Refunds are paid")
    assert r.locator is not None
    assert r.locator.heading_path == loc.heading_path
    assert r.candidates == ()
    assert_well_formed(r, quote, later)


def test_removed_section_leaves_no_current_excerpt() -> None:
    quote, loc = refund_quote()
    later = (
        REV_A.replace("## Refund window\n\n", "")
        .replace(f"{SENTENCE}\n\n", "")
        .replace("Refunds are paid to the original payment method within five business days.\n\n", "")
    )
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (STALE, "quote_removed")
    assert r.current_excerpt is None
    assert r.locator is None
    assert_well_formed(r, quote, later)


def test_changed_quote_that_moved_sections_is_still_proposed() -> None:
    quote, loc = refund_quote()
    later = REV_A.replace(f"{SENTENCE}\n\n", "").replace(
        "## Contact", "## Contact\n\n" + SENTENCE.replace("thirty", "forty-five")
    )
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (STALE, "quote_changed")
    assert r.current_excerpt is not None
    assert "forty-five" in r.current_excerpt
    assert_well_formed(r, quote, later)


def test_changed_sentence_inside_a_long_paragraph_is_proposed() -> None:
    padding = " ".join(f"Clause {n} says something unrelated to refunds." for n in range(12))
    cited = f"# Terms\n\nPreamble. {SENTENCE} {padding}\n"
    later = cited.replace("thirty", "fourteen")
    norm = normalize(cited)
    start = norm.index(SENTENCE)
    loc = Locator(("Terms",), 0, start, start + len(SENTENCE))
    r = relocate(SENTENCE, loc, cited, later)
    assert (r.state, r.reason) == (STALE, "quote_changed")
    assert r.current_excerpt is not None
    assert "fourteen days" in r.current_excerpt
    assert_well_formed(r, SENTENCE, later)


def test_empty_quote_is_never_verified() -> None:
    loc = Locator((), 0, 0, 0)
    for later in (REV_A, REV_B):
        r = relocate(" \n ", loc, REV_A, later)
        assert (r.state, r.reason) == (STALE, "empty_quote")
        assert r.old_excerpt == " \n "
    assert check_same_revision("", loc, REV_A).state == STALE


# --- anchoring: an occurrence must be as whole as the cited one -----------------


def test_paragraph_that_gained_a_qualification_is_stale() -> None:
    quote, loc = refund_quote()
    later = REV_A.replace(SENTENCE, SENTENCE + " Sale items are excluded.")
    r = relocate(quote, loc, REV_A, later)
    assert (r.state, r.reason) == (STALE, "quote_changed")
    assert r.current_excerpt == SENTENCE + " Sale items are excluded."
    assert_well_formed(r, quote, later)


def test_number_grown_by_a_digit_is_not_a_match() -> None:
    cited = "# Limits\n\n30 days is the limit.\n"
    later = "# Limits\n\n130 days is the limit.\n"
    (chunk,) = chunk_document(cited)
    r = relocate(chunk.text, locator_of(chunk), cited, later)
    assert r.state == STALE
    assert_well_formed(r, chunk.text, later)


def test_sentence_quote_still_matches_inside_a_grown_paragraph() -> None:
    cited = f"# Terms\n\nPreamble. {SENTENCE} Closing words.\n"
    later = cited.replace("Preamble.", "## Details\n\nA new preamble.")
    norm = normalize(cited)
    start = norm.index(SENTENCE)
    loc = Locator(("Terms",), 0, start, start + len(SENTENCE))
    r = relocate(SENTENCE, loc, cited, later)
    assert r.state == MOVED
    assert_well_formed(r, SENTENCE, later)


def test_quote_cut_mid_word_keeps_matching_mid_word() -> None:
    norm = normalize(REV_A)
    start = norm.index(SENTENCE) + 3
    quote = norm[start : start + 40]
    assert quote.startswith("tomers")
    loc = Locator(("Returns policy", "Refund window"), 0, start, start + 40)
    r = relocate(quote, loc, REV_A, REV_B)
    assert (r.state, r.reason) == (MOVED, "relocated_same_section")
    assert_well_formed(r, quote, REV_B)


# --- the same revision ------------------------------------------------------------


def test_same_revision_at_locator() -> None:
    quote, loc = refund_quote()
    r = check_same_revision(quote, loc, REV_A)
    assert (r.state, r.reason) == (VERIFIED, "at_locator")
    assert r.locator == loc
    assert_well_formed(r, quote, REV_A)


def test_same_revision_off_locator_is_a_trace_fault() -> None:
    quote, loc = refund_quote()
    wrong = Locator(loc.heading_path, loc.paragraph, loc.char_start + 1, loc.char_end + 1)
    r = check_same_revision(quote, wrong, REV_A)
    assert (r.state, r.reason) == (STALE, "not_at_locator")
    assert r.locator is None
    assert r.candidates == (loc,)
    assert_well_formed(r, quote, REV_A)
    assert relocate(quote, wrong, REV_A, REV_A_WHITESPACE).reason == "not_at_locator"


@pytest.mark.parametrize("start,end", [(-62, 0), (10**6, 10**6 + 62), (80, 20), (-1, -1)])
def test_nonsense_locators_never_verify(start: int, end: int) -> None:
    quote, loc = refund_quote()
    bad = Locator(loc.heading_path, loc.paragraph, start, end)
    assert check_same_revision(quote, bad, REV_A).state == STALE
    r = relocate(quote, bad, REV_A, REV_B)
    assert r.state == MOVED
    assert_well_formed(r, quote, REV_B)


def test_same_revision_quote_absent() -> None:
    _, loc = refund_quote()
    changed = SENTENCE.replace("thirty", "fourteen")
    r = check_same_revision(changed, loc, REV_A)
    assert (r.state, r.reason) == (STALE, "quote_changed")
    assert r.current_excerpt == SENTENCE
    assert r.old_excerpt == changed


# --- the restart runbook ----------------------------------------------------------


def runbook_quote() -> tuple[str, Locator]:
    chunk = chunk_with(RUNBOOK, "Exception")
    assert chunk.heading_path == ("Restart runbook", "Restarting the API")
    return chunk.text, locator_of(chunk)


def test_runbook_code_comments_are_not_sections() -> None:
    chunks = chunk_document(RUNBOOK)
    assert [c.heading_path for c in chunks] == [
        ("Restart runbook", "Restarting the API"),
        ("Restart runbook", "Restarting the API"),
        ("Restart runbook", "Rollback"),
    ]
    assert chunks[1].text.startswith("```sh # drain the node first")


def test_runbook_dropping_the_condition_is_stale_side_by_side() -> None:
    quote, loc = runbook_quote()
    later = RUNBOOK.replace(
        " Exception: in production, page the on-call SRE and wait for approval before restarting.",
        "",
    )
    r = relocate(quote, loc, RUNBOOK, later)
    assert (r.state, r.reason) == (STALE, "quote_changed")
    assert "Exception: in production" in r.old_excerpt
    assert r.current_excerpt == ("Restart the API pods with `kubectl rollout restart deployment/api`.")
    assert r.locator == Locator(loc.heading_path, loc.paragraph, loc.char_start, 109)
    assert_well_formed(r, quote, later)


def test_runbook_weakening_the_condition_is_stale_side_by_side() -> None:
    quote, loc = runbook_quote()
    later = RUNBOOK.replace(" and wait for approval", "")
    r = relocate(quote, loc, RUNBOOK, later)
    assert (r.state, r.reason) == (STALE, "quote_changed")
    assert "wait for approval" in r.old_excerpt
    assert r.current_excerpt == quote.replace(" and wait for approval", "")
    assert r.locator is not None
    assert (r.locator.char_start, r.locator.paragraph) == (loc.char_start, loc.paragraph)
    assert_well_formed(r, quote, later)


def test_runbook_new_section_before_moves_the_condition() -> None:
    quote, loc = runbook_quote()
    later = RUNBOOK.replace(
        "## Restarting the API",
        "## Before you start\n\nCheck the status page.\n\n## Restarting the API",
    )
    r = relocate(quote, loc, RUNBOOK, later)
    assert (r.state, r.reason) == (MOVED, "relocated_same_section")
    assert_well_formed(r, quote, later)


def test_runbook_rewrapped_is_verified() -> None:
    quote, loc = runbook_quote()
    later = RUNBOOK.replace(" Exception: in production,", "\nException:  in\nproduction,")
    r = relocate(quote, loc, RUNBOOK, later)
    assert (r.state, r.reason) == (VERIFIED, "normalized_identical")


# --- headings_compatible ----------------------------------------------------------


@pytest.mark.parametrize(
    "recorded,found,expected",
    [
        (("A", "B"), ("A", "B"), True),
        (("A", "Refund window"), ("a", " refund   WINDOW "), True),
        (("A", "B"), ("X", "B"), True),
        (("A", "B"), ("A", "B", "C"), True),
        (("A", "B"), ("P", "A", "B"), True),
        ((), ("anything",), True),
        ((), (), True),
        (("A", "B"), ("A", "C"), False),
        (("A", "B"), ("A",), False),
        (("A",), (), False),
        (("A", "B"), ("B", "A"), False),
    ],
)
def test_headings_compatible(recorded: tuple[str, ...], found: tuple[str, ...], expected: bool) -> None:
    assert headings_compatible(recorded, found) is expected


# --- properties -------------------------------------------------------------------

VOCAB = ["refund", "thirty", "days", "delivery", "caf\u00e9", "order", "item", "30", "may"]
FRESH = ["zebra", "quokka", "yak"]
SEPARATORS = [" ", "  ", "\n", "\t", "\u00a0", " \n ", "\r\n", "\u2003"]

sentence = st.lists(st.sampled_from(VOCAB), min_size=2, max_size=7).map(" ".join)


@st.composite
def markdown(draw: st.DrawFn) -> list[tuple[str, str]]:
    blocks: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(1, 9))):
        if draw(st.integers(0, 3)) == 0:
            level = draw(st.integers(1, 3))
            title = draw(st.sampled_from(["Refunds", "Exchanges", "Appendix", "Intro"]))
            blocks.append(("heading", "#" * level + " " + title))
        else:
            blocks.append(("para", draw(sentence)))
    return blocks


def render(blocks: list[tuple[str, str]]) -> str:
    return "\n\n".join(text for _, text in blocks) + "\n"


@st.composite
def whitespace_variant(draw: st.DrawFn, blocks: list[tuple[str, str]]) -> str:
    out: list[str] = []
    for kind, text in blocks:
        if kind == "heading":
            out.append(draw(st.sampled_from(["", "  "])) + text + draw(st.sampled_from(["", " \t"])))
            continue
        words = text.split(" ")
        seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words) - 1, max_size=len(words) - 1))
        out.append(words[0] + "".join(s + w for s, w in zip(seps, words[1:], strict=True)))
    gap = draw(st.sampled_from(["\n\n", "\n \n\n", "\r\n\r\n", "\n\u00a0\n"]))
    result = gap.join(out) + draw(st.sampled_from(["", "\n", "  \n\n"]))
    if draw(st.booleans()):
        result = unicodedata.normalize("NFD", result)
    return result


@st.composite
def mutated(draw: st.DrawFn, blocks: list[tuple[str, str]]) -> str:
    blocks = list(blocks)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["word", "insert", "duplicate", "delete", "rename", "swap"]))
        i = draw(st.integers(0, len(blocks) - 1)) if blocks else 0
        if op == "word" and blocks and blocks[i][0] == "para":
            words = blocks[i][1].split(" ")
            j = draw(st.integers(0, len(words) - 1))
            words[j] = draw(st.sampled_from(VOCAB + FRESH))
            blocks[i] = ("para", " ".join(words))
        elif op == "insert":
            blocks.insert(i, draw(st.sampled_from([("para", "zebra quokka"), ("heading", "## Intro")])))
        elif op == "duplicate" and blocks:
            blocks.append(blocks[i])
        elif op == "delete" and blocks:
            del blocks[i]
        elif op == "rename" and blocks and blocks[i][0] == "heading":
            blocks[i] = ("heading", blocks[i][1] + " renamed")
        elif op == "swap" and len(blocks) > 1:
            blocks[i], blocks[-1] = blocks[-1], blocks[i]
    return render(blocks)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, Locator, str, str]:
    blocks = draw(markdown())
    cited = render(blocks)
    chunks = chunk_document(cited)
    later = draw(st.one_of(mutated(blocks), whitespace_variant(blocks), st.text(max_size=60)))
    from_chunk = draw(st.integers(0, 4)) > 0
    if chunks and from_chunk:
        chunk = draw(st.sampled_from(chunks))
        quote, loc = chunk.text, locator_of(chunk)
        if draw(st.integers(0, 3)) == 0:
            cut = draw(st.integers(0, len(quote)))
            quote = quote[:cut] + draw(st.sampled_from(["", "x", " zebra", "30"])) + quote[cut:]
        if draw(st.integers(0, 5)) == 0:
            loc = Locator(loc.heading_path, loc.paragraph, loc.char_start + 1, loc.char_end)
    else:
        quote = draw(st.one_of(sentence, st.text(max_size=20)))
        start = draw(st.integers(-3, len(cited) + 3))
        loc = Locator(
            draw(st.sampled_from([(), ("Refunds",), ("Intro", "Refunds")])),
            draw(st.integers(-1, 5)),
            start,
            start + len(quote),
        )
    return quote, loc, cited, later


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_whitespace_only_perturbation_is_verified(data: st.DataObject) -> None:
    blocks = data.draw(markdown())
    cited = render(blocks)
    chunks = chunk_document(cited)
    assume(chunks)
    chunk = data.draw(st.sampled_from(chunks))
    later = data.draw(whitespace_variant(blocks))
    r = relocate(chunk.text, locator_of(chunk), cited, later)
    assert (r.state, r.reason) == (VERIFIED, "normalized_identical")
    assert r.locator == locator_of(chunk)


@settings(max_examples=400, deadline=None)
@given(cases())
def test_never_substitute_and_well_formed(case: tuple[str, Locator, str, str]) -> None:
    quote, loc, cited, later = case
    r = relocate(quote, loc, cited, later)
    assert r.old_excerpt is quote
    assert_well_formed(r, quote, later)
    s = check_same_revision(quote, loc, later)
    assert s.old_excerpt is quote
    assert_well_formed(s, quote, later)
    assert relocate(quote, loc, cited, later) == r


@settings(max_examples=400, deadline=None)
@given(cases())
def test_absent_quote_is_never_verified_or_moved(case: tuple[str, Locator, str, str]) -> None:
    quote, loc, cited, later = case
    q = normalize_quote(quote)
    if q and q in normalize(later):
        return
    assert relocate(quote, loc, cited, later).state not in (VERIFIED, MOVED)
    assert check_same_revision(quote, loc, later).state not in (VERIFIED, MOVED)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_unique_paragraph_pushed_down_is_moved(data: st.DataObject) -> None:
    blocks = data.draw(markdown())
    cited = render(blocks)
    chunks = chunk_document(cited)
    assume(chunks)
    chunk = data.draw(st.sampled_from(chunks))
    assume(normalize(cited).count(chunk.text) == 1)
    later = render([("para", "zebra quokka yak"), *blocks])
    r = relocate(chunk.text, locator_of(chunk), cited, later)
    assert (r.state, r.reason) == (MOVED, "relocated_same_section")
    assert r.locator is not None
    assert r.locator.paragraph == chunk.paragraph + 1
    assert at(later, r.locator) == chunk.text
