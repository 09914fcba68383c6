"""Plain, readable terminal output.  Every untrusted string passes through `inert`.

Words: what `verify` raises are *findings*; what an investigator signs and appends
(`tracer finding`) is an *investigator note*.  The two are never printed under one name.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from store.attest import IMPORTED_MARK
from store.queries import TombstoneRow
from store.roster import investigators
from tracer.cli.render_imported import chain_lines, citation_mark, imported_head, imported_passage_chain
from tracer.engine.answertime import AnswerTime, answer_time_sentence
from tracer.engine.catalog import AnswerState, Revalidation
from tracer.engine.currency import CurrencyResult
from tracer.engine.evidence import TextResult
from tracer.engine.relocate import Locator
from tracer.engine.session import Session
from tracer.engine.times import utc
from tracer.engine.trace import AnswerTrace, CitationTrace, LineageNode, PassageTrace
from tracer.engine.vocabulary import Currency, Integrity
from tracer.inert import inert

if TYPE_CHECKING:
    # verify's machinery (Arrow, the log pass) is for `tracer verify`, not every command
    from tracer.engine.verify import VerifyReport

__all__ = ["print_revalidation", "print_trace", "print_verify"]


def _block(text: str, indent: str = "    ") -> str:
    lines = inert(text).splitlines() or [""]
    return "\n".join(
        textwrap.fill(line, 96, initial_indent=indent, subsequent_indent=indent) or indent for line in lines
    )


def print_verify(report: VerifyReport) -> None:
    cp = report.checkpoint
    print(f"computed at {report.computed_at}")
    print(
        f"checkpoint  size {cp['size']} (log has {cp['log_size']}), recomputed root {cp['recomputed_root']}"
    )
    if report.viewer:
        print(f"viewer      {inert(report.viewer)}")
    if report.mode == "incremental":
        print(
            f"mode        incremental: entries before {report.verified_from} covered by your receipt "
            "(leaves, checkpoints, statements, views and every readable text re-checked; "
            "--full re-checks all)"
        )
    else:
        print("mode        full")
    for w in report.warnings:
        print(f"note        {inert(w)}")
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()))
    print(f"counts      {counts}")
    if report.counts.get("out_of_scope"):
        print(
            f"            {report.counts['out_of_scope']} text(s) outside your scope: checksums not checked"
        )
    if report.ok:
        print("RESULT      OK: no findings")
    else:
        print(f"RESULT      {len(report.findings)} finding(s)")
    for f in report.findings:
        where = f"entry {f.seq}" if f.seq is not None else "vault"
        rec = " ".join(f"{k}={inert(str(v))}" for k, v in f.record.items())
        print(f"  [{f.kind}] {where} {rec}\n      {inert(f.detail)}")


def _text(label: str, t: TextResult) -> str:
    if t.state == Integrity.NOT_SENT:
        return f"  {label}: NOT_SENT  ({inert(t.detail, keep_newlines=False)}): no model input"
    if t.state == Integrity.NOT_CAPTURED:
        detail = inert(t.detail, keep_newlines=False)
        return f"  {label}: NOT_CAPTURED  ({detail}): no whole text, nothing to verify"
    head = f"  {label}: {t.state.upper()}  recorded {t.digest[:16]}…"
    if t.recomputed:
        head += f"  recomputed {t.recomputed[:16]}…"
    if t.verified and t.text is not None:
        return head + "\n" + _block(t.text)
    if t.tombstone is not None:
        return head + _tombstone_line(t.tombstone)
    if t.state == Integrity.MISSING:
        return head + "\n    ALARM: MISSING - absent and no tombstone explains it"
    return head + (f"\n    ({inert(t.detail)})" if t.detail else "")


def _tombstone_line(tb: TombstoneRow) -> str:
    """A tombstone on one line: its fields cannot start a line of their own (a policy or
    reason holding a newline would print a fake result line)."""
    policy, reason, by, at = (
        inert(v, keep_newlines=False) for v in (tb.policy, tb.reason, tb.authorizer, tb.effective_at)
    )
    return (
        f"\n    TOMBSTONE policy {policy}; reason {reason}; authorizer {by}; "
        f"effective {at}; log entry {tb.seq}"
    )


def _content(label: str, t: TextResult) -> str:
    """A stored text's integrity without printing it (a tombstone or alarm in its place)."""
    head = f"  {label}: {t.state.upper()}  recorded {t.digest[:16]}…"
    if t.tombstone is not None and t.state == Integrity.PURGED:
        return head + _tombstone_line(t.tombstone)
    if t.state == Integrity.MISSING:
        return head + "\n    ALARM: MISSING - absent and no tombstone explains it"
    if t.state != Integrity.INTACT and t.detail:
        return head + f"\n    ({inert(t.detail)})"
    return head


def _passage(p: PassageTrace) -> str:
    out = _passage_head(p)
    if not p.visible:
        out.append("  UNAVAILABLE: outside your scope")
        return "\n".join(out)
    m = p.record
    out.append(_text("retrieved", p.retrieved))
    state = f" ({p.model_input_state})" if p.model_input_state else ""
    out.append(_text(f"model input{state}", p.model_input))
    if p.imported:
        out += imported_passage_chain(p)
        out.append(_transform_line(p))
        return "\n".join(out)
    if m is None:
        return "\n".join(out)
    lines = chain_lines(m)
    out.append("  chain: " + lines[0])
    out += lines[1:]
    cited = p.currency.cited_text
    if cited is not None:
        out.append(_content("cited revision text", cited))
    out.append(_transform_line(p))
    out.append(f"  retrieved at {m.retrieved_at}  rank {m.rank}  score {m.score}")
    out += _current_lines(p.currency)
    return "\n".join(out)


def _passage_head(p: PassageTrace) -> list[str]:
    """The passage's two states in words, and what its lineage makes of them."""
    out = [
        f"passage {inert(p.passage_id)}  integrity {p.integrity.upper()}  "
        f"currency {p.currency.state.upper()} ({p.currency.reason})"
        + (f": {inert(p.currency.detail, keep_newlines=False)}" if p.currency.detail and p.visible else "")
        + (f" under {p.currency.normalizer}" if p.currency.normalizer and p.visible else "")
    ]
    if p.effective_currency != p.currency.state or p.effective_integrity != p.integrity:
        out.append(
            f"  through lineage: integrity {p.effective_integrity.upper()}, "
            f"currency {p.effective_currency.upper()}"
        )
    return out


def _transform_line(p: PassageTrace) -> str:
    detail = f" ({inert(p.transform.detail, keep_newlines=False)})" if p.transform.detail else ""
    return f"  transform: {p.transform.state}{detail}"


def _current_lines(cur: CurrencyResult) -> list[str]:
    """What the source says now, only under its own "current revision" heading, and the
    answer-time state."""
    excerpt = cur.current_excerpt
    shown = cur.shows_current and cur.current is not None and excerpt is not None
    if cur.shows_current and cur.current is not None and excerpt is not None:
        out = [f"  --- current revision {inert(cur.current.revision)} ({cur.current.committed_at}) ---"]
        rel = cur.relocation
        if rel is not None and rel.locator is not None:
            out.append(f"    now at {_where(rel.locator)}")
        out.append(_block(excerpt))
    else:
        out = _ambiguous_places(cur)
    if cur.answer_time is not None:
        out += _answer_time(cur.answer_time, shown)
    return out


def _ambiguous_places(cur: CurrencyResult) -> list[str]:
    """The candidate places of an ambiguous quote in the current revision (none otherwise)."""
    if cur.relocation is None or cur.state != Currency.AMBIGUOUS or cur.current is None:
        return []
    return [
        f"  --- current revision {inert(cur.current.revision)} ({cur.current.committed_at}): "
        f"{len(cur.relocation.candidates)} places, none structurally preferred ---",
        *(f"    at {_where(c)}" for c in cur.relocation.candidates),
    ]


def _answer_time(at: AnswerTime, current_shown: bool) -> list[str]:
    """At answer time: words first; what the revision in force said instead, labelled apart."""
    out = [f"  at answer time: {at.state.upper()} ({at.reason})", _block(answer_time_sentence(at), "    ")]
    excerpt = at.excerpt
    if excerpt is not None and at.in_force is not None:
        out.append(
            f"  --- revision {inert(at.in_force.revision)} in force when the answer was generated "
            f"({utc(at.in_force.committed_at)}) ---"
        )
        out.append(_block(excerpt))
    elif at.reason == "changed_before_answer" and at.in_force_is_current:
        where = ": its text is printed above, under '--- current revision … ---'" if current_shown else ""
        out.append(f"    (that revision is the current one{where})")
    return out


def _where(loc: Locator) -> str:
    path = " > ".join(inert(h) for h in loc.heading_path)
    return f"{path} ¶{loc.paragraph} chars {loc.char_start}..{loc.char_end}"


def _lineage(nodes: list[LineageNode], depth: int = 1) -> list[str]:
    lines = []
    for n in nodes:
        state = "UNAVAILABLE" if not n.visible else f"{n.integrity.upper()} / {n.currency.upper()}"
        mark = " CYCLE (reported, not followed)" if n.cycle else " (sources listed above)" if n.shared else ""
        lines.append("  " * depth + f"- {inert(n.answer_id)} ({n.kind}) {state}{mark}")
        lines += _lineage(n.children, depth + 1)
    return lines


def print_trace(t: AnswerTrace, session: Session) -> None:
    if not t.visible:
        print(f"answer {inert(t.answer_id)}")
        print("  integrity UNAVAILABLE   currency UNAVAILABLE")
        print(f"  computed {t.computed_at}; viewer {inert(session.who)}")
        print("  UNAVAILABLE: this answer, or something it was derived from, is outside your scope")
        return
    print(f"answer {inert(t.answer_id)}  run {inert(t.run_id)}  ({t.kind})  log entry {t.seq}")
    print(
        f"  integrity {t.integrity.upper()}   currency {t.currency.upper()}   "
        f"at answer time {t.answer_time.upper()}"
    )
    if t.reasons:
        print(f"  because: {', '.join(t.reasons)}")
    if t.transform is not None:
        failed = ", ".join(
            f"{inert(p.passage_id, keep_newlines=False)} {p.transform.state}" for p in t.transform_failures
        )
        print(
            f"  transform: {t.transform.upper()} — passage {failed}: the retrieved text is not where "
            "the manifest says in the revision it names"
        )
    print(
        f"  computed {t.computed_at} against checkpoint size {t.checkpoint_size} "
        f"root {t.checkpoint_root[:16]}…"
    )
    print(f"  viewer {inert(session.who)}")
    from tracer.cli.case_lines import trace_case_lines
    from tracer.engine.case import CaseDesk

    for line in trace_case_lines(CaseDesk(session), t.answer_id):
        print(f"  {line}")
    if t.imported is not None:
        print("\n".join(imported_head(t, t.imported)))
        _print_body(t, session)
        return
    print(
        f"  generated {t.generated_at} by {inert(str(t.producer.system))} {inert(str(t.producer.version))}; "
        f"signature {t.signature} ({t.signer[:16]})"
    )
    rt = t.runtime
    print(
        f"  runtime: model {inert(str(rt.get('model')))}, "
        f"prompt {inert(str(rt.get('prompt_template_version')))}, "
        f"pipeline {inert(str(rt.get('pipeline_version')))}, parameters {inert(str(rt.get('parameters')))}"
    )
    az = t.authorization
    print(
        f"  authorization at run time (data, not a grant): principal {inert(str(az.get('principal')))}, "
        f"policy {inert(str(az.get('policy_version')))}, decision {inert(str(az.get('decision')))}"
    )
    _print_body(t, session)


def _print_body(t: AnswerTrace, session: Session) -> None:
    print(_text("question", t.question))
    print(_text("answer", t.answer))
    for c in t.citations:
        _print_citation(t, c)
    uncited = [p for p in t.passages if all(p not in c.passages for c in t.citations)]
    for p in uncited:
        print("\nretrieved but not cited:")
        print(textwrap.indent(_passage(p), "  "))
    if t.lineage:
        print("\nlineage (strictest state applies):")
        print("\n".join(_lineage(t.lineage)))
    for f in t.faults:
        print(
            f"\nPRODUCER FAULT {inert(str(f.get('path')))}: {inert(str(f.get('code')))}: "
            f"{inert(str(f.get('message')))}"
        )
    if t.findings:
        _print_findings(t, session)


def _print_citation(t: AnswerTrace, c: CitationTrace) -> None:
    span = f'"{inert(c.span)}"' if c.span is not None else "(span not available)"
    print(
        f"\ncitation [{c.index + 1}] chars {c.answer_start}..{c.answer_end} {span}"
        + citation_mark(t, c.index)
    )
    print(
        f"  integrity {c.integrity.upper()}   currency {c.currency.upper()}   "
        f"at answer time {c.answer_time.upper()}"
    )
    if c.unknown_passages:
        print(
            "  UNSUPPORTED: names passage(s) not in the manifest: "
            + ", ".join(inert(x) for x in c.unknown_passages)
        )
    for p in c.passages:
        print(textwrap.indent(_passage(p), "  "))


def _print_findings(t: AnswerTrace, session: Session) -> None:
    """The investigators' notes on the answer, each under its signer's roster name."""
    names = {k: v.name for k, v in investigators(session.vault).items()}
    for n in t.findings:
        signer = f"{inert(names.get(n.investigator, 'unknown signer'))} {n.investigator[:12]}"
        print(f"\ninvestigator note (log entry {n.seq}, signed by {signer}, {n.at}) on {inert(n.target)}:")
        print(_block(n.note))


def print_revalidation(r: Revalidation) -> None:
    if r.target:
        print(f"impact of {inert(r.target)}: {len(r.answers)} answer(s)")
    print(f"computed at {r.computed_at} against checkpoint size {r.checkpoint['size']}")
    print(
        f"normalizer: {r.normalizer}"
        + ("; only answers given from a superseded revision" if r.superseded_only else "")
    )
    counts = r.counts
    print("integrity: " + ", ".join(f"{k} {v}" for k, v in sorted(counts["integrity"].items())))
    print("currency:  " + ", ".join(f"{k} {v}" for k, v in sorted(counts["currency"].items())))
    print("at answer time: " + ", ".join(f"{k} {v}" for k, v in sorted(counts["answer_time"].items())))
    for a in r.answers:
        print(_revalidation_line(a))


def _revalidation_line(a: AnswerState) -> str:
    # outside the viewer's scope: the id and the word, as in --json; no time, no producer
    seen = a.summary.visible
    when = utc(a.row.generated_at) if seen else "—"
    producer = inert(a.row.producer_system, keep_newlines=False) if seen else "—"
    return (
        f"  {inert(a.row.answer_id, keep_newlines=False):<28} {when:<20}  {producer:<30} "
        f"{a.summary.integrity:<18} {a.summary.currency:<12} {a.summary.answer_time}"
        + (f"  [{IMPORTED_MARK}]" if seen and a.row.answer_kind == "imported" else "")
    )
