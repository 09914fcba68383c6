"""report.md: the same report as plain Markdown, for case notes and code review tools.

Rendered from the report dict, like report.html; states are words, historical text and
a source's current text sit in separately labelled blocks, and every untrusted string
is escaped and made inert (`mdtext`).
"""

from __future__ import annotations

from typing import Any

from tracer.engine.vocabulary import Currency, Integrity, ModelInput, model_input_meaning
from tracer.report.case_md import case_cover_md, case_sections_md, holds_md, signature_md
from tracer.report.imported import (
    IMPORTED_HEAD,
    RUNTIME_ABSENT,
    Fact,
    answer_fact,
    imported_mark,
    is_imported,
    passage_tag,
)
from tracer.report.mdtext import fence, md
from tracer.report.words import (
    answer_time_text,
    candidates_intro,
    checkpoint_headline,
    is_revision_tombstone,
    locator_text,
    normalizer_words,
    reason_text,
    record_kind_text,
    subject_label,
)

__all__ = ["render_md"]


def _text_slot(label: str, t: dict[str, Any], tag: str = "") -> str:
    """`tag`: an imported text's mark and attestation (`[imported — …: importer-computed]`)."""
    if isinstance(t.get("text"), str):
        if tag:
            return fence(
                f"{label} {md(tag)}: text as imported, SHA-256 verified against the digest the importer "
                f"signed ({md(t['digest'][:16])}…)",
                t["text"],
            )
        return fence(
            f"{label}: historical text as recorded, SHA-256 verified ({md(t['digest'][:16])}…)", t["text"]
        )
    st = t.get("state", Integrity.UNAVAILABLE)
    if tag and st == Integrity.NOT_CAPTURED:
        return (
            f"**{md(label)}** {md(tag)}: **{md(st)}** ({md(t.get('detail', ''))}): "
            "the export held no whole text, nothing to verify\n"
        )
    if st == Integrity.PURGED and t.get("tombstone"):
        return _tombstone({"subject": label, **t["tombstone"]})
    if st == Integrity.MISSING:
        return f"> **ALARM: MISSING.** {md(label)} is absent and no tombstone explains it: evidence lost.\n"
    if st == Integrity.CHECKSUM_MISMATCH:
        return (
            f"> **ALARM: CHECKSUM MISMATCH.** The retained {md(label.lower())} does not hash to its digest; "
            "it is not shown.\n"
        )
    return f"**{md(label)}:** {md(st)} {md(t.get('detail', ''))}\n"


def _tombstone(tb: dict[str, Any]) -> str:
    return (
        f"> **TOMBSTONE** in place of {md(subject_label(tb))}: purged under policy {md(tb.get('policy'))}, "
        f"reason {md(tb.get('reason'))}, authorized by {md(tb.get('authorizer'))}, effective "
        f"{md(tb.get('effective_at'))}, digest {md(tb.get('digest'))}, log entry {md(tb.get('seq'))}.\n"
    )


def _imported_fields(imp: dict[str, Any] | None) -> list[str]:
    if not imp:
        return []
    out = [f"**{md(imp.get('mark'))}**\n"]
    for name, f in sorted((imp.get("fields") or {}).items()):
        detail = f" ({md(f.get('detail'))})" if f.get("detail") else ""
        out.append(f"- {md(name)}: **{md(f.get('state'))}**{detail}\n")
    return out


def _then_and_now(cur: dict[str, Any]) -> list[str]:
    """The historical quote and today's text, each in its own labelled block, only when
    the source changed."""
    out: list[str] = []
    cited, current = cur.get("cited_revision"), cur.get("current_revision")
    if not cur.get("shows_current") or not current:
        cited = current = None  # nothing changed, or nothing to set the historical quote against
    if "old_excerpt" in cur and cited:
        label = f"Historical quote: cited revision {md(cited['revision'])}, dated {md(cited['committed_at'])}"
        out.append(fence(label, cur["old_excerpt"]))
    if current and current.get("excerpt") is not None:
        label = (
            f"Current revision {md(current['revision'])}, dated {md(current['committed_at'])}: "
            "today's source text, not what was retrieved"
        )
        out.append(fence(label, current["excerpt"]))
    return out


def _at_answer_time(at: dict[str, Any] | None) -> list[str]:
    if not at:
        return []
    out = [md(answer_time_text(at)) + "\n"]
    then = at.get("in_force") or {}
    if then.get("excerpt") is not None:
        label = (
            f"Revision {md(then['revision'])} in force when the answer was generated, dated "
            f"{md(then['committed_at'])}: neither what was retrieved nor today's text"
        )
        out.append(fence(label, then["excerpt"]))
    return out


def _passage(p: dict[str, Any], tombs: list[dict[str, Any]]) -> list[str]:
    out = [f"#### Passage {md(p['passage_id'])}\n"]
    if not p["visible"]:
        return [*out, "Integrity: **unavailable** · Currency: **unavailable**\n"]
    cur, ch = p["currency"], p["chain"]
    out.append(
        f"Integrity: **{md(p['integrity'])}** · Currency: **{md(cur['state'])}** "
        f"({md(reason_text(cur))}) · effective: **{md(p['effective']['integrity'])}** / "
        f"**{md(p['effective']['currency'])}**\n"
    )
    out += _imported_fields(p.get("imported"))
    if ch is None:  # an imported passage that could not be located in any revision
        out.append("No source chain: the passage was not located in an imported revision.\n")
        out.append(_text_slot("Retrieved text", p["retrieved"], passage_tag(p, "retrieved_sha256")))
        if p["model_input"].get("digest") != p["retrieved"].get("digest"):
            out.append(_text_slot("Model input text", p["model_input"], passage_tag(p, "model_input_sha256")))
        return out
    src, doc, chunk, loc = ch["source"], ch["document"], ch["chunk"], ch["locator"]
    out.append(
        f"1. Source {md(src['system'])}, path {md(src['path'])}, source revision {md(src['revision'])}\n"
        f"2. Imported document {md(doc['document_id'])} at {md(doc['uri'])}, revision {md(doc['revision'])} "
        f"({md(doc['backend'])})\n"
        f"3. Chunk {md(chunk['chunk_id'])} by {md(chunk['pipeline_version'])}, normalizer "
        f"{md(ch['normalizer_version'])}\n"
        f"4. Locator {md(locator_text(loc))}\n"
    )
    out.append(
        f"Rank {md(p['rank'])}, score {md(p['score'])}, retrieved {md(p['retrieved_at'])}; "
        f"transformation check: {md(p['transform']['state'])}\n"
    )
    out.append(_text_slot("Retrieved text", p["retrieved"], passage_tag(p, "retrieved_sha256")))
    out += _model_input_md(p)
    out += _then_and_now(cur)
    out += _at_answer_time(p.get("answer_time"))
    out += _candidates_md(cur)
    for tb in tombs:
        if is_revision_tombstone(tb, p["passage_id"]):
            out.append(_tombstone(tb))
    return out


def _model_input_md(p: dict[str, Any]) -> list[str]:
    """The passage's model-input state, then its text (or that it is the retrieved text)."""
    out: list[str] = []
    sent = p.get("model_input_state")
    if sent:
        out.append(f"Model input: **{md(sent)}** ({md(model_input_meaning(str(sent)))})\n")
    if sent == ModelInput.NOT_SENT:
        return out  # no model input: the word above stands where it would be
    if p["model_input"].get("digest") == p["retrieved"].get("digest"):
        out.append("Model input: identical to the retrieved text (same SHA-256).\n")
    else:
        out.append(_text_slot("Model input text", p["model_input"], passage_tag(p, "model_input_sha256")))
    return out


def _candidates_md(cur: dict[str, Any]) -> list[str]:
    """An ambiguous quote's candidate places in the current revision (none otherwise)."""
    if cur["state"] != Currency.AMBIGUOUS or not cur.get("candidates"):
        return []
    rev = (cur.get("current_revision") or {}).get("revision")
    return [
        md(candidates_intro(len(cur["candidates"]), rev)) + "\n",
        *(f"- {md(locator_text(loc))}" for loc in cur["candidates"]),
        "",
    ]


def _lineage(nodes: list[dict[str, Any]], depth: int = 0) -> list[str]:
    out = []
    for n in nodes:
        cycle = " **cycle**" if n.get("cycle") else ""
        out.append(
            f"{'  ' * depth}- {md(n['answer_id'])} ({md(n['kind'])}): integrity **{md(n['integrity'])}**, "
            f"currency **{md(n['currency'])}**{cycle}"
        )
        out += _lineage(n.get("children", []), depth + 1)
    return out


def _imported_facts(t: dict[str, Any]) -> list[str]:
    """An imported answer's facts, each with the mark and its attestation (no producer signed)."""
    mark, imp = imported_mark(t), t["imported"]
    ex, rt, pr = imp.get("export") or {}, t["runtime"], t["producer"]

    def fact(value: Any, f: Fact) -> str:
        return f"{md(value)} {md(f.tag(mark))}" + (f" ({md(f.detail)})" if f.detail else "")

    absent = fact(None, Fact("absent", RUNTIME_ABSENT))
    computed = md(Fact("importer-computed").tag(mark))
    sig = t["signature"]
    return [
        f"> **{IMPORTED_HEAD}.** Imported from {md(ex.get('file'))} ({md(ex.get('format'))}, SHA-256 "
        f"{md(ex.get('sha256'))}), trace {md(imp.get('trace_id'))}: signed by the importer, not by the "
        "pipeline that ran. Every fact below says who vouches for it.\n",
        f"- Run {md(t['run_id'])} ({md(t['kind'])}) {computed} (the trace id)\n"
        f"- Generated {fact(t['generated_at'], answer_fact(t, '$.generated_at'))}\n"
        f"- Producer {fact(pr.get('system'), answer_fact(t, '$.producer.system'))}, version "
        f"{fact(pr.get('version'), answer_fact(t, '$.producer.version'))}\n"
        f"- Model {fact(rt.get('model'), answer_fact(t, '$.runtime.model'))}; session "
        f"{fact(rt.get('session_id'), answer_fact(t, '$.runtime.session_id'))}\n"
        f"- Prompt template, pipeline, parameters: {absent}\n"
        f"- Authorization at run time: {absent}\n"
        f"- Importer signature **{md(sig['state'])}** by key {md(sig['keyid'][:16])}… (the importer's, "
        f"not a producer's); imported statement log entry {md(t['seq'])}\n",
    ]


def _manifest_facts(t: dict[str, Any]) -> list[str]:
    rt, az, pr = t["runtime"], t["authorization_at_run_time"], t["producer"]
    return [
        f"- Run {md(t['run_id'])} ({md(t['kind'])}), generated {md(t['generated_at'])} by "
        f"{md(pr.get('system'))} {md(pr.get('version'))}\n"
        f"- Model {md(rt.get('model'))}, prompt template {md(rt.get('prompt_template_version'))}, pipeline "
        f"{md(rt.get('pipeline_version'))}\n"
        f"- Authorization at run time (recorded data, not a grant): principal {md(az.get('principal'))}, "
        f"policy {md(az.get('policy_version'))}, decision {md(az.get('decision'))}\n"
        f"- Producer signature **{md(t['signature']['state'])}** by key {md(t['signature']['keyid'][:16])}…; "
        f"manifest log entry {md(t['seq'])}\n"
    ]


def _answer(i: int, a: dict[str, Any], people: dict[str, str]) -> list[str]:
    out = [f"## {i + 1}. Answer {md(a['answer_id'])}\n"]
    if not a["visible"]:
        return [*out, "Integrity: **unavailable** · Currency: **unavailable**\n"]
    t = a["trace"]
    out.append(f"Integrity: **{md(a['integrity'])}** · Currency: **{md(a['currency'])}**\n")
    imported = is_imported(t)
    out += _imported_facts(t) if imported else _manifest_facts(t)
    mark = imported_mark(t) if imported else ""

    def tag(path: str) -> str:
        return answer_fact(t, path).tag(mark) if imported else ""

    out.append(_text_slot("Question", t["question"], tag("$.question_sha256")))
    out.append(_text_slot("Answer", t["answer"], tag("$.answer_sha256")))
    out.append("### Citations\n")
    out.append("| # | Chars | Quoted span | Passages | Integrity | Currency |\n|---|---|---|---|---|---|")
    for c in t["citations"]:
        cited = tag(f"$.citations[{c['index']}]")
        out.append(
            f"| {c['index'] + 1}{' ' + md(cited) if cited else ''} | {c['answer_start']}–{c['answer_end']} | "
            f"{md(c['span'])} | "
            f"{md(', '.join(c['passage_ids']))} | **{md(c['integrity'])}** | **{md(c['currency'])}** |"
        )
    out.append("\n### Passages\n")
    for p in t["passages"]:
        out += _passage(p, a["tombstones"])
    return out + _answer_notes(t, a, people)


def _answer_notes(t: dict[str, Any], a: dict[str, Any], people: dict[str, str]) -> list[str]:
    """An answer's lineage, investigators' notes, holds and producer faults, when it has them."""
    out: list[str] = []
    if t["lineage"]:
        out += ["### Lineage (the strictest state applies)\n", *_lineage(t["lineage"]), ""]
    if t["findings"]:
        out.append("### Investigators' notes on this answer (signed)\n")
        out += [
            f"- entry {md(f['seq'])}, {md(f['at'])}, investigator {md(people.get(f['investigator'], '?'))} "
            f"({md(f['investigator'][:16])}…), on {md(f['target'])}: {md(f['note'])}"
            for f in t["findings"]
        ]
        out.append("")
    if a.get("holds"):
        out += ["### Legal holds over this evidence\n", *holds_md(a["holds"]), ""]
    if t["faults"]:
        out.append("### Producer faults recorded at ingest\n")
        out += [f"- {md(f.get('path'))}: {md(f.get('code'))}: {md(f.get('message'))}" for f in t["faults"]]
        out.append("")
    return out


def _summary_md(answers: list[dict[str, Any]]) -> list[str]:
    out = [
        "## Summary\n\n| # | Answer | Kind | Generated | Integrity | Currency |\n|---|---|---|---|---|---|"
    ]
    for i, a in enumerate(answers):
        t = a.get("trace") or {}
        out.append(
            f"| {i + 1} | {md(a['answer_id'])} | {md(t.get('kind', ''))} | {md(t.get('generated_at', ''))} | "
            f"**{md(a['integrity'])}** | **{md(a['currency'])}** |"
        )
    out.append("")
    return out


def _records_md(records: list[dict[str, Any]]) -> list[str]:
    """The log records the pack cites, each with the size its inclusion proof reaches."""
    out = ["## Log records in this pack\n\n| Entry | Kind | Leaf hash | Inclusion proof |\n|---|---|---|---|"]
    for rec in records:
        proof = rec["inclusion"]
        where = f"{len(proof['hashes'])} hashes to size {proof['tree_size']}" if proof else "no proof"
        kind = record_kind_text(rec["kind"])
        out.append(f"| {rec['seq']} | {md(kind)} | {md(rec['leaf_hash'][:16])}… | {where} |")
    out.append("")
    return out


def render_md(r: dict[str, Any]) -> str:
    """The whole Markdown report for report dict `r`."""
    cp, ex = r["checkpoint"], r["exported_by"]
    n = len(r["answers"])
    people = {str(k): str(v) for k, v in (r.get("people") or {}).items()}
    out = case_cover_md(r) if r.get("case") else []
    out += [
        f"# Evidence report: {n} answer{'s' if n != 1 else ''}\n",
        f"> **Computed at {md(r['computed_at'])} {md(checkpoint_headline(r))}.**  \n> Currency "
        f"{md(normalizer_words(r))}. A report cannot be revalidated after export: every state below is as "
        "of that moment. To check this pack offline, see *Signature and how to check this pack* at the "
        "end.\n",
        f"- Vault origin: {md(r['vault']['origin'])}",
        f"- Exported by: {md(ex['name'])} ({md(ex['role'])}), key {md(ex['key_id'][:16])}…",
        f"- Selection: {md(r.get('selection') or 'answer ids')}\n",
    ]
    if r["computed_against"].get("forensic"):
        out.append(f"> **FORENSIC EXPORT**: {md(r['computed_against'].get('forensic_reason'))}\n")
    out += _summary_md(r["answers"])
    if r.get("case"):
        out += case_sections_md(r)
    for i, a in enumerate(r["answers"]):
        out += _answer(i, a, people)
    out += _records_md(r["records"])
    out += signature_md(r)
    out.append("## Checkpoint note\n")
    out.append(fence("C2SP signed note, verbatim", cp["note"]))
    if r.get("head"):
        label = "The exporter's checkpoint over its own entries (C2SP signed note, verbatim)"
        out.append(fence(label, r["head"]["note"]))
    return "\n".join(out) + "\n"
