"""Never substitute: historical slots hold historical text; current text only in its labelled pane."""

from __future__ import annotations

from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path
from typing import Any

from tests.report.packs import answer, report_of


def _strings(node: Any, path: str = "$") -> list[tuple[str, str]]:
    if isinstance(node, dict):
        return [x for k, v in node.items() for x in _strings(v, f"{path}.{k}")]
    if isinstance(node, list):
        return [x for i, v in enumerate(node) for x in _strings(v, f"{path}[{i}]")]
    return [(path, node)] if isinstance(node, str) else []


def test_report_json_keeps_current_text_in_its_field(pack: Path) -> None:
    stale = answer(report_of(pack), "ans-stale")
    p = stale["trace"]["passages"][0]
    assert "thirty" in p["retrieved"]["text"]
    assert "thirty" in p["currency"]["old_excerpt"]
    where = [path for path, s in _strings(stale) if "fourteen" in s]
    assert where == ["$.trace.passages[0].currency.current_revision.excerpt"]


class _Slots(HTMLParser):
    """Text inside each data-slot block, for one answer section."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.slots: list[tuple[str | None, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"br", "meta"}:
            return
        slot = dict(attrs).get("data-slot")
        parent = self.stack[-1] if self.stack else None
        self.stack.append(slot or parent)

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.slots.append((self.stack[-1] if self.stack else None, data))


def test_html_current_text_only_in_the_current_block(pack: Path) -> None:
    html = (pack / "report.html").read_text("utf-8")
    section = "<section" + html.split("<section class='answer' id='answer-1'>")[1].split("<section")[0]
    parser = _Slots()
    parser.feed("<section class='answer' id='answer-1'>" + section.removeprefix("<section"))
    fourteen = [slot for slot, data in parser.slots if "fourteen" in data]
    assert fourteen and set(fourteen) == {"current"}
    historical = "".join(data for slot, data in parser.slots if slot == "historical")
    assert "thirty days" in historical and "fourteen" not in historical
    assert "Current revision C, dated 2026-05-05T00:00:00Z" in section


def test_markdown_current_text_only_under_its_label(pack: Path) -> None:
    md = (pack / "report.md").read_text("utf-8")
    section = md.split("## 1. Answer ans-stale")[1].split("## 2.")[0]
    blocks = section.split("```text\n")
    for before, block in pairwise(blocks):
        body = block.split("\n```")[0]
        label = before.strip().splitlines()[-1]
        if "fourteen" in body:
            assert label.startswith("**Current revision C, dated")
        else:
            assert not label.startswith("**Current")
    assert section.count("fourteen") == 1
