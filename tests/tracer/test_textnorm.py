"""The normalizer is a contract shared with producers: these tests pin tracer-norm/1."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from tracer.engine.textnorm import (
    CHUNKER_VERSION,
    NORMALIZER_VERSION,
    Block,
    chunk_document,
    normalize,
    normalize_quote,
    parse_structure,
)

REFUND = """# Returns policy

## Refund window
Customers may request a refund within thirty days of delivery.

Refunds are paid to the original payment method.

### Exceptions ###

Sale items are final.

## Exchanges

Items may be exchanged within sixty days.
"""


def test_versions_are_pinned() -> None:
    assert NORMALIZER_VERSION == "tracer-norm/1"
    assert CHUNKER_VERSION == "tracer-para-chunker/1"


def test_blocks_are_folded_and_joined_with_a_blank_line() -> None:
    text = "  First   line\n\tcontinues here.  \n\n\n \t \nSecond\u00a0para\u2003with\u3000spaces.\n"
    assert normalize(text) == "First line continues here.\n\nSecond para with spaces."


def test_whitespace_and_unicode_form_do_not_change_the_normal_form() -> None:
    base = "Caf\u00e9 rules apply.\n\nRefunds within thirty days of delivery."
    variants = [
        "Caf\u00e9   rules\napply.  \n\n\n\nRefunds within\nthirty days\tof delivery.\n",
        base.replace("\n", "\r\n"),
        unicodedata.normalize("NFD", base),
        "\n\n" + base + "\n   \n",
        base.replace(" ", "\u00a0"),
    ]
    for v in variants:
        assert normalize(v) == normalize(base)


def test_any_change_of_words_changes_the_normal_form() -> None:
    a = "Refunds within thirty days of delivery."
    assert normalize(a) != normalize(a.replace("thirty", "fourteen"))
    assert normalize(a) != normalize(a.replace("days", "days,"))
    assert normalize("one two") != normalize("onetwo")


def test_a_blank_line_is_a_structural_change() -> None:
    assert normalize("one\ntwo") == "one two"
    assert normalize("one\n\ntwo") == "one\n\ntwo"


def test_empty_and_blank_documents() -> None:
    assert normalize("") == ""
    assert normalize(" \n\t\n\u00a0\n") == ""
    assert parse_structure("").blocks == ()
    assert chunk_document("  \n") == []


def test_quote_normalization_is_document_normalization() -> None:
    quote = "First para\nwrapped.\n\n  Second para. "
    assert normalize_quote(quote) == normalize(quote) == "First para wrapped.\n\nSecond para."


def test_heading_paths_follow_atx_levels() -> None:
    s = parse_structure(REFUND)
    paths = [(b.is_heading, b.heading_path, b.text) for b in s.blocks]
    assert paths == [
        (True, ("Returns policy",), "# Returns policy"),
        (True, ("Returns policy", "Refund window"), "## Refund window"),
        (
            False,
            ("Returns policy", "Refund window"),
            "Customers may request a refund within thirty days of delivery.",
        ),
        (
            False,
            ("Returns policy", "Refund window"),
            "Refunds are paid to the original payment method.",
        ),
        (True, ("Returns policy", "Refund window", "Exceptions"), "### Exceptions ###"),
        (False, ("Returns policy", "Refund window", "Exceptions"), "Sale items are final."),
        (True, ("Returns policy", "Exchanges"), "## Exchanges"),
        (False, ("Returns policy", "Exchanges"), "Items may be exchanged within sixty days."),
    ]


def test_a_heading_line_is_its_own_block_even_without_a_blank_line() -> None:
    s = parse_structure("# Title\nBody text\nwraps.\n## Sub\nMore.")
    assert [b.text for b in s.blocks] == ["# Title", "Body text wraps.", "## Sub", "More."]
    assert s.blocks[1].heading_path == ("Title",)
    assert s.blocks[3].heading_path == ("Title", "Sub")


def test_heading_edge_cases() -> None:
    s = parse_structure(
        "# C#\n\n#hashtag is text\n\n####### seven is text\n\n### Skipped level\n\n"
        "#\n\n## Closed ##\n\n   ## Indented"
    )
    kinds = [(b.is_heading, b.heading_path) for b in s.blocks]
    assert kinds == [
        (True, ("C#",)),
        (False, ("C#",)),
        (False, ("C#",)),
        (True, ("C#", "Skipped level")),
        (True, ("",)),
        (True, ("", "Closed")),
        (True, ("", "Indented")),
    ]


def test_a_shallower_heading_closes_deeper_sections() -> None:
    s = parse_structure("# A\n\n## B\n\n### C\n\nx\n\n## D\n\ny\n\n# E\n\nz")
    by_text = {b.text: b.heading_path for b in s.blocks if not b.is_heading}
    assert by_text == {"x": ("A", "B", "C"), "y": ("A", "D"), "z": ("E",)}


def test_fenced_code_is_one_block_without_headings() -> None:
    text = (
        "# Runbook\n\n"
        "Restart it.\n"
        "```sh\n"
        "# drain the node first\n"
        "kubectl drain node-1\n"
        "\n"
        "# then restart\n"
        "systemctl restart api\n"
        "```\n"
        "## After\n"
        "~~~\n# tilde fence\n~~~\n"
    )
    s = parse_structure(text)
    assert [(b.is_heading, b.text) for b in s.blocks] == [
        (True, "# Runbook"),
        (False, "Restart it."),
        (
            False,
            "```sh # drain the node first kubectl drain node-1 # then restart systemctl restart api ```",
        ),
        (True, "## After"),
        (False, "~~~ # tilde fence ~~~"),
    ]
    assert s.blocks[2].heading_path == ("Runbook",)


def test_an_unclosed_fence_runs_to_the_end() -> None:
    s = parse_structure("# T\n\n```\ncode\n\n# not a heading\n")
    assert [b.text for b in s.blocks] == ["# T", "``` code # not a heading"]
    assert not s.blocks[1].is_heading


def test_inline_backticks_do_not_open_a_fence() -> None:
    s = parse_structure("```inline``` text\n# Real heading\nbody")
    assert [b.is_heading for b in s.blocks] == [False, True, False]


def test_paragraph_indices_count_over_the_whole_document() -> None:
    s = parse_structure(REFUND)
    paragraphs = [b for b in s.blocks if not b.is_heading]
    assert [b.index for b in paragraphs] == [0, 1, 2, 3]
    headings = [b for b in s.blocks if b.is_heading]
    assert [b.index for b in headings] == [0, 0, 2, 3]


def test_offsets_point_into_the_normalized_text() -> None:
    s = parse_structure(REFUND)
    assert s.text == normalize(REFUND)
    for b in s.blocks:
        assert s.text[b.start : b.end] == b.text


def test_heading_path_and_block_lookup_by_offset() -> None:
    s = parse_structure(REFUND)
    sentence = s.text.index("Customers")
    block = s.block_at(sentence + 5)
    assert isinstance(block, Block)
    assert block.text.startswith("Customers")
    assert s.heading_path_at(sentence) == ("Returns policy", "Refund window")
    gap = block.end
    assert s.block_at(gap) is None
    assert s.heading_path_at(gap) == ("Returns policy", "Refund window")
    assert s.block_at(-1) is None
    assert s.heading_path_at(-1) == ()
    assert s.block_at(len(s.text)) is None
    assert s.heading_path_at(len(s.text)) == ("Returns policy", "Exchanges")


def test_text_before_the_first_heading_has_an_empty_path() -> None:
    s = parse_structure("Preamble.\n\n# Title\n\nBody.")
    assert s.blocks[0].heading_path == ()
    assert s.heading_path_at(0) == ()


def test_chunker_makes_one_chunk_per_paragraph() -> None:
    chunks = chunk_document(REFUND)
    norm = normalize(REFUND)
    assert [c.chunk_index for c in chunks] == [0, 1, 2, 3]
    assert [c.paragraph for c in chunks] == [0, 1, 2, 3]
    assert chunks[0].heading_path == ("Returns policy", "Refund window")
    assert chunks[0].text == "Customers may request a refund within thirty days of delivery."
    assert chunks[2].heading_path == ("Returns policy", "Refund window", "Exceptions")
    for c in chunks:
        assert norm[c.start : c.end] == c.text


# --- properties -------------------------------------------------------------------

WORDS = [
    "refund",
    "thirty",
    "days",
    "caf\u00e9",
    "na\u00efve",
    "Z\u00fcrich",
    "d\u00e9j\u00e0",
    "30",
    "a.",
]
SEPARATORS = [" ", "  ", "\n", "\t", "\u00a0", " \n  ", "\u2003", "\r\n", " \t\u3000"]
MARKDOWN_LINES = [
    "# a",
    "## b ##",
    "### c",
    "#",
    "# C#",
    "####### seven",
    "```",
    "```py",
    "````",
    "~~~",
    "~~~ x ~~~",
    "``` a ```",
    "text",
    "more text",
    "",
    "  ",
    "\t",
    "\u00a0",
    "   # indented",
    "#tag",
]

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8)
markdownish = st.lists(st.sampled_from(MARKDOWN_LINES), max_size=25).map("\n".join)
any_text = st.one_of(st.text(max_size=200), markdownish)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, str]:
    """A clean markdown document and a whitespace-only perturbation of it."""
    clean: list[str] = []
    messy: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["heading", "para", "para", "fence"]))
        ws = draw(words)
        if kind == "heading":
            level = draw(st.integers(1, 3))
            clean.append("#" * level + " " + " ".join(ws))
            indent = draw(st.sampled_from(["", " ", "   "]))
            gap = draw(st.sampled_from([" ", "\t", "  "]))
            messy.append(indent + "#" * level + gap + "  ".join(ws) + draw(st.sampled_from(["", "  "])))
        elif kind == "para":
            clean.append(" ".join(ws))
            seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(ws), max_size=len(ws)))
            messy.append("".join(w + s for w, s in zip(ws, seps, strict=True)))
        else:
            body = ["# comment " + " ".join(ws), "echo " + ws[0]]
            clean.append("```\n" + "\n".join(body) + "\n```")
            messy.append("```\n" + "\n\n".join(line + "  " for line in body) + "\n```  ")
    clean_text = "\n\n".join(clean)
    gaps = draw(
        st.lists(
            st.sampled_from(["\n\n", "\n\n\n", "\n \t\n", "\n\u00a0\n\n"]),
            min_size=len(messy),
            max_size=len(messy),
        )
    )
    messy_text = "".join(b + g for b, g in zip(messy, gaps, strict=True))
    if draw(st.booleans()):
        messy_text = messy_text.replace("\r\n", "\n").replace("\n", "\r\n")
    if draw(st.booleans()):
        messy_text = unicodedata.normalize("NFD", messy_text)
    return clean_text, messy_text


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_normalize_is_idempotent_and_nfc(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
    assert unicodedata.is_normalized("NFC", once)
    assert "\n\n\n" not in once
    assert once == once.strip()


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_structure_is_a_function_of_the_normalized_text(text: str) -> None:
    assert parse_structure(normalize(text)) == parse_structure(text)


@settings(max_examples=200, deadline=None)
@given(any_text)
def test_blocks_tile_the_normalized_text(text: str) -> None:
    s = parse_structure(text)
    assert s.text == normalize(text)
    assert "\n\n".join(b.text for b in s.blocks) == s.text
    paragraphs = 0
    for b in s.blocks:
        assert s.text[b.start : b.end] == b.text
        assert b.text and "\n" not in b.text and b.text == b.text.strip()
        assert b.index == paragraphs
        paragraphs += not b.is_heading
    for c in chunk_document(text):
        assert s.text[c.start : c.end] == c.text


@settings(max_examples=200, deadline=None)
@given(documents())
def test_whitespace_only_perturbations_keep_text_and_structure(pair: tuple[str, str]) -> None:
    clean, messy = pair
    assert normalize(messy) == normalize(clean)
    assert parse_structure(messy) == parse_structure(clean)
    assert chunk_document(messy) == chunk_document(clean)
