"""Plain words before codes, and the palette lists tracer's actions by their words."""

from __future__ import annotations

import re
from pathlib import Path

from tests.tui.conftest import SIZE, Built, settle
from tracer.tui.commands import screen_actions
from tracer.tui.screens.answer import AnswerScreen
from tracer.tui.words import REASON_WORDS, TRANSFORM_WORDS, reason

STATES_MD = Path(__file__).resolve().parents[2] / "docs" / "states.md"


def _documented(section: str) -> set[str]:
    """Codes in the first column of the tables under `section` in docs/states.md."""
    text = STATES_MD.read_text(encoding="utf-8")
    body = text.split(section, 1)[1].split("\n## ", 1)[0]
    codes: set[str] = set()
    for line in body.splitlines():
        if line.startswith("| `"):
            codes.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return codes


def test_every_documented_reason_code_has_plain_words() -> None:
    documented = _documented("### Currency reason codes")
    assert documented, "docs/states.md lists no reason codes"
    assert documented <= set(REASON_WORDS), documented - set(REASON_WORDS)
    transforms = _documented("## The transformation trace")
    assert transforms <= set(TRANSFORM_WORDS), transforms - set(TRANSFORM_WORDS)


def test_words_come_first_and_the_code_stays_visible() -> None:
    shown = reason("relocated_same_section").plain
    assert shown == "same section, shifted (relocated_same_section)"


async def test_the_palette_lists_actions_by_word_without_textual_duplicates(built: Built) -> None:
    app = built.app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(AnswerScreen("ans-stale"))
        await settle(pilot)
        titles = [a.title for a in screen_actions(app.screen)]
        assert "Help" in titles and "Verify" in titles and "Quit" in titles
        assert len(titles) == len(set(titles)), titles
        assert not any("(" in t for t in titles), titles
        await pilot.press("ctrl+p")
        await settle(pilot)
        options = app.screen.query("OptionList").first().options  # type: ignore[attr-defined]
        shown = [str(o.prompt).split("\n")[0] for o in options]
        assert shown.count("Quit") == 1, shown
        assert "Keys" not in shown and not any("question_mark" in s for s in shown), shown
