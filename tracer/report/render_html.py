"""report.html: one self-contained page an auditor can attach to a case file.

No script, no external resource of any kind (a Content-Security-Policy of
`default-src 'none'` says so to the browser too), CSS inlined from report.css, and
every untrusted string escaped and made inert.  Rendered from the report dict, so it
states exactly what the signed report.json states.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from tracer.engine.vocabulary import CURRENCY_MEANING, INTEGRITY_MEANING, Currency, Integrity
from tracer.report.case_html import case_cover_html, case_sections_html, signature_html
from tracer.report.html_answer import answer_section
from tracer.report.htmltext import esc, keyref, state
from tracer.report.words import checkpoint_headline, normalizer_words, record_kind_text, role_text

__all__ = ["render_html"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"


def _css() -> str:
    return resources.files("tracer.report").joinpath("report.css").read_text("utf-8")


def _grown(cp: dict[str, Any], ca: dict[str, Any]) -> str:
    if ca.get("size") == cp["size"]:
        return ""
    return (
        f"<p class='muted'>The vault's log held {esc(ca.get('size'))} entries when the states were "
        "computed; the entries after the custodian's checkpoint are investigators' access entries and "
        "notes, which do not change any state.</p>"
    )


def _banner(r: dict[str, Any]) -> str:
    cp, ca = r["checkpoint"], r["computed_against"]
    forensic = ""
    if ca.get("forensic"):
        forensic = (
            "<div class='alarm'><strong>Forensic export</strong>: the vault failed its rollback/fork "
            f"check when this report was made: {esc(ca.get('forensic_reason'))}</div>"
        )
    return (
        "<section class='banner' role='note'>"
        f"<p><strong>Computed at {esc(r['computed_at'])} {esc(checkpoint_headline(r))}.</strong></p>"
        f"{'' if r.get('head') else _grown(cp, ca)}"
        f"<p>Currency {esc(normalizer_words(r))}.</p>"
        "<p>A report cannot be revalidated after export: every state below is as of that moment. "
        "Sources may have changed since; revalidate in the vault for today's states.</p>"
        "<p>Check this pack offline with <code>tracer verify-pack DIR</code>, or with standard tools "
        "(DSSE, C2SP signed note, RFC 6962 inclusion proofs): every step is under "
        "<a href='#signature'>Signature and how to check this pack</a> at the end of this page.</p>"
        f"</section>{forensic}"
    )


def _header(r: dict[str, Any]) -> str:
    ex, vault = r["exported_by"], r["vault"]
    n = len(r["answers"])
    rows = [
        ("Vault origin", esc(vault["origin"])),
        (
            "Custodian",
            f"{esc(vault['custodian']['name'])} {keyref(vault['custodian']['key_id'])}",
        ),
        (
            "Exported by",
            f"{esc(ex['name'])} ({esc(ex['role'])}) {keyref(ex['key_id'])}",
        ),
        ("Computed at", esc(r["computed_at"])),
    ]
    if r.get("selection"):
        rows.append(("Selection", esc(r["selection"])))
    facts = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return (
        "<header><p class='kicker'>tracer evidence report</p>"
        f"<h1>Evidence report: {n} answer{'s' if n != 1 else ''}</h1>"
        f"<dl class='facts'>{facts}</dl></header>"
    )


def _summary(r: dict[str, Any]) -> str:
    rows = []
    for i, a in enumerate(r["answers"]):
        t = a.get("trace")
        kind, when, n_cit, n_pas = (
            (t["kind"], t["generated_at"], len(t["citations"]), len(t["passages"])) if t else (None,) * 4
        )
        rows.append(
            f"<tr><td class='num'>{i + 1}</td><td><a href='#answer-{i + 1}'>{esc(a['answer_id'])}</a></td>"
            f"<td>{esc(kind)}</td><td>{esc(when)}</td>"
            f"<td>{state(a['integrity'])}</td><td>{state(a['currency'])}</td>"
            f"<td class='num'>{esc(n_cit)}</td><td class='num'>{esc(n_pas)}</td></tr>"
        )
    head = (
        "<tr><th class='num'>#</th><th>Answer</th><th>Kind</th><th>Generated</th><th>Integrity</th>"
        "<th>Currency</th><th class='num'>Citations</th><th class='num'>Passages</th></tr>"
    )
    return f"<h2>Summary</h2><table class='summary'>{head}{''.join(rows)}</table>"


def _legend(r: dict[str, Any]) -> str:
    used_i = {a["integrity"] for a in r["answers"]}
    used_c = {a["currency"] for a in r["answers"]}
    items = [
        f"<tr><td>{state(s)}</td><td>integrity</td><td>{esc(INTEGRITY_MEANING[s])}</td></tr>"
        for s in Integrity
        if s in used_i
    ]
    items += [
        f"<tr><td>{state(s)}</td><td>currency</td><td>{esc(CURRENCY_MEANING[s])}</td></tr>"
        for s in Currency
        if s in used_c
    ]
    return f"<h3>What the states in this report mean</h3><table>{''.join(items)}</table>"


def _records(r: dict[str, Any]) -> str:
    rows = []
    for rec in r["records"]:
        roles = "; ".join(
            " ".join(
                x
                for x in (role_text(c.get("role", "")), c.get("answer_id", ""), c.get("passage_id", ""))
                if x
            )
            for c in rec["cited_by"]
        )
        proof = rec["inclusion"]
        proof_text = f"{len(proof['hashes'])} hashes to size {proof['tree_size']}" if proof else "no proof"
        rows.append(
            f"<tr><td class='num'>{esc(rec['seq'])}</td><td>{esc(record_kind_text(rec['kind']))}</td>"
            f"<td>{esc(roles)}</td>"
            f"<td>{keyref(rec['leaf_hash'])}</td><td>{esc(proof_text)}</td></tr>"
        )
    head = (
        "<tr><th class='num'>Entry</th><th>Kind</th><th>Cited as</th><th>Leaf hash</th>"
        "<th>Inclusion proof</th></tr>"
    )
    return (
        "<section class='answer'><h2>Log records in this pack</h2>"
        "<p>Each record is carried in report.json as its exact log entry bytes with an RFC 6962 "
        "inclusion proof to the custodian's checkpoint below, or, for an entry appended after it, to the "
        "exporter's own checkpoint, which a consistency proof ties to the custodian's.</p>"
        f"<table>{head}{''.join(rows)}</table></section>"
    )


def render_html(r: dict[str, Any]) -> str:
    """The whole page for report dict `r`."""
    people = {str(k): str(v) for k, v in (r.get("people") or {}).items()}
    answers = "".join(answer_section(i, a, people) for i, a in enumerate(r["answers"]))
    cover = case_cover_html(r) if r.get("case") else ""
    case = case_sections_html(r) if r.get("case") else ""
    head = r.get("head")
    head_note = (
        "<p>The exporter's checkpoint over its own entries (C2SP signed note, verbatim; report.json "
        "head):</p>"
        f"<pre>{esc(head['note'], keep_newlines=True)}</pre>"
        if head
        else ""
    )
    origin = esc(r["vault"]["origin"])
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{_CSP}\">"
        "<meta name='referrer' content='no-referrer'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>Evidence report: {origin}</title><style>{_css()}</style></head><body>"
        f"{cover}{_header(r)}{_banner(r)}{_summary(r)}{_legend(r)}{case}{answers}{_records(r)}"
        f"{signature_html(r)}"
        "<footer><p>Checkpoint note (C2SP signed note, verbatim; also in checkpoint.note):</p>"
        f"<pre>{esc(r['checkpoint']['note'], keep_newlines=True)}</pre>{head_note}"
        f"<p>{esc(r['limits'])}</p></footer></body></html>\n"
    )
