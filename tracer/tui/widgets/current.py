"""The current text of a source: only here, under "Current revision R (date)".

It sits beside the historical pane, never inside it, and marks the differences from
the quote the currency verdict compared (`compared_quote`: the historical quote, or under
key M the quote as carried into tracer-norm/2) so the reader sees exactly what changed.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from store.queries import RevisionRow
from tracer.engine.relocate import Locator
from tracer.engine.times import utc
from tracer.tui.text import plain, safe, safe_line
from tracer.tui.widgets.diff import mark_differences

__all__ = ["CurrentRevisionPane", "current_title"]


def current_title(rev: RevisionRow) -> Text:
    # in UTC, as the CLI, the JSON and the reports echo it (docs/json.md)
    return Text.assemble(
        plain("Current revision "), safe_line(rev.revision), plain(f" ({utc(rev.committed_at)})")
    )


class CurrentRevisionPane(Vertical):
    DEFAULT_CSS = "CurrentRevisionPane { height: auto; }"

    def __init__(
        self,
        rev: RevisionRow,
        excerpt: str,
        historical: str | None,
        locator: Locator | None,
        id: str | None = None,  # noqa: A002 - Textual spells it `id`
        classes: str | None = None,
        carried_into: str | None = None,
    ):
        """`historical`: the quote to mark the differences from; `carried_into`: the
        normalizer it was carried into, when it is not the historical text as shown."""
        super().__init__(id=id, classes=classes)
        self.rev = rev
        self.excerpt = excerpt
        self.historical = historical
        self.locator = locator
        self.carried_into = carried_into

    def compose(self) -> ComposeResult:
        yield Static(current_title(self.rev), id="current-title", classes="pane-title")
        where = Text("now at ")
        if self.locator is not None:
            where.append_text(safe_line(" > ".join(self.locator.heading_path) or "(top)"))
            where.append(
                f" ¶{self.locator.paragraph} chars {self.locator.char_start}..{self.locator.char_end}"
            )
        else:
            where.append("no single location")
        yield Static(where, classes="digests")
        if self.carried_into is not None and self.historical is not None:
            yield Static(
                Text.assemble(
                    # the historical pane beside shows the text as recorded, unmarked
                    plain("marked: differences from the quote as carried into "),
                    safe_line(self.carried_into),
                ),
                classes="digests carried",
            )
        body = safe(self.excerpt)
        if self.historical is not None:
            body = mark_differences(self.historical, self.excerpt)[1]
        yield Static(body, classes="current-body")
