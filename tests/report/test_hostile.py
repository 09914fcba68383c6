"""Hostile text is escaped and visibly marked; the HTML loads nothing from anywhere."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

RAW = ["\x1b", "\x07", "\u202e", "\u202c", "\u200b"]


@pytest.mark.parametrize("name", ["report.html", "report.md"])
def test_no_raw_control_bidi_or_zero_width(pack: Path, name: str) -> None:
    text = (pack / name).read_text("utf-8")
    for ch in RAW:
        assert ch not in text, f"{name} holds raw U+{ord(ch):04X}"
    for marker in ("⟨ESC⟩", "⟨BEL⟩", "⟨U+202E⟩", "⟨U+200B⟩"):
        assert marker in text
    assert "invisible or control characters" in text


def test_html_markup_in_evidence_is_escaped(pack: Path) -> None:
    html = (pack / "report.html").read_text("utf-8")
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "<b>here</b>" not in html and "&lt;b&gt;here&lt;/b&gt;" in html
    assert '<span class="ctl">⟨ESC⟩</span>' in html


def test_markdown_markup_in_evidence_is_inert(pack: Path) -> None:
    md = (pack / "report.md").read_text("utf-8")
    outside = re.sub(r"(?ms)^(`{3,})text\n.*?^\1$", "", md)
    assert "<script>" in md  # verbatim inside a fenced block, where Markdown renders it as text
    assert "<script>" not in outside and "<b>" not in outside
    assert r"\<script\>" in outside  # escaped in table cells and inline values
    assert r"\<b\>here\</b\>" in outside


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_html_has_no_external_resource_or_script(pack: Path) -> None:
    html = (pack / "report.html").read_text("utf-8")
    parser = _Tags()
    parser.feed(html)
    names = {t for t, _ in parser.tags}
    assert not names & {
        "script",
        "img",
        "link",
        "iframe",
        "object",
        "embed",
        "video",
        "audio",
        "source",
        "base",
    }
    for tag, attrs in parser.tags:
        for key in ("src", "href", "action", "srcset", "poster", "data"):
            value = attrs.get(key) or ""
            assert not re.match(r"\s*(https?:)?//", value, re.I), (tag, key, value)
            if key in attrs and key == "href":
                assert value.startswith("#"), (tag, value)
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    assert style and "url(" not in style.group(1) and "@import" not in style.group(1)
    assert "default-src 'none'" in html
