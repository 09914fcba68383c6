"""The "imported — not attested by the producer" mark, and an imported passage's facts.

An imported trace (tracer/engine/imported.py) was signed by whoever imported it, not by
the pipeline that ran: every screen that shows one of its facts shows the mark beside
it, and each fact's attestation (importer-computed, absent, redacted, truncated) in words.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tracer.engine.trace import AnswerTrace, PassageTrace
from tracer.importers.attest import IMPORTED_MARK, FieldFact
from tracer.tui.text import plain, safe_line
from tracer.tui.widgets.historical import ContentVerdict, HistoricalText

__all__ = ["ImportedPassage", "imported_answer_line", "mark"]


def mark() -> Text:
    return plain(f"IMPORTED — {IMPORTED_MARK.split('— ', 1)[-1].upper()}", "bold reverse")


def _fact(label: str, value: object, fact: FieldFact | None) -> Text:
    state = str(fact.state) if fact is not None else "absent"
    out = Text.assemble(plain(f"{label} "), safe_line(str(value)) if value is not None else plain("—"))
    out.append_text(plain(f" [{state}]", "bold" if state != "importer-computed" else ""))
    if fact is not None and fact.detail:
        out.append_text(plain(" "))
        out.append_text(safe_line(fact.detail, "dim"))
    return out


def imported_answer_line(t: AnswerTrace) -> Text:
    """Under an imported answer's header: the mark, the export and the importer's signature."""
    facts = t.imported
    if facts is None:
        return Text()
    ex = facts.export
    out = Text.assemble(mark(), plain("\nfrom "), safe_line(str(ex["file"])))
    out.append_text(plain(f" ({ex['format']}, sha256 {str(ex['sha256'])[:16]}…), trace "))
    out.append_text(safe_line(facts.trace_id))
    out.append_text(plain(f"; signed by the importer, signature {t.signature}"))
    for label, path, value in (
        ("\nquestion", "$.question_sha256", None),
        ("  answer", "$.answer_sha256", None),
        ("  model", "$.runtime.model", t.runtime.get("model")),
    ):
        fact = facts.field(path)
        out.append_text(plain(f"{label} [{fact.state if fact is not None else 'absent'}]"))
        if value is not None:
            out.append_text(plain(" "))
            out.append_text(safe_line(str(value)))
    return out


class ImportedPassage(Vertical):
    """An imported passage: texts only where whole, each fact with its attestation."""

    DEFAULT_CSS = "ImportedPassage { height: auto; }"

    def __init__(self, passage: PassageTrace):
        super().__init__(classes="imported-passage")
        self.passage = passage

    def compose(self) -> ComposeResult:
        p = self.passage
        a, m = p.attestation, p.record
        if m is None:  # an out-of-scope passage is not drawn with this widget
            return
        imp = m.imported or {}
        yield Static(mark(), classes="imported-mark")
        yield HistoricalText(
            plain(f"Retrieved text as imported [{_state(a, 'retrieved_sha256')}]"),
            p.retrieved,
            classes="historical",
        )
        if p.model_input.digest and p.model_input.digest == p.retrieved.digest:
            yield Static(
                plain(
                    "Model input: the same text, found exactly in a recorded prompt "
                    f"[{_state(a, 'model_input_sha256')}]"
                ),
                classes="digests",
            )
        else:
            yield HistoricalText(
                plain(f"Model input as imported [{_state(a, 'model_input_sha256')}]"),
                p.model_input,
                classes="historical",
            )
        if p.currency.cited_text is not None:
            yield ContentVerdict(plain("Cited revision: stored content, verdict only"), p.currency.cited_text)
        lines = [
            _fact("document", imp.get("document_id"), a.get("document_id")),
            _fact("revision", imp.get("revision"), a.get("revision")),
            _fact("chunk ref", imp.get("chunk_ref"), a.get("chunk_ref")),
            _fact("span", imp.get("span_id"), None),
            _fact("rank", m.rank, a.get("rank")),
            _fact("score", m.score, a.get("score")),
            _fact("retrieved at", m.retrieved_at, a.get("retrieved_at")),
        ]
        if m.chain is not None:
            loc = m.chain.locator
            where = " > ".join(str(h) for h in loc.heading_path) or "(top)"
            lines.append(
                _fact(
                    "located at",
                    f"{where} ¶{loc.paragraph} chars {loc.char_start}..{loc.char_end} "
                    f"of {m.document.uri} revision {m.document.revision}",
                    a.get("chain"),
                )
            )
        else:
            lines.append(_fact("located", "no", a.get("chain")))
        yield Static(Text("\n").join(lines), classes="details")


def _state(a: dict[str, FieldFact], key: str) -> str:
    fact = a.get(key)
    return str(fact.state) if fact is not None else "absent"
