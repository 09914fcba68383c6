"""The adapters' search for a passage in a prompt, by `model_input`'s own rule."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracer.producer.recorder import MIN_CUT_SHARE, derivable, find_model_input

PASSAGE = "Customers may request a refund within thirty days of delivery, with the receipt."


def test_verbatim_and_framework_forms_come_first() -> None:
    header = f"document_id: returns\n\n{PASSAGE}"
    assert find_model_input([f"ctx: {header}"], PASSAGE, (header,)) == header
    assert find_model_input([f"ctx: {PASSAGE}"], PASSAGE, (header,)) == PASSAGE


def test_a_re_wrapped_passage_is_the_exact_span_of_the_prompt() -> None:
    wrapped = textwrap.fill(PASSAGE, width=20)
    prompt = f"System: answer from\n\n[1] {wrapped}\n\nQ: refunds?"
    found = find_model_input([prompt], PASSAGE)
    assert found == wrapped and found in prompt and derivable(found, PASSAGE)


def test_a_cut_down_passage_counts_only_when_most_of_it_survives() -> None:
    cut = PASSAGE[:54]  # ends mid-word
    assert cut.endswith("of d")
    found = find_model_input([f"[1] {cut}…\nQ?"], PASSAGE)
    assert found == cut and derivable(found, PASSAGE)
    assert find_model_input(["[1] within thirty days\nQ?"], PASSAGE) is None  # a shared phrase only
    assert find_model_input(["Unrelated prompt."], PASSAGE) is None


@given(st.integers(min_value=0, max_value=len(PASSAGE)), st.integers(min_value=8, max_value=60))
def test_whatever_is_found_model_input_accepts(cut: int, width: int) -> None:
    """Never a text `model_input` would refuse: in the prompt, and derivable."""
    prompt = "Context:\n" + textwrap.fill(PASSAGE[:cut], width=width) + "\nQ: refunds?"
    found = find_model_input([prompt], PASSAGE)
    if found is not None:
        assert found in prompt and derivable(found, PASSAGE)
        assert len(" ".join(found.split())) >= MIN_CUT_SHARE * len(PASSAGE)
    elif cut == len(PASSAGE):
        pytest.fail("a whole re-wrapped passage must be found")


@given(cut=st.integers(1, len(PASSAGE)))
def test_derivable_is_the_rule_the_search_applies_to_a_cut(cut: int) -> None:
    """One rule: a verbatim cut of the passage is found exactly when `derivable` (what
    `model_input` accepts) accepts it, so `sent`, `not_sent` and the adapters agree."""
    text = PASSAGE[:cut]
    found = find_model_input([f"[1] {text}…"], PASSAGE)
    assert (found is not None) == derivable(text, PASSAGE), (text, found)
    assert found is None or derivable(found, PASSAGE)
