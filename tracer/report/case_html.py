"""report.html sections for the case file, holds, and the pack's own signature.

The cover page is what a lawyer reads first: the case, its purpose, who worked on it
(by name, fingerprint beside), when the pack was computed, what was selected and why.
Every untrusted string goes through `esc` (inert, then HTML-escaped).
"""

from __future__ import annotations

from typing import Any

from tracer.report.case_md import pack_holds
from tracer.report.htmltext import esc, keyref
from tracer.report.words import PACK_CHECK_CODE, finding_record, hold_case, hold_reason

__all__ = ["case_cover_html", "case_sections_html", "holds_html", "person_html", "signature_html"]


def person_html(p: dict[str, Any]) -> str:
    return f"{esc(p.get('name'))} {keyref(p.get('key_id', ''))}"


def _pre(text: str) -> str:
    return f"<pre class='note-text'>{esc(text, keep_newlines=True)}</pre>"


def holds_html(holds: list[dict[str, Any]]) -> str:
    items = []
    for h in holds:
        state = (
            "<strong>IN FORCE</strong>"
            if h["in_force"]
            else f"released at log entry {esc(h['release']['seq'])} by "
            f"{person_html(h['release']['signer'])}, {esc(h['release']['at'])}: "
            f"{esc(hold_reason(h, 'release.'))}"
        )
        items.append(
            f"<div class='hold'><h4>Legal hold, log entry {esc(h['seq'])}</h4>"
            f"<p>{state}. {esc(h['subject']['kind'])} <span class='mono'>{esc(h['subject']['id'])}</span>; "
            f"{esc(hold_reason(h))}; placed {esc(h['at'])} by {person_html(h['signer'])}"
            f"{esc(hold_case(h))}.</p></div>"
        )
    return "".join(items)


def case_cover_html(r: dict[str, Any]) -> str:
    c, ex = r["case"], r["exported_by"]
    sel = c["selection"]
    people = "".join(
        f"<li>{person_html(p)} <span class='muted'>{esc(p['role'])}</span></li>" for p in c["investigators"]
    )
    rows = [
        ("Case", f"<span class='mono'>{esc(c['case_id'])}</span>"),
        (
            "Opened",
            f"{esc(c['opened']['at'])} by {person_html(c['opened']['by'])} "
            f"(log entry {esc(c['opened']['seq'])})",
        ),
        ("Computed at", esc(r["computed_at"])),
        ("Exported and signed by", f"{esc(ex['name'])} ({esc(ex['role'])}) {keyref(ex['key_id'])}"),
        ("People", f"<ul class='people'>{people}</ul>"),
        ("Selected", f"{esc(sel['what'])} — {len(sel['answer_ids'])} answer(s)"),
        ("Why", esc(sel["why"] or "not stated")),
        ("Vault", f"{esc(r['vault']['origin'])}; custodian {person_html(r['vault']['custodian'])}"),
    ]
    facts = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    v = r["verification"]
    verdict = "OK: no finding" if v["ok"] else f"{len(v['findings'])} finding(s)"
    return (
        "<header class='cover'><p class='kicker'>tracer evidence pack · case file</p>"
        f"<h1>Case {esc(c['case_id'])}: {esc(c['title'])}</h1>"
        f"<div class='purpose'><div class='label'>Purpose</div>{_pre(c['purpose'])}</div>"
        f"<dl class='facts'>{facts}</dl>"
        f"<p class='verdict'>Vault-wide verification at export: <strong>{esc(verdict)}</strong> "
        f"({esc(v['scope'])}). This pack is signed; see <a href='#signature'>Signature and how to check "
        "this pack</a>.</p></header>"
    )


def case_sections_html(r: dict[str, Any]) -> str:
    c = r["case"]
    return "".join(
        [
            _verification_html(r["verification"]),
            _tags_html(c["tags"]),
            _notes_html(c["notes"]),
            _findings_html(c["findings"]),
            _holds_section_html(r),
            _activity_html(c["activity"]),
            _conclusion_html(c["conclusion"]),
            "</section>",
        ]
    )


def _verification_html(v: dict[str, Any]) -> str:
    verdict = "OK: no finding" if v["ok"] else f"{len(v['findings'])} finding(s)"
    found = "".join(
        f"<tr><td class='num'>{esc(f['seq'])}</td><td>{esc(f['kind'])}</td>"
        f"<td>{esc(finding_record(f))}</td><td>{esc(f['detail'])}</td></tr>"
        for f in v["findings"]
    )
    return (
        "<section class='case'><h2>Vault-wide verification at export</h2>"
        f"<p>Computed {esc(v['computed_at'])} over the log's {esc(v['log_size'])} entries "
        f"({esc(v['scope'])}): <strong>{esc(verdict)}</strong>.</p>"
        + (
            f"<table><tr><th class='num'>Entry</th><th>Kind</th><th>Record</th><th>Detail</th></tr>{found}"
            "</table>"
            if found
            else ""
        )
    )


def _tags_html(tags_in: list[dict[str, Any]]) -> str:
    tags = "".join(
        f"<tr><td class='num'>{esc(t['seq'])}</td><td><strong>{esc(t['tag'])}</strong></td>"
        f"<td>{esc(t['answer_id'])}</td><td>{esc(t['target'])}</td><td>{person_html(t['by'])}</td>"
        f"<td>{esc(t['at'])}</td></tr>"
        for t in tags_in
    )
    return "<h2>Tags</h2>" + (
        "<table><tr><th class='num'>Entry</th><th>Tag</th><th>Answer</th><th>On</th><th>By</th>"
        f"<th>At</th></tr>{tags}</table>"
        if tags
        else "<p>No tags.</p>"
    )


def _notes_html(notes_in: list[dict[str, Any]]) -> str:
    notes = "".join(
        f"<div class='note'><div class='label'>{esc(n['at'])}, {person_html(n['by'])}"
        f"{' on ' + esc(n['answer_id']) if n['answer_id'] else ''}, log entry {esc(n['seq'])}</div>"
        f"{_pre(n['text'])}</div>"
        for n in notes_in
    )
    return "<h2>Case notes</h2>" + (notes or "<p>No notes.</p>")


def _findings_html(findings: list[dict[str, Any]]) -> str:
    finds = "".join(
        f"<tr><td class='num'>{esc(f['seq'])}</td><td>{esc(f['answer_id'])}</td><td>{esc(f['target'])}</td>"
        f"<td class='note-text'>{esc(f['note'], keep_newlines=True)}</td><td>{person_html(f['by'])}</td>"
        f"<td>{esc(f['at'])}</td></tr>"
        for f in findings
    )
    return "<h2>Investigators' notes on answers (signed)</h2>" + (
        "<table><tr><th class='num'>Entry</th><th>Answer</th><th>On</th><th>Note</th><th>By</th>"
        f"<th>At</th></tr>{finds}</table>"
        if finds
        else "<p>No notes on answers under this case.</p>"
    )


def _holds_section_html(r: dict[str, Any]) -> str:
    under, others = pack_holds(r)
    also = (
        "<p>Also in force over the evidence in this pack (placed outside this case):</p>" + holds_html(others)
        if others
        else ""
        if under
        else "<p>No hold you may see is in force over the evidence in this pack.</p>"
    )
    return "<h2>Legal holds</h2>" + (holds_html(under) or "<p>No hold was placed under this case.</p>") + also


def _activity_html(activity: list[dict[str, Any]]) -> str:
    acts = "".join(
        f"<tr><td class='num'>{esc(a['seq'])}</td><td>{esc(a['at'])}</td><td>{person_html(a['by'])}</td>"
        f"<td>{esc(a['action'])}</td><td>{esc(a['target'])}</td>"
        f"<td>{'under the case' if a['under_case'] else 'concerns its answers'}</td></tr>"
        for a in activity
    )
    return (
        "<h2>Activity of the case</h2><table><tr><th class='num'>Entry</th><th>When</th><th>Who</th>"
        f"<th>Action</th><th>Target</th><th>Recorded</th></tr>{acts}</table>"
    )


def _conclusion_html(conc: dict[str, Any] | None) -> str:
    return "<h2>Conclusion</h2>" + (
        "<p>No conclusion was signed before this export.</p>"
        if conc is None
        else f"<div class='note conclusion'><div class='label'>Conclusion by {person_html(conc['by'])}, "
        f"{esc(conc['at'])}, log entry {esc(conc['seq'])}</div>{_pre(conc['text'])}</div>"
    )


def signature_html(r: dict[str, Any]) -> str:
    ex, cust, head = r["exported_by"], r["vault"]["custodian"], r.get("head")
    proofs = (
        f"the custodian's checkpoint (size {esc(r['checkpoint']['size'])}) or to the exporter's own "
        f"checkpoint (size {esc(head['size'])}, <code>report.json</code> <code>head</code>), which a "
        "consistency proof ties to the custodian's"
        if head
        else f"the custodian's checkpoint (size {esc(r['checkpoint']['size'])})"
    )
    head_step = (
        "For an entry proven to the exporter's checkpoint, check <code>head.note</code> the same way "
        "with <code>keys.json</code> <code>exporter.verifier_key</code>, and its "
        "<code>head.consistency</code> proof from the custodian's size to its own (RFC 9162 section "
        "2.1.4.2). "
        if head
        else ""
    )
    return (
        "<section class='signature' id='signature'><h2>Signature and how to check this pack</h2>"
        f"<p>This pack is <strong>signed by {esc(ex['name'])}</strong> (Ed25519 key "
        f"<span class='mono'>{esc(ex['key_id'])}</span>). The signature is in "
        "<code>report.dsse.json</code>: a DSSE envelope of type "
        "<code>application/vnd.tracer.report.v1+json</code> over the exact bytes of "
        "<code>report.json</code>, which lists the SHA-256 of every other file in the pack, this page "
        "included; the one signature therefore covers the whole pack. The public keys are in "
        "<code>keys.json</code>.</p>"
        f"<p>Each log entry the pack cites carries an RFC 6962 inclusion proof to {proofs}. "
        f"<code>checkpoint.note</code> is signed by the vault's custodian, {esc(cust['name'])} "
        f"{keyref(cust['key_id'])}.</p>"
        "<p>How to check it, with nothing but this directory and the custodian's public key:</p><ol>"
        "<li>Obtain the custodian's public key yourself, from the custodian, not from this pack, and "
        "compare it with <code>keys.json</code> <code>custodian.verifier_key</code>.</li>"
        "<li>With tracer: <code>tracer verify-pack DIR</code> checks everything below (exit 0 when every "
        "signature, proof and digest holds; each failure is named with its file and place).</li>"
        "<li>Without tracer, the signature and the files, in Python with securesystemslib (run it in "
        f"this directory):<pre>{esc(PACK_CHECK_CODE, keep_newlines=True)}</pre></li>"
        "<li><code>checkpoint.note</code> is a C2SP signed note (origin, tree size, base64 root, a blank "
        "line, then signature lines): its Ed25519 signature by the custodian key covers the text before "
        "the blank line, newline included (in Go: <code>golang.org/x/mod/sumdb/note</code> with the "
        "verifier key).</li>"
        "<li>Each record in <code>report.json</code> <code>records[]</code>: the SHA-256 of the byte 0x00 "
        "followed by the decoded <code>entry</code> is its <code>leaf_hash</code>, and its "
        "<code>inclusion</code> proof leads from that leaf to the checkpoint's root (RFC 9162 section "
        f"2.1.3.2). {head_step}The entry's own DSSE envelope is signed by the key <code>keys.json</code> "
        "lists for its signer.</li></ol></section>"
    )
