"""tracer-norm/2: the cases of issue 15 as pure relocation verdicts, and the normalizer's laws.

Each case is checked the way the engine checks it: the /1 chunk a producer recorded is
carried over to /2 (`currency.carry`) and relocated under /2; the same case under /1 is
asserted too where it shows what /2 changes.
"""

from __future__ import annotations

from tracer.engine.currency import carry
from tracer.engine.normalizers import NORM1, NORM2
from tracer.engine.relocate import Locator, Relocation, relocate, renumbered
from tracer.engine.textnorm import chunk_document, normalize
from tracer.engine.textnorm2 import normalize2, parse_structure2, words


def recorded(text: str, contains: str) -> tuple[str, Locator]:
    """The /1 chunk holding `contains`, as the reference chunker records it."""
    c = next(c for c in chunk_document(text) if contains in c.text)
    return c.text, Locator(c.heading_path, c.paragraph, c.start, c.end)


def under(norm_version: str, cited: str, later: str, contains: str) -> Relocation:
    quote, loc = recorded(cited, contains)
    norm = NORM2 if norm_version == "2" else NORM1
    q, carried = carry(quote, loc, cited, NORM1, norm)
    return relocate(q, carried, cited, later, norm)


TERMS = """# Terms of service

## A. Your account

You *must not* use the service to **harass** other people.

You are responsible for your account.

## B. Acceptable use

- do not send spam;
- do not scrape personal data;
- do not impersonate anyone.

See [our community guidelines](/site-policy/community) for details.

## R. Changes to These Terms

We may amend these Terms at any time by posting the amended terms on this site.
"""


def test_emphasis_markers_alone_do_not_count() -> None:
    later = TERMS.replace("*must not*", "_must not_").replace("**harass**", "__harass__")
    assert under("1", TERMS, later, "harass").state == "stale"
    r = under("2", TERMS, later, "harass")
    assert (r.state, r.reason) == ("verified", "normalized_identical")


def test_bullet_style_alone_does_not_count_and_an_insert_above_is_a_move() -> None:
    later = TERMS.replace("- do not", "* do not")
    assert under("1", TERMS, later, "spam").state == "stale"
    assert under("2", TERMS, later, "spam").state == "verified"
    inserted = later.replace("## B. Acceptable use\n", "## B. Acceptable use\n\nRead this first.\n")
    r = under("2", TERMS, inserted, "spam")
    assert (r.state, r.reason) == ("moved", "relocated_same_section")
    items = ["do not send spam;", "do not scrape personal data;", "do not impersonate anyone."]
    assert r.current_excerpt == "\n\n".join(items)


def test_ordered_numbering_alone_does_not_count() -> None:
    # lazy numbering (every item "1.") renders as 1, 2, 3 like counted numbering
    doc = "## Steps\n\n1. Pack the item.\n2. Print the label.\n3. Post it.\n"
    lazy = doc.replace("2. Print", "1. Print").replace("3. Post", "1. Post")
    assert under("1", doc, lazy, "Print").state == "stale"
    assert under("2", doc, lazy, "Print").state == "verified"
    assert normalize2(lazy) == "## Steps\n\n1. Pack the item.\n\n2. Print the label.\n\n3. Post it."
    # a paragraph inserted above the list leaves every number as it was: a move
    above = doc.replace("## Steps\n", "## Steps\n\nBefore you start.\n")
    r = under("2", doc, above, "Print")
    assert (r.state, r.reason) == ("moved", "relocated_same_section")


def test_an_item_inserted_above_renumbers_what_the_reader_sees() -> None:
    # the reader now reads "3. Print the label." where the answer quoted "2.": a change,
    # shown with its renumbered successor (tracer cannot tell a step number from a number
    # that is content, as in "1999. was the year")
    doc = "## Steps\n\n1. Pack the item.\n\n2. Print the label.\n"
    later = "## Steps\n\n1. Check the item.\n\n2. Pack the item.\n\n3. Print the label.\n"
    r = under("2", doc, later, "Print")
    assert (r.state, r.reason) == ("stale", "quote_changed")
    assert r.current_excerpt is not None and "3. Print the label." in r.current_excerpt


def test_a_changed_list_start_is_never_verified() -> None:
    # CommonMark renders an ordered list's start number (<ol start="1999">): it is read
    cancel = "{}. You may cancel at any time.\n\n{}. We refund you."
    cases = [
        ("1999. was the year we started.", "2000. was the year we started.", "year"),
        ("Intro.\n\n14. days after delivery.", "Intro.\n\n30. days after delivery.", "delivery"),
        ("2) Refunds within 14 days.", "3) Refunds within 14 days.", "Refunds"),
        (cancel.format(3, 4), cancel.format(7, 8), "cancel"),
        (cancel.format(3, 4), cancel.format(7, 8), "refund"),  # later items read 4 -> 8
        (cancel.format(3, 3), cancel.format(7, 7), "refund"),  # lazy: 4 -> 8 as well
        ("- Refunds\n14. days apply", "- Refunds\n30. days apply", "Refunds"),
        ("1. Fees\n   14. days apply", "1. Fees\n   30. days apply", "Fees"),
    ]
    for old, new, contains in cases:
        cited, later = f"# T\n\n{old}\n", f"# T\n\n{new}\n"
        r = under("2", cited, later, contains)
        assert (r.state, r.reason) == ("stale", "quote_changed"), (old, new, r)
        assert under("1", cited, later, contains).state == "stale"


def test_the_current_excerpt_shows_the_list_number() -> None:
    # what the reader now reads is shown, number included (it used to be dropped)
    r = under(
        "2", "# T\n\n1999. was the year we started.\n", "# T\n\n2000. was the year we started.\n", "year"
    )
    assert r.current_excerpt is not None and "2000. was the year we started." in r.current_excerpt
    assert normalize2("2) Refunds *within* 14 days.") == "2) Refunds within 14 days."


def test_a_number_a_wrap_moved_to_a_line_start_stays_in_its_paragraph() -> None:
    # CommonMark: a list not starting at 1, or a nested list's first item, cannot interrupt
    # a paragraph, so "14." stays text (it would otherwise be read as a renumbered item)
    assert normalize2("within\n14. days") == "within 14. days"
    assert normalize2("- Refunds\n14. days apply") == "Refunds 14. days apply"
    assert normalize2("1. Refunds within\n   14. days") == "1. Refunds within 14. days"
    assert normalize2("1. Refunds within\n2. days") == "1. Refunds within\n\n2. days"
    assert normalize2("1. Refunds\n2) days") == "1. Refunds 2) days"


def test_a_changed_link_target_is_stale_with_the_current_excerpt() -> None:
    later = TERMS.replace("(/site-policy/community)", "(/site-policy/community-v2)")
    r = under("2", TERMS, later, "guidelines")
    assert (r.state, r.reason) == ("stale", "quote_changed")
    assert r.current_excerpt == "See [our community guidelines](/site-policy/community-v2) for details."


def test_changed_link_text_is_stale() -> None:
    later = TERMS.replace("[our community guidelines]", "[our rules]")
    assert under("2", TERMS, later, "guidelines").state == "stale"


def test_a_renumbered_section_is_moved_not_ambiguous() -> None:
    later = TERMS.replace("## R. Changes", "## Q. Changes")
    for version in ("1", "2"):
        r = under(version, TERMS, later, "amend")
        assert (r.state, r.reason) == ("moved", "relocated_renumbered_section"), version
        assert r.locator is not None and r.locator.heading_path[-1] == "Q. Changes to These Terms"


def test_numeric_and_roman_labels_are_renumbering() -> None:
    for old, new in (("9.", "10."), ("IV.", "V."), ("A)", "B)"), ("2.3", "2.4.")):
        doc = f"# Policy\n\n## {old} Advertising on the site\n\nNo ads in profiles.\n"
        later = doc.replace(f"## {old} ", f"## {new} ")
        r = under("2", doc, later, "ads")
        assert (r.state, r.reason) == ("moved", "relocated_renumbered_section"), (old, new)


def test_a_renamed_section_is_not_renumbering() -> None:
    later = TERMS.replace("## R. Changes to These Terms", "## Q. Updates to These Terms")
    r = under("2", TERMS, later, "amend")
    assert (r.state, r.reason) == ("ambiguous", "unique_match_incompatible_section")


def test_more_label_shapes_are_renumbering() -> None:
    pairs = [
        ("(a)", "(b)"), ("(iv)", "(v)"), ("2)", "3)"), ("4.2.", "4.3."), ("xiv)", "xv)"),
        ("4.2", "4.3"), ("R.", "S."),
    ]  # fmt: skip
    for old, new in pairs:
        doc = f"# Policy\n\n## {old} Advertising on the site\n\nNo ads in profiles.\n"
        later = doc.replace(f"## {old} ", f"## {new} ")
        for version in ("1", "2"):
            r = under(version, doc, later, "ads")
            assert (r.state, r.reason) == ("moved", "relocated_renumbered_section"), (old, new, version)


def test_a_heading_whose_words_or_numbers_changed_is_not_renumbering() -> None:
    # audit A2: a year, a quantity or a word that happens to be made of roman-numeral
    # letters is part of what the heading says, not an enumeration label
    pairs = [
        ("2023: Fee schedule", "2024: Fee schedule"),
        ("2023. Fee schedule", "2024. Fee schedule"),
        ("1.5 percent fee", "2.5 percent fee"),
        ("Civil: Remedies", "Mild: Remedies"),
        ("Civil. Remedies", "Mild. Remedies"),
        ("Mix. Remedies", "Mild. Remedies"),
        ("4.2 data retention", "4.3 data retention"),
    ]
    for old, new in pairs:
        doc = f"# T\n\n## {old}\n\nYou may sue.\n\n## X\n\nOther.\n"
        later = doc.replace(f"## {old}\n", f"## {new}\n")
        for version in ("1", "2"):
            r = under(version, doc, later, "sue")
            expected = ("ambiguous", "unique_match_incompatible_section")
            assert (r.state, r.reason) == expected, (old, new, version)
        assert not renumbered(("T", old), ("T", new))
    assert renumbered(("T", "R. Changes to These Terms"), ("T", "Q. Changes to These Terms"))
    assert renumbered(("T", "9. Advertising on GitHub"), ("T", "10. Advertising on GitHub"))
    assert not renumbered(("T", "9."), ("T", "10."))  # a label alone: nothing left to compare


def test_a_link_wrapped_successor_is_stale_with_its_excerpt() -> None:
    cited = "# Acceptable use\n\n- gratuitously depicts or glorifies violence, including violent images;\n"
    successor = (
        "* [gratuitously depicts or glorifies violence](/site-policy/github-terms/"
        "github-community-guidelines#violent-threats-and-violence), including violent images; or"
    )
    later = f"# Acceptable use\n\n{successor}\n"
    for version in ("1", "2"):
        r = under(version, cited, later, "violence")
        assert (r.state, r.reason) == ("stale", "quote_changed"), version
        assert r.current_excerpt is not None and "including violent images; or" in r.current_excerpt


def test_words_changed_under_emphasis_are_never_verified() -> None:
    later = TERMS.replace("*must not*", "_may_")
    r = under("2", TERMS, later, "harass")
    assert (r.state, r.reason) == ("stale", "quote_changed")
    assert r.current_excerpt == "You may use the service to harass other people."


def test_v2_blocks_refine_v1_blocks() -> None:
    s2 = parse_structure2(TERMS)
    n1 = len(normalize(TERMS).split("\n\n"))
    assert len(set(s2.parent)) == n1 and list(s2.parent) == sorted(s2.parent)
    assert normalize2(TERMS).count("do not") == 3


def test_words_drop_link_targets_for_proposals_only() -> None:
    assert words("[a b](/x_y_z) c") == "a b c"
    assert normalize2("[a b](/x_y_z) c") == "[a b](/x_y_z) c"
