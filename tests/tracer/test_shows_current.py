"""Where today's text appears beside the historical quote is one rule,
`CurrencyResult.shows_current`, and the JSON, the CLI, the TUI and the reports all follow it."""

from __future__ import annotations

import pytest

from store.queries import RevisionRow
from store.records import Digest
from tracer.engine.currency import COMPARED, CurrencyResult
from tracer.engine.relocate import Relocation
from tracer.engine.serialize import currency_json
from tracer.engine.vocabulary import Currency, CurrencyReason
from tracer.report.html_answer import _currency_blocks

TODAY = "Customers may return items within fourteen days."

_REV = RevisionRow("refund", "C", "wiki", "src-C", "p.md", "Refunds", "u", "docstore", "support",
                   "2026-03-15T00:00:00Z", Digest("9" * 64), 7)  # fmt: skip
STATES = list(Currency)


def _currency(state: Currency, excerpt: str | None, current: RevisionRow | None = _REV) -> CurrencyResult:
    rel = Relocation(
        state,
        CurrencyReason.QUOTE_CHANGED,
        None,
        (),
        excerpt,
        "Customers may return items within thirty days.",
    )
    return CurrencyResult(state, CurrencyReason.QUOTE_CHANGED, "", None, current, rel)


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("excerpt", [TODAY, None])
@pytest.mark.parametrize("current", [_REV, None])
def test_current_text_only_where_the_source_changed_and_a_current_excerpt_exists(
    state: Currency, excerpt: str | None, current: RevisionRow | None
) -> None:
    c = _currency(state, excerpt, current)
    assert c.shows_current == (state in COMPARED and excerpt is not None and current is not None)
    j = currency_json(c)
    assert j["shows_current"] is c.shows_current
    if not c.shows_current:
        return
    # the JSON's current pane holds today's text, and the reports set it beside the quote
    assert j["current_revision"]["excerpt"] == TODAY
    assert TODAY in _currency_blocks(j)


@pytest.mark.parametrize("state", STATES)
def test_reports_never_show_current_text_the_rule_withholds(state: Currency) -> None:
    j = currency_json(_currency(state, TODAY))
    j["shows_current"] = False  # what the engine says wins over what else the JSON holds
    assert TODAY not in _currency_blocks(j)
