"""One answer's section of report.html: facts, texts, citations, passages, lineage.

Historical text appears only in blocks marked `historical`; a source's current text
only in a block marked `current` whose label names the revision and its date.  Where a
text is gone, its tombstone card or a `missing` alarm stands in its place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from tracer.engine.currency import COMPARED
from tracer.engine.vocabulary import (
    CURRENCY_MEANING,
    INTEGRITY_MEANING,
    Currency,
    Integrity,
    ModelInput,
    model_input_meaning,
)
from tracer.report.htmltext import block, esc, keyref, state
from tracer.report.imported import (
    IMPORTED_HEAD,
    RUNTIME_ABSENT,
    Fact,
    answer_fact,
    imported_mark,
    is_imported,
    passage_tag,
)
from tracer.report.words import (
    answer_time_text,
    candidates_intro,
    heading_path,
    is_revision_tombstone,
    locator_text,
    reason_text,
    subject_label,
)

__all__ = ["answer_section"]


def _facts(rows: list[tuple[str, str]]) -> str:
    items = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<dl class="facts">{items}</dl>'


def _states(integrity: str, currency: str, reason: str = "") -> str:
    why = f' <span class="reason">({esc(reason)})</span>' if reason else ""
    return (
        f'<p class="states-line"><span><span class="axis">Integrity</span>{state(integrity)}</span>'
        f'<span><span class="axis">Currency</span>{state(currency)}{why}</span></p>'
    )


def tombstone_card(tb: dict[str, Any]) -> str:
    rows = [
        ("In place of", esc(subject_label(tb))),
        ("Digest (SHA-256)", f'<span class="mono">{esc(tb.get("digest"))}</span>'),
        ("Policy", esc(tb.get("policy"))),
        ("Reason", esc(tb.get("reason"))),
        ("Authorized by", esc(tb.get("authorizer"))),
        ("Effective", esc(tb.get("effective_at"))),
        ("Log entry", esc(tb.get("seq"))),
    ]
    return f'<div class="tombstone"><h4>Tombstone: text purged by retention</h4>{_facts(rows)}</div>'


def _tombstone_table(tombs: list[dict[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td>{esc(subject_label(tb))}</td><td>{esc(tb.get('passage_id'))}</td><td>{esc(tb.get('policy'))}</td>"
        f"<td>{esc(tb.get('authorizer'))}</td><td>{esc(tb.get('effective_at'))}</td><td>{esc(tb.get('seq'))}</td></tr>"
        for tb in tombs
    )
    head = "<tr><th>In place of</th><th>Passage</th><th>Policy</th><th>Authorized by</th><th>Effective</th>"
    return f"<table>{head}<th>Log entry</th></tr>{rows}</table>"


def _text_slot(label: str, t: dict[str, Any], tag: str = "") -> str:
    """The historical text if it verified, else what stands in its place; never other text.
    `tag`: an imported text's mark and attestation (`[imported — …: importer-computed]`)."""
    st = t.get("state", Integrity.UNAVAILABLE)
    if isinstance(t.get("text"), str):
        head = f"{esc(label)}: historical text as recorded, SHA-256 verified ({esc(t['digest'][:16])}…)"
        if tag:
            head = (
                f"{esc(label)} {esc(tag)}: text as imported, SHA-256 verified against the digest the "
                f"importer signed ({esc(t['digest'][:16])}…)"
            )
        return block("historical", head, t["text"])
    if tag and st == Integrity.NOT_CAPTURED:
        return (
            f"<p>{esc(label)} <span class='imported'>{esc(tag)}</span>: {state(st)} "
            f"<span class='reason'>{esc(t.get('detail', ''))}</span>: the export held no whole text, "
            "nothing to verify</p>"
        )
    if st == Integrity.PURGED and t.get("tombstone"):
        return tombstone_card({"subject": label, **t["tombstone"]})
    if st == Integrity.MISSING:
        return (
            f'<div class="alarm"><strong>Missing</strong>: {esc(label)} is absent and no tombstone '
            f"explains it. Evidence lost (alarm). Recorded digest {esc(t.get('digest'))}.</div>"
        )
    if st == Integrity.CHECKSUM_MISMATCH:
        return (
            f'<div class="alarm"><strong>Checksum mismatch</strong>: the retained '
            f"{esc(label.lower())} does not hash to its recorded digest and is not shown. "
            f"{esc(t.get('detail', ''))}</div>"
        )
    return f"<p>{esc(label)}: {state(st)} <span class='reason'>{esc(t.get('detail', ''))}</span></p>"


def _citations(t: dict[str, Any], tag: Callable[[str], str] = lambda _path: "") -> str:
    if not t["citations"]:
        return "<p class='muted'>The answer cites no passage.</p>"
    rows = []
    for c in t["citations"]:
        span = esc(c["span"]) if c["span"] is not None else "<span class='muted'>not available</span>"
        unknown = (
            f"<br><strong>Unsupported:</strong> {esc(', '.join(c['unknown_passages']))}"
            if c["unknown_passages"]
            else ""
        )
        cited = tag(f"$.citations[{c['index']}]")
        mark = f" <span class='imported'>{esc(cited)}</span>" if cited else ""
        rows.append(
            f"<tr><td class='num'>{c['index'] + 1}{mark}</td>"
            f"<td class='mono nowrap'>{c['answer_start']}–{c['answer_end']}</td>"
            f"<td>{span}</td><td class='nowrap'>{'<br>'.join(esc(x) for x in c['passage_ids'])}{unknown}</td>"
            f"<td>{state(c['integrity'])}</td><td>{state(c['currency'])}</td></tr>"
        )
    head = "<tr><th class='num'>#</th><th>Chars</th><th>Quoted span of the answer</th><th>Passages</th>"
    return f"<table>{head}<th>Integrity</th><th>Currency</th></tr>{''.join(rows)}</table>"


def _imported(p: dict[str, Any]) -> str:
    """What an imported passage's export said, each field with its attestation state."""
    imp = p.get("imported")
    if not imp:
        return ""
    fields = "".join(
        f"<li>{esc(name)}: <strong>{esc(f.get('state'))}</strong>"
        + (f" ({esc(f.get('detail'))})" if f.get("detail") else "")
        + "</li>"
        for name, f in sorted((imp.get("fields") or {}).items())
    )
    facts = ", ".join(
        f"{label} {esc(imp.get(key))}"
        for label, key in (("span", "span_id"), ("document", "document_id"), ("revision", "revision"))
        if imp.get(key) is not None
    )
    return (
        f"<p class='imported'><strong>{esc(imp.get('mark'))}</strong>"
        + (f" — {facts}" if facts else "")
        + f"</p><ul class='attestation'>{fields}</ul>"
    )


def _chain(p: dict[str, Any]) -> str:
    ch = p["chain"]
    if ch is None:  # an imported passage that could not be located in any revision
        return _imported(p) or "<p>No source chain was recorded for this passage.</p>"
    src, doc, chunk, loc = ch["source"], ch["document"], ch["chunk"], ch["locator"]
    path = esc(heading_path(loc["heading_path"]))
    return (
        "<ol class='chain'>"
        f"<li>Source system <strong>{esc(src['system'])}</strong>, path {esc(src['path'])}, "
        f"source revision {esc(src['revision'])}</li>"
        f"<li>Imported document {esc(doc['document_id'])} at {esc(doc['uri'])}, revision "
        f"<strong>{esc(doc['revision'])}</strong> ({esc(doc['backend'])})</li>"
        f"<li>Chunk {esc(chunk['chunk_id'])} by {esc(chunk['pipeline_version'])}, normalizer "
        f"{esc(ch['normalizer_version'])}</li>"
        f"<li>Locator: {path}, paragraph {esc(loc['paragraph'])}, characters "
        f"{esc(loc['char_start'])}–{esc(loc['char_end'])}</li></ol>" + _imported(p)
    )


def _currency_blocks(cur: Mapping[str, Any]) -> str:
    """Old and current text side by side, where the source changed or moved since
    (`CurrencyResult.shows_current`, carried in the JSON as `shows_current`)."""
    if cur.get("state") not in COMPARED:
        return ""
    cited = cur.get("cited_revision")
    current = cur.get("current_revision")
    if not cur.get("shows_current") or not current:
        return _candidates(cur)  # nothing to set the historical quote against
    now = block(
        "current",
        f"Current revision {esc(current['revision'])}, dated {esc(current['committed_at'])}: "
        "today's source text, not what was retrieved",
        current["excerpt"],
    )
    if "old_excerpt" not in cur or not cited:
        return now + _candidates(cur)
    then = block(
        "historical",
        f"Historical quote: cited revision {esc(cited['revision'])}, dated {esc(cited['committed_at'])}",
        cur["old_excerpt"],
    )
    return f"<div class='compare'>{then}{now}</div>{_candidates(cur)}"


def _candidates(cur: Mapping[str, Any]) -> str:
    """Where the quote was found in the current revision, when more than one place fits."""
    found = cur.get("candidates") or []
    current = cur.get("current_revision") or {}
    if cur.get("state") != Currency.AMBIGUOUS or not found:
        return ""
    items = "".join(f"<li>{esc(locator_text(loc))}</li>" for loc in found)
    intro = esc(candidates_intro(len(found), current.get("revision")))
    return f"<p>{intro}</p><ol class='chain'>{items}</ol>"


def _passage(p: dict[str, Any], tombs: list[dict[str, Any]]) -> str:
    title = f"Passage {esc(p['passage_id'])}"
    if not p["visible"]:
        hidden = _states(Integrity.UNAVAILABLE, Currency.UNAVAILABLE)
        return f"<article class='passage hidden'><h4>{title}</h4>{hidden}</article>"
    cur = p["currency"]
    eff = p["effective"]
    meta = f"rank {esc(p['rank'])} · score {esc(p['score'])} · retrieved {esc(p['retrieved_at'])}"
    parts = [
        f"<article class='passage'><h4>{title} <span class='muted'>· {meta}</span></h4>",
        _states(p["integrity"], cur["state"], reason_text(cur)),
    ]
    if eff["integrity"] != p["integrity"] or eff["currency"] != cur["state"]:
        parts.append(
            f"<p>Through its lineage: integrity {state(eff['integrity'])}, "
            f"currency {state(eff['currency'])}</p>"
        )
    parts.append(_chain(p))
    tr = p["transform"]
    parts.append(
        f"<p>Transformation check: {esc(tr['state'])} <span class='reason'>{esc(tr['detail'])}</span></p>"
    )
    parts.append(_text_slot("Retrieved text", p["retrieved"], passage_tag(p, "retrieved_sha256")))
    parts.append(_model_input_html(p))
    parts.append(_currency_blocks(cur))
    parts.append(_answer_time_html(p.get("answer_time")))
    for tb in tombs:
        if is_revision_tombstone(tb, p["passage_id"]):
            parts.append(tombstone_card(tb))
    if p.get("derived_from"):
        parts.append(f"<p>Derived text: built from {esc(p['derived_from'])} (see lineage).</p>")
    parts.append("</article>")
    return "".join(parts)


def _model_input_html(p: dict[str, Any]) -> str:
    """The passage's model-input state, then its text (or that it is the retrieved text)."""
    out = ""
    sent = p.get("model_input_state")
    if sent:
        out += (
            f"<p>Model input: {state(str(sent))} "
            f"<span class='reason'>{esc(model_input_meaning(str(sent)))}</span></p>"
        )
    if sent == ModelInput.NOT_SENT:
        return out  # no model input: the word above stands where it would be
    if p["model_input"].get("digest") == p["retrieved"].get("digest"):
        return out + "<p class='muted'>Model input: identical to the retrieved text (same SHA-256).</p>"
    return out + _text_slot("Model input text", p["model_input"], passage_tag(p, "model_input_sha256"))


def _answer_time_html(at: dict[str, Any] | None) -> str:
    """The state at answer time and, when it differs, what the revision in force then said."""
    if not at:
        return ""
    out = f"<p class='answer-time'>{esc(answer_time_text(at))}</p>"
    then = at.get("in_force") or {}
    if then.get("excerpt") is not None:
        out += block(
            "historical",
            f"Revision {esc(then['revision'])} in force when the answer was generated, dated "
            f"{esc(then['committed_at'])}: neither what was retrieved nor today's text",
            then["excerpt"],
        )
    return out


def _lineage(nodes: list[dict[str, Any]]) -> str:
    items = []
    for n in nodes:
        cycle = " <strong>cycle</strong>" if n.get("cycle") else ""
        items.append(
            f"<li>{esc(n['answer_id'])} <span class='muted'>({esc(n['kind'])})</span> "
            f"{state(n['integrity'])} {state(n['currency'])}{cycle}{_lineage(n.get('children', []))}</li>"
        )
    return f"<ul class='lineage'>{''.join(items)}</ul>" if items else ""


def _imported_runtime(t: dict[str, Any]) -> list[tuple[str, str]]:
    """An imported answer's facts, each with the mark and its attestation (no producer signed)."""
    mark, imp = imported_mark(t), t["imported"]
    ex, rt, pr = imp.get("export") or {}, t["runtime"], t["producer"]

    def fact(value: Any, f: Fact) -> str:
        detail = f" <span class='reason'>({esc(f.detail)})</span>" if f.detail else ""
        return f"{esc(value)} <span class='imported'>{esc(f.tag(mark))}</span>{detail}"

    absent = fact(None, Fact("absent", RUNTIME_ABSENT))
    sig = t["signature"]
    return [
        ("Imported from", f"{esc(ex.get('file'))} ({esc(ex.get('format'))}) {keyref(ex.get('sha256'))}"),
        ("Run", fact(t["run_id"], Fact("importer-computed", "the trace id"))),
        ("Kind", esc(t["kind"])),
        ("Generated at", fact(t["generated_at"], answer_fact(t, "$.generated_at"))),
        ("Producer", fact(pr.get("system"), answer_fact(t, "$.producer.system"))),
        ("Producer version", fact(pr.get("version"), answer_fact(t, "$.producer.version"))),
        ("Model", fact(rt.get("model"), answer_fact(t, "$.runtime.model"))),
        ("Session", fact(rt.get("session_id"), answer_fact(t, "$.runtime.session_id"))),
        ("Prompt template, pipeline, parameters", absent),
        ("Authorization at run time", absent),
        (
            "Importer signature",
            f"{state(sig['state'])} {keyref(sig['keyid'])} <span class='muted'>(the importer's, not a "
            "producer's)</span>",
        ),
        ("Imported statement log entry", esc(t["seq"])),
    ]


def _runtime(t: dict[str, Any]) -> list[tuple[str, str]]:
    rt, az, pr = t["runtime"], t["authorization_at_run_time"], t["producer"]
    params = json.dumps(rt.get("parameters", {}), sort_keys=True, ensure_ascii=False)
    return [
        ("Run", esc(t["run_id"])),
        ("Kind", esc(t["kind"])),
        ("Generated at", esc(t["generated_at"])),
        ("Producer", f"{esc(pr.get('system'))} {esc(pr.get('version'))}"),
        ("Model", esc(rt.get("model"))),
        ("Prompt template", esc(rt.get("prompt_template_version"))),
        ("Pipeline", esc(rt.get("pipeline_version"))),
        ("Parameters", f"<span class='mono'>{esc(params)}</span>"),
        (
            "Authorization at run time",
            f"principal {esc(az.get('principal'))}, policy {esc(az.get('policy_version'))}, "
            f"decision {esc(az.get('decision'))} <span class='muted'>(recorded data, not a grant)</span>",
        ),
        (
            "Producer signature",
            f"{state(t['signature']['state'])} {keyref(t['signature']['keyid'])}",
        ),
        ("Manifest log entry", esc(t["seq"])),
    ]


def answer_section(i: int, a: dict[str, Any], people: dict[str, str] | None = None) -> str:
    names = people or {}
    head = f"<section class='answer' id='answer-{i + 1}'><h2>{i + 1}. Answer {esc(a['answer_id'])}</h2>"
    if not a["visible"]:
        return head + _states(Integrity.UNAVAILABLE, Currency.UNAVAILABLE) + "<p>Unavailable.</p></section>"
    t = a["trace"]
    parts = [head, _states(a["integrity"], a["currency"])]
    parts.append(
        f"<p class='muted'>{esc(INTEGRITY_MEANING.get(a['integrity'], ''))}; "
        f"{esc(CURRENCY_MEANING.get(a['currency'], ''))}.</p>"
    )
    imported = is_imported(t)
    if imported:
        parts.append(
            f"<p class='imported'><strong>{IMPORTED_HEAD}</strong>: signed by the importer, not by the "
            "pipeline that ran. Every fact below says who vouches for it.</p>"
        )
    parts.append(_facts(_imported_runtime(t) if imported else _runtime(t)))

    def tag(path: str) -> str:
        return answer_fact(t, path).tag(imported_mark(t)) if imported else ""

    parts.append(_text_slot("Question", t["question"], tag("$.question_sha256")))
    parts.append(_text_slot("Answer", t["answer"], tag("$.answer_sha256")))
    parts.append("<h3>Citations</h3>" + _citations(t, tag))
    parts.append("<h3>Passages</h3>" + "".join(_passage(p, a["tombstones"]) for p in t["passages"]))
    if a["tombstones"]:
        parts.append("<h3>Tombstones for this answer</h3>" + _tombstone_table(a["tombstones"]))
    parts.append(_answer_notes_html(t, a, names))
    parts.append("</section>")
    return "".join(parts)


def _answer_notes_html(t: dict[str, Any], a: dict[str, Any], names: dict[str, str]) -> str:
    """An answer's lineage, investigators' notes, holds and producer faults, when it has them."""
    from tracer.report.case_html import holds_html

    parts: list[str] = []
    if t["lineage"]:
        parts.append("<h3>Lineage (the strictest state applies)</h3>" + _lineage(t["lineage"]))
    if t["findings"]:
        parts.append(_findings_html(t["findings"], names))
    if a.get("holds"):
        parts.append("<h3>Legal holds over this evidence</h3>" + holds_html(a["holds"]))
    if t["faults"]:
        items = "".join(
            f"<li>{esc(f.get('path'))}: {esc(f.get('code'))}: {esc(f.get('message'))}</li>"
            for f in t["faults"]
        )
        parts.append(f"<h3>Producer faults recorded at ingest</h3><ul>{items}</ul>")
    return "".join(parts)


def _findings_html(findings: list[dict[str, Any]], names: dict[str, str]) -> str:
    """The investigators' signed notes on an answer, each under its signer's roster name."""
    rows = "".join(
        f"<tr><td>{esc(f['seq'])}</td><td>{esc(f['at'])}</td>"
        f"<td>{esc(names.get(f['investigator'], '?'))} {keyref(f['investigator'])}</td>"
        f"<td>{esc(f['target'])}</td><td class='note-text'>{esc(f['note'], keep_newlines=True)}</td></tr>"
        for f in findings
    )
    head_row = "<tr><th>Entry</th><th>At</th><th>Investigator</th><th>On</th><th>Note</th></tr>"
    return f"<h3>Investigators' notes on this answer (signed)</h3><table>{head_row}{rows}</table>"
