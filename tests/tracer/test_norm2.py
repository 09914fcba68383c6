"""tracer-norm/2: the cases of issue 15 as pure relocation verdicts, and the normalizer's laws.

Each case is checked the way the engine checks it: the /1 chunk a producer recorded is
carried over to /2 (`currency.carry`) and relocated under /2; the same case under /1 is
asserted too where it shows what /2 changes.
"""

from __future__ import annotations

from tracer.engine.currency import carry
from tracer.engine.normalizers import NORM1, NORM2
from tracer.engine.relocate import Locator, Relocation, relocate
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
    doc = "## Steps\n\n1. Pack the item.\n\n2. Print the label.\n"
    later = "## Steps\n\n1. Check the item.\n\n2. Pack the item.\n\n3. Print the label.\n"
    assert under("1", doc, later, "Print").state == "stale"
    r = under("2", doc, later, "Print")
    assert (r.state, r.reason) == ("moved", "relocated_same_section")


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
