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

from store.attest import IMPORTED_MARK, Attestation, FieldFact
from tracer.engine.trace import AnswerTrace, PassageTrace
from tracer.tui.text import plain, safe_line
from tracer.tui.widgets.historical import ContentVerdict, HistoricalText

__all__ = [
    "IMPORTED_TAG",
    "ImportedPassage",
    "claim_label",
    "imported_answer_line",
    "imported_head",
    "imported_run_context",
    "lineage_facts",
    "mark",
]

#: the short mark beside one fact or row, where the full words do not fit
IMPORTED_TAG = "imported — not attested"
#: the span a passage was read from, for statements written before it had its own fact
_SPAN = FieldFact(Attestation.IMPORTER_COMPUTED, "", "the span the passage was read from")


def mark() -> Text:
    return plain(f"IMPORTED — {IMPORTED_MARK.split('— ', 1)[-1].upper()}", "bold reverse")


def _fact(label: str, value: object, fact: FieldFact | None, detail: bool = True) -> Text:
    state = str(fact.state) if fact is not None else "absent"
    out = Text.assemble(plain(f"{label} "), safe_line(str(value)) if value is not None else plain("—"))
    out.append_text(plain(f" [{state}]", "bold" if state != "importer-computed" else ""))
    if detail and fact is not None and fact.detail:
        out.append_text(plain(" "))
        out.append_text(safe_line(fact.detail, "dim"))
    return out


def imported_answer_line(t: AnswerTrace) -> Text:
    """Under an imported answer's header (which holds the mark and the attestation of the
    question, answer and model): the export, its digest, the trace and the signature."""
    facts = t.imported
    if facts is None:
        return Text()
    ex = facts.export
    out = Text.assemble(plain("imported from "), safe_line(facts.file_label))
    out.append_text(plain(f" ({ex['format']}, sha256 {str(ex['sha256'])[:16]}…), trace "))
    out.append_text(safe_line(facts.trace_id))
    # the attestations of the question, answer and model are in the header (`imported_head`)
    out.append_text(plain(f"; signed by the importer, signature {t.signature}"))
    return out


def _attestations(t: AnswerTrace) -> Text:
    """`question [state]  answer [state]  model [state] value`, from the import's facts."""
    facts = t.imported
    out = Text()
    if facts is None:
        return out
    for label, path, value in (
        ("question", "$.question_sha256", None),
        ("  answer", "$.answer_sha256", None),
        ("  model", "$.runtime.model", t.runtime.get("model")),
    ):
        fact = facts.field(path)
        out.append_text(plain(f"{label} [{fact.state if fact is not None else 'absent'}]"))
        if value is not None:
            out.append_text(plain(" "))
            out.append_text(safe_line(str(value)))
    return out


def imported_head(t: AnswerTrace) -> Text:
    """The answer header's lines for an import (the header never scrolls away): the mark,
    the export file, who signed it, and the attestation of the question, answer and model.
    The export's digest, trace and signature follow in the body (`imported_answer_line`)."""
    facts = t.imported
    out = mark()
    if facts is None:
        return out
    out.append_text(plain("  from "))
    out.append_text(safe_line(facts.file_label))
    out.append_text(plain(", signed by the importer\n"))
    out.append_text(_attestations(t))
    return out


def claim_label(t: AnswerTrace, index: int) -> Text:
    """The claims table's first cell: `[N]`, and for an import the mark (the importer
    computed the citation: the whole answer rests on every passage found in a prompt)."""
    label = plain(f"[{index + 1}]")
    if t.imported is not None:
        fact = t.imported.field(f"$.citations[{index}]")
        label.append_text(plain(" imported", "italic reverse"))
        if fact is None or fact.state != Attestation.IMPORTER_COMPUTED:
            label.append_text(plain(f" [{fact.state if fact is not None else 'absent'}]"))
    return label


def imported_run_context(t: AnswerTrace) -> Text:
    """The evidence screen's runtime and authorization lines for an import: what the
    export named, each with its attestation, and what no export records, `[absent]`."""
    facts = t.imported
    if facts is None:
        return Text()
    rt = t.runtime
    out = Text.assemble(plain("Runtime context  ", "bold"), plain(IMPORTED_TAG, "italic reverse"), "\n")
    out.append_text(_fact("model", rt.get("model"), facts.field("$.runtime.model")))
    out.append("  ")
    out.append_text(_fact("session", rt.get("session_id"), facts.field("$.runtime.session_id")))
    out.append("\nprompt, pipeline, parameters — [absent] ")
    out.append_text(plain("an export records none", "dim"))
    out.append_text(plain("\nAuthorization at run time  ", "bold"))
    out.append("— [absent] ")
    out.append_text(plain("an export records none", "dim"))
    return out


def lineage_facts(p: PassageTrace) -> dict[str, Text]:
    """What the lineage screen says of an imported passage (its document, revision and
    whether it was located), each with its attestation, short: the pane is 8 lines."""
    a, m = p.attestation, p.record
    imp = (m.imported if m is not None else None) or {}
    located = "yes" if m is not None and m.chain is not None else "no"
    return {
        "document": _fact("", imp.get("document_id"), a.get("document_id"), detail=False)[1:],
        "revision": _fact("revision", imp.get("revision"), a.get("revision"), detail=False),
        "located": _fact("located", located, a.get("chain"), detail=False),
    }


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
        yield Static(
            Text.assemble(
                mark(),
                plain("\nits digests were signed and logged by the importer, not by the producer", "dim"),
            ),
            classes="imported-mark",
        )
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
            _fact("span", imp.get("span_id"), a.get("span_id", _SPAN)),
            _fact("data source", imp.get("data_source"), a.get("data_source")),
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
