"""CLI lines for imported traces: the mark on every fact its producer did not attest."""

from __future__ import annotations

from store.attest import Attestation, FieldFact
from store.records import Passage
from tracer.engine.imported import ImportedFacts
from tracer.engine.trace import AnswerTrace, PassageTrace
from tracer.inert import inert

__all__ = ["chain_lines", "citation_mark", "imported_head", "imported_passage_chain", "one_line"]

_TAG = "[imported — not attested]"


def one_line(text: object) -> str:
    """An export's value on one line: a newline inside it is shown, never printed, so it
    cannot start a line of its own (the importer refuses such ids; an older statement may
    still hold one)."""
    return inert(str(text), keep_newlines=False)


def _fact(label: str, value: object, fact: FieldFact | None) -> str:
    state = str(fact.state) if fact is not None else "absent"
    shown = one_line(value) if value is not None else "—"
    detail = f" ({one_line(fact.detail)})" if fact is not None and fact.detail else ""
    return f"{label} {shown} [{state}]{detail}"


def imported_head(t: AnswerTrace, facts: ImportedFacts) -> list[str]:
    """Replaces the producer, runtime and authorization lines of a manifest."""
    f, ex = facts.field, facts.export
    return [
        "  IMPORTED — NOT ATTESTED BY THE PRODUCER: each fact below says who vouches for it",
        f"  imported {facts.imported_at} from {one_line(facts.file_label)} ({one_line(ex['format'])}, lines "
        f"{ex['lines'][0]}..{ex['lines'][1]}, sha256 {ex['sha256']}); signed by the importer "
        f"{t.signer[:16]}: signature {t.signature}",
        f"  trace {one_line(facts.trace_id)}  root span {one_line(facts.root_span_id)}  "
        f"{len(facts.span_ids)} span(s) used",
        "  " + _fact("generated", t.generated_at, f("$.generated_at")),
        "  "
        + _fact("service", t.producer.system, f("$.producer.system"))
        + "  "
        + _fact("version", t.producer.version, f("$.producer.version")),
        "  "
        + _fact("model", t.runtime.get("model"), f("$.runtime.model"))
        + "  "
        + _fact("session", t.runtime.get("session_id"), f("$.runtime.session_id")),
        "  prompt template, pipeline, parameters — [absent] (an export records none)",
        "  authorization at run time — [absent] (an export records none)",
        f"  question {_TAG} [{_state(f('$.question_sha256'))}]   "
        f"answer {_TAG} [{_state(f('$.answer_sha256'))}]",
    ]


def _state(fact: FieldFact | None) -> str:
    return str(fact.state) if fact is not None else "absent"


def citation_mark(t: AnswerTrace, index: int) -> str:
    """After an imported answer's citation line: the mark and who computed the citation."""
    if t.imported is None:
        return ""
    fact = t.imported.field(f"$.citations[{index}]")
    detail = f" ({one_line(fact.detail)})" if fact is not None and fact.detail else ""
    return f"  {_TAG} [{_state(fact)}]{detail}"


#: the span a passage was read from, for statements written before it had its own fact
_SPAN = FieldFact(Attestation.IMPORTER_COMPUTED, "", "the span the passage was read from")


def chain_lines(m: Passage) -> list[str]:
    """A located passage's chain, chunk first; the caller labels the first line."""
    c = m.located()
    d, s, ch, loc = m.document, c.source, c.chunk, c.locator
    return [
        f"chunk {one_line(ch.chunk_id)} ({one_line(ch.pipeline_version)}) at "
        f"{' > '.join(one_line(h) for h in loc.heading_path)} ¶{loc.paragraph} "
        f"chars {loc.char_start}..{loc.char_end}",
        f"      → imported {one_line(d.uri)} revision {one_line(d.revision)} ({one_line(d.backend)})",
        f"      → source {one_line(s.system)}:{one_line(s.path)} revision {one_line(s.revision)}",
    ]


def imported_passage_chain(p: PassageTrace) -> list[str]:
    """A passage's provenance with each fact's attestation (instead of the manifest chain)."""
    a, m = p.attestation, p.record
    imp = (m.imported if m is not None else None) or {}
    out = [
        f"  {_TAG} retrieved [{_state(a.get('retrieved_sha256'))}]  "
        f"model input [{_state(a.get('model_input_sha256'))}]"
        + (f" ({one_line(a['model_input_sha256'].detail)})" if a.get("model_input_sha256") else ""),
        "  "
        + _fact("document", imp.get("document_id"), a.get("document_id"))
        + "  "
        + _fact("revision", imp.get("revision"), a.get("revision")),
        "  "
        + _fact("chunk ref", imp.get("chunk_ref"), a.get("chunk_ref"))
        + "  "
        + _fact("span", imp.get("span_id"), a.get("span_id", _SPAN)),
        "  " + _fact("data source", imp.get("data_source"), a.get("data_source")),
    ]
    if m is not None and m.chain is not None:
        out.append(f"  chain [{_state(a.get('chain'))}]: " + chain_lines(m)[0])
        out += chain_lines(m)[1:]
    else:
        chain = a.get("chain")
        out.append(f"  chain: not located ({one_line(chain.detail) if chain is not None else 'absent'})")
    out.append(
        "  "
        + _fact("retrieved at", m.retrieved_at if m else None, a.get("retrieved_at"))
        + "  "
        + _fact("rank", m.rank if m else None, a.get("rank"))
        + "  "
        + _fact("score", m.score if m else None, a.get("score"))
    )
    return out
