"""The stored answer with its cited spans marked and numbered like footnotes.

Each segment between citation boundaries is made inert on its own, so the markers
([1], [2]…) land at the right characters even when inert() lengthens the text.
"""

from __future__ import annotations

from rich.text import Text

from tracer.engine.trace import CitationTrace
from tracer.inert import inert

__all__ = ["CITED_STYLE", "MARK_STYLE", "answer_with_citations"]

CITED_STYLE = "underline bold"
MARK_STYLE = "reverse bold"


def _marks(out: Text, spans: list[CitationTrace], at: int, *, empty: bool) -> None:
    """The numbers of the spans that are empty at `at` (`empty`) or end at `at`."""
    for c in spans:
        if (c.answer_start == c.answer_end == at) if empty else (c.answer_end == at and c.answer_start < at):
            out.append(f"[{c.index + 1}]", style=MARK_STYLE)


def answer_with_citations(text: str, citations: list[CitationTrace]) -> Text:
    spans = [c for c in citations if c.span is not None]
    cuts = {0, len(text)}
    for c in spans:
        cuts.update((c.answer_start, c.answer_end))
    points = sorted(cuts)
    out = Text()
    for start, end in zip(points, [*points[1:], None], strict=True):
        _marks(out, spans, start, empty=True)
        if end is None:
            break
        covered = any(c.answer_start <= start < c.answer_end for c in spans)
        out.append(inert(text[start:end]), style=CITED_STYLE if covered else "")
        _marks(out, spans, end, empty=False)
    return out
