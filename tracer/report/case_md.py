"""report.md sections for the case file, holds, and the pack's own signature.

Rendered from report.json like the rest of report.md: every string an investigator,
producer or source wrote is escaped and made inert (`mdtext`); free texts (notes, the
conclusion, the purpose) go in fenced blocks.
"""

from __future__ import annotations

from typing import Any

from tracer.report.mdtext import fence, md
from tracer.report.words import PACK_CHECK_CODE, finding_record, hold_case, hold_reason

__all__ = ["case_cover_md", "case_sections_md", "holds_md", "person_md", "signature_md"]


def person_md(p: dict[str, Any]) -> str:
    return f"{md(p.get('name'))} ({md(str(p.get('key_id', ''))[:16])}…)"


def holds_md(holds: list[dict[str, Any]]) -> list[str]:
    out = []
    for h in holds:
        state = "**IN FORCE**" if h["in_force"] else f"released at log entry {md(h['release']['seq'])}"
        out.append(
            f"- LEGAL HOLD, log entry {md(h['seq'])}: {state}; {md(h['subject']['kind'])} "
            f"{md(h['subject']['id'])}; {md(hold_reason(h))}; placed {md(h['at'])} by "
            f"{person_md(h['signer'])}{md(hold_case(h))}"
        )
        if h["release"] is not None:
            r = h["release"]
            out.append(
                f"  - released {md(r['at'])} by {person_md(r['signer'])}: {md(hold_reason(h, 'release.'))}"
            )
    return out


def pack_holds(r: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(holds placed under the case, other holds in force over the pack's answers), each once."""
    under = list(r["case"]["holds"])
    seen = {h["seq"] for h in under}
    others: list[dict[str, Any]] = []
    for a in r["answers"]:
        for h in a.get("holds") or []:
            if h["seq"] not in seen:
                seen.add(h["seq"])
                others.append(h)
    return under, others


def case_cover_md(r: dict[str, Any]) -> list[str]:
    c, ex = r["case"], r["exported_by"]
    sel = c["selection"]
    out = [
        f"# Case {md(c['case_id'])}: {md(c['title'])}\n",
        f"> **Evidence pack for case {md(c['case_id'])}, computed at {md(r['computed_at'])}.** "
        "Signed by the exporting investigator; see *Signature and how to check this pack* below.\n",
        f"- Case: {md(c['case_id'])}, opened {md(c['opened']['at'])} by {person_md(c['opened']['by'])} "
        f"(log entry {md(c['opened']['seq'])})",
        f"- Exported by: {md(ex['name'])} ({md(ex['role'])}), key {md(ex['key_id'][:16])}…",
        "- People: " + ", ".join(f"{person_md(p)}, {md(p.get('role'))}" for p in c["investigators"]),
        f"- Selected: {md(sel['what'])} ({len(sel['answer_ids'])} answer(s))",
        f"- Why: {md(sel['why'] or 'not stated')}",
        f"- Vault origin: {md(r['vault']['origin'])}\n",
        fence("Purpose of the case", c["purpose"]),
    ]
    return out


def _verification(v: dict[str, Any]) -> list[str]:
    result = "**OK**: no finding" if v["ok"] else f"**{len(v['findings'])} finding(s)**"
    out = [
        "## Vault-wide verification at export\n",
        f"Computed {md(v['computed_at'])} over the log's {md(v['log_size'])} entries ({md(v['scope'])}): "
        f"{result}.\n",
    ]
    for f in v["findings"]:
        rec = finding_record(f)
        on = f" ({md(rec)})" if rec else ""
        out.append(f"- {md(f['kind'])} at log entry {md(f['seq'])}{on}: {md(f['detail'])}")
    if v["findings"]:
        out.append("")
    return out


def case_sections_md(r: dict[str, Any]) -> list[str]:
    c = r["case"]
    out = _verification(r["verification"])
    out.append("## Tags\n")
    out += [
        f"- **{md(t['tag'])}** on {md(t['target'])} of {md(t['answer_id'])}, {md(t['at'])}, by "
        f"{person_md(t['by'])} (entry {md(t['seq'])})"
        for t in c["tags"]
    ] or ["No tags."]
    out += _notes_md(c["notes"])
    out.append("## Investigators' notes on answers (signed)\n")
    out += [
        f"- {md(f['answer_id'])} {md(f['target'])}: {md(f['note'])} — {person_md(f['by'])}, {md(f['at'])} "
        f"(entry {md(f['seq'])})"
        for f in c["findings"]
    ] or ["No notes on answers under this case."]
    out += _holds_section_md(r)
    out.append("\n## Activity of the case\n")
    out.append("| Entry | When | Who | Action | Target | Recorded |\n|---|---|---|---|---|---|")
    out += [
        f"| {md(a['seq'])} | {md(a['at'])} | {person_md(a['by'])} | {md(a['action'])} | {md(a['target'])} | "
        f"{'under the case' if a['under_case'] else 'concerns its answers'} |"
        for a in c["activity"]
    ]
    out += _conclusion_md(c["conclusion"])
    return out


def _notes_md(notes: list[dict[str, Any]]) -> list[str]:
    out = ["\n## Case notes (in the order they were written)\n"]
    for n in notes:
        about = f" on {md(n['answer_id'])}" if n["answer_id"] else ""
        out.append(fence(f"{md(n['at'])}, {person_md(n['by'])}{about}, log entry {md(n['seq'])}", n["text"]))
    if not notes:
        out.append("No notes.\n")
    return out


def _holds_section_md(r: dict[str, Any]) -> list[str]:
    out = ["\n## Legal holds\n"]
    under, others = pack_holds(r)
    out += holds_md(under) or ["No hold was placed under this case."]
    if others:
        out.append("\nAlso in force over the evidence in this pack (placed outside this case):\n")
        out += holds_md(others)
    elif not under:
        out.append("No hold you may see is in force over the evidence in this pack.")
    return out


def _conclusion_md(conc: dict[str, Any] | None) -> list[str]:
    if conc is None:
        return ["\n## Conclusion\n", "No conclusion was signed before this export.\n"]
    return [
        "\n## Conclusion\n",
        fence(
            f"Conclusion by {person_md(conc['by'])}, {md(conc['at'])}, log entry {md(conc['seq'])}",
            conc["text"],
        ),
    ]


def signature_md(r: dict[str, Any]) -> list[str]:
    ex, cust = r["exported_by"], r["vault"]["custodian"]
    head = r.get("head")
    proofs = (
        f"the custodian's checkpoint (size {md(r['checkpoint']['size'])}) or to the exporter's own "
        f"checkpoint (size {md(head['size'])}, `report.json` `head`), which a consistency proof ties to "
        "the custodian's"
        if head
        else f"the custodian's checkpoint (size {md(r['checkpoint']['size'])})"
    )
    head_step = (
        "For an entry proven to the exporter's checkpoint, check `head.note` the same way with "
        "`keys.json` `exporter.verifier_key`, and its `head.consistency` proof from the custodian's "
        "size to its own (RFC 9162 section 2.1.4.2). "
        if head
        else ""
    )
    return [
        "## Signature and how to check this pack\n",
        f"This pack is **signed by {md(ex['name'])}** (Ed25519 key {md(ex['key_id'])}). The signature is in "
        "`report.dsse.json`: a DSSE envelope of type `application/vnd.tracer.report.v1+json` over the exact "
        "bytes of `report.json`. `report.json` lists the SHA-256 of every other file in the pack, this one "
        "included, so the one signature covers the whole pack. The public keys are in `keys.json`.\n",
        f"Each log entry the pack cites carries an RFC 6962 inclusion proof to {proofs}. "
        f"`checkpoint.note` is signed by the vault's custodian, {md(cust['name'])} "
        f"(key {md(cust['key_id'][:16])}…).\n",
        "How to check it, with nothing but this directory and the custodian's public key:\n",
        "1. Obtain the custodian's public key yourself, from the custodian, not from this pack, and "
        "compare it with `keys.json` `custodian.verifier_key`.",
        "2. With tracer: `tracer verify-pack DIR` checks everything below (exit 0 when every signature, "
        "proof and digest holds; each failure is named with its file and place).",
        "3. Without tracer, the signature and the files, in Python with securesystemslib (run it in "
        "this directory):\n",
        f"```python\n{PACK_CHECK_CODE}\n```\n",
        "4. `checkpoint.note` is a C2SP signed note (origin, tree size, base64 root, a blank line, then "
        "signature lines): its Ed25519 signature by the custodian key covers the text before the blank "
        "line, newline included (in Go: `golang.org/x/mod/sumdb/note` with the verifier key).",
        "5. Each record in `report.json` `records[]`: the SHA-256 of the byte 0x00 followed by the "
        "decoded `entry` is its `leaf_hash`, and its `inclusion` proof leads from that leaf to the "
        f"checkpoint's root (RFC 9162 section 2.1.3.2). {head_step}The entry's own DSSE envelope is "
        "signed by the key `keys.json` lists for its signer.\n",
    ]
