"""The one widget that may show historical text, and only text that verified.

It is handed an engine `TextResult`, never a string: verified text is shown (with the
differences against the current excerpt marked, when given); a purge shows the
tombstone card; `missing` shows the alarm; anything else says why it is withheld.  No
code path can put some other text in the historical place.

`ContentVerdict` is the same verdict for a stored text that is never shown in full (a
cited or current source revision): its digests and verdict, or what stands in its place.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from tracer.engine.evidence import TextResult
from tracer.engine.vocabulary import Integrity
from tracer.tui.text import hidden_note, plain, safe, short, state_word
from tracer.tui.widgets.alarm import MissingAlarm, WithheldNotice
from tracer.tui.widgets.diff import mark_differences
from tracer.tui.widgets.tombstone import TombstoneCard

__all__ = ["ContentVerdict", "HistoricalText", "digest_line", "in_place_of"]


def digest_line(r: TextResult) -> Text:
    """Recorded vs recomputed SHA-256 and the engine's verdict."""
    return Text.assemble(
        plain(f"recorded sha256 {short(r.digest)}  recomputed {short(r.recomputed)}  verdict "),
        state_word(r.state),
    )


def in_place_of(r: TextResult) -> Widget:
    """What stands where an unreleased text would: tombstone, alarm, or the reason."""
    if r.state == Integrity.PURGED and r.tombstone is not None:
        return TombstoneCard(r.digest, r.tombstone)
    if r.state == Integrity.MISSING:
        return MissingAlarm(r)
    return WithheldNotice(r)


class HistoricalText(Vertical):
    DEFAULT_CSS = "HistoricalText { height: auto; }"

    def __init__(
        self,
        title: Text,
        result: TextResult,
        compare_with: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual spells it `id`
        classes: str | None = None,
    ):
        super().__init__(id=id, classes=classes)
        self.title = title
        self.result = result
        self.compare_with = compare_with

    def compose(self) -> ComposeResult:
        r = self.result
        yield Static(self.title, classes="pane-title")
        yield Static(digest_line(r), classes="digests")
        if r.verified and r.text is not None:
            body = safe(r.text)
            if self.compare_with is not None:
                body = mark_differences(r.text, self.compare_with)[0]
            note = hidden_note(r.text)
            if note is not None:
                yield Static(note, classes="hidden-note")
            yield Static(body, classes="historical-body")
        else:
            yield in_place_of(r)


class ContentVerdict(Vertical):
    """A source revision's stored content: verdict only; a tombstone or alarm when gone."""

    DEFAULT_CSS = "ContentVerdict { height: auto; }"

    def __init__(
        self,
        title: Text,
        result: TextResult,
        id: str | None = None,  # noqa: A002 - Textual spells it `id`
        classes: str | None = None,
    ):
        super().__init__(id=id, classes=classes)
        self.title = title
        self.result = result

    def compose(self) -> ComposeResult:
        r = self.result
        yield Static(self.title, classes="pane-title")
        yield Static(digest_line(r), classes="digests")
        if not r.verified:
            yield in_place_of(r)
