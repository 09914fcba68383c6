"""CLI for evidence packs: `tracer export` writes one, `tracer verify-pack` checks one.

verify-pack needs no vault, key or network: only the pack directory.  Its exit codes
follow the rest of the CLI: 0 every check passed, 1 failures (each pinned to a file,
JSON path and answer/passage), 2 usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tracer.cli.common import Sub, add_investigator, emit_json, json_arg, vault_arg
from tracer.cli.engine_cmds import _normalizer_arg, open_session
from tracer.inert import inert

if TYPE_CHECKING:
    from store.queries import AnswerFilter
    from tracer.engine.session import Session
    from tracer.report import PackVerification
    from tracer.report.casepack import CaseSelection

__all__ = ["register"]

_PAGE = 500


def register(sub: Sub) -> None:
    p = sub.add_parser("export")
    vault_arg(p)
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--answer",
        action="extend",
        nargs="+",
        metavar="ID",
        help="answer id(s), each an id or a prefix of exactly one; repeatable",
    )
    what.add_argument("--all", action="store_true", help="every answer you may read")
    what.add_argument(
        "--impact",
        metavar="DOCUMENT",
        help="every answer you may read that cites DOCUMENT (an id, or a prefix of exactly one)",
    )
    what.add_argument("--tag", metavar="TAG", help="with --case: the case's answers carrying TAG")
    p.add_argument(
        "--case",
        dest="case_id",
        metavar="CASE-ID",
        help="a case pack: cover page, the case file, holds, the vault-wide verification (default "
        "selection: every answer the case tagged, held or wrote a note on)",
    )
    p.add_argument("--why", default="", help="with --case: why this selection was made (on the cover page)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="new or empty directory")
    p.add_argument(
        "--format",
        default="md,html,json",
        help="comma-separated: md, html, json (json is always written: the signature covers it)",
    )
    _normalizer_arg(p)
    add_investigator(p)
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser("verify-pack")
    p.add_argument("pack", type=Path, metavar="DIR", help="the pack directory")
    json_arg(p, "what the pack proves, what it records (its findings) and every failed check")
    p.set_defaults(handler=cmd_verify_pack)


def _formats(text: str) -> set[str] | None:
    from tracer.report import FORMATS

    chosen = {f.strip() for f in text.split(",") if f.strip()}
    return chosen | {"json"} if chosen <= FORMATS else None


def _readable_ids(session: Session, f: AnswerFilter) -> list[str]:
    """Answer ids matching `f` in log order, keeping only those the exporter may read.

    Visibility is the engine's (scope follows lineage), not just the answer's collection:
    an answer built on a restricted draft is left out like the draft itself.
    """
    from store import queries
    from tracer.engine.trace import Tracer

    tracer = Tracer(session)
    out: list[str] = []
    cursor = -1
    while True:
        rows = queries.answer_rows(session.vault, f, _PAGE, cursor)
        if not rows:
            return out
        out += [
            r.answer_id
            for r in rows
            if session.can_read(r.collection) and tracer.summary(r.answer_id).visible
        ]
        cursor = rows[-1].seq


def _selection(args: argparse.Namespace, session: Session) -> tuple[list[str], str]:
    """The answers chosen, resolved the way `trace` and `impact` resolve ids: a unique
    prefix is enough, and a miss is exit 2 naming the closest known ids (never an empty
    pack, nor "nothing matches" for a typo)."""
    from store.queries import AnswerFilter
    from tracer.engine import lookup
    from tracer.engine.catalog import impact

    if args.answer:
        ids = [lookup.resolve_answer(session.vault, a) for a in args.answer]
        return list(dict.fromkeys(ids)), "answer ids"
    if args.all:
        return _readable_ids(session, AnswerFilter()), "all answers in scope"
    document = lookup.resolve_document(session, args.impact)
    found = impact(session, document=document, normalizer=args.normalizer).answers
    readable = [a.row.answer_id for a in found if a.summary.visible and session.can_read(a.row.collection)]
    return readable, f"answers in scope citing document {document}"


def _case_selection(args: argparse.Namespace, session: Session) -> tuple[list[str], str, CaseSelection]:
    from tracer.engine.case import CaseDesk
    from tracer.report.casepack import CaseSelection

    desk = CaseDesk(session)
    if args.answer or args.all or args.impact:
        desk.view(args.case_id)  # the case must exist and be yours to see
        ids, what = _selection(args, session)
    else:
        ids, what = desk.pack_answers(args.case_id, args.tag)
    return ids, what, CaseSelection(args.case_id, what, args.why)


def _selection_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with how the answers to export were chosen, if anything."""
    if args.case_id is None and not (args.answer or args.all or args.impact):
        return "choose --answer, --all, --impact or --case"
    if args.case_id is None and (args.tag or args.why):
        return "--tag and --why go with --case"
    return None


def cmd_export(args: argparse.Namespace) -> int:
    from tracer.report import export_pack

    formats = _formats(args.format)
    if formats is None:
        print(f"tracer: error: --format takes md, html, json; got {inert(args.format)!r}", file=sys.stderr)
        return 2
    usage = _selection_problem(args)
    if usage is not None:
        print(f"tracer: error: {usage}", file=sys.stderr)
        return 2
    session = open_session(args)
    try:
        case: CaseSelection | None = None
        if args.case_id is not None:
            ids, selection, case = _case_selection(args, session)
        else:
            ids, selection = _selection(args, session)
        if not ids:
            print("tracer: error: no answer you may read matches; nothing exported", file=sys.stderr)
            return 1
        out = export_pack(
            session, ids, args.out, formats, selection=selection, case=case, normalizer=args.normalizer
        )
    finally:
        session.close()
    print(f"exported {len(ids)} answer(s) to {out}")
    for name in sorted(p.name for p in out.iterdir()):
        print(f"  {name}")
    print(f"check it with: tracer verify-pack {out}")
    return 0


def _print(v: PackVerification) -> None:
    facts = v.facts
    print(f"pack        {v.pack}")
    if "custodian_verifier_key" in facts:
        print(f"custodian   {inert(str(facts['custodian_verifier_key']))}")
        print("            (compare with the custodian key you obtained independently)")
    if "checkpoint" in facts:
        cp = facts["checkpoint"]
        print(f"checkpoint  {inert(cp['origin'])} size {cp['size']} root {cp['root']}")
    if "head" in facts:
        h = facts["head"]
        print(f"exporter    {inert(str(h['signer']), False)} signed size {h['size']} root {h['root']}")
        print("            (its consistency with the custodian checkpoint is proven)")
    print("checked     " + ", ".join(f"{k} {n}" for k, n in sorted(v.checked.items())))
    for w in v.warnings:
        print(f"note        {inert(w)}")
    if v.ok:
        print("RESULT      pack authentic: every signature, proof and digest checks out")
    else:
        print(f"RESULT      NOT AUTHENTIC: {len(v.failures)} failure(s)")
        for f in v.failures:
            print(f"  FAIL {inert(f.line())}")
    for line in recorded_lines(v):
        print(line)


def recorded_lines(v: PackVerification) -> list[str]:
    """What the evidence inside records, apart from the verdict on the pack: an authentic
    pack can carry a finding, and a pack that fails its checks proves none of this."""
    r = v.recorded
    if r is None:
        return []
    head = "RECORDED    the evidence inside" if v.ok else "CLAIMED     unproven (pack failed): the evidence"
    states = "; ".join(
        f"{axis} " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items()))
        for axis, counts in (("integrity", r.integrity), ("currency", r.currency))
        if counts
    )
    out = []
    if r.findings:
        out.append(f"{head} carries {len(r.findings)} finding(s):")
        out += [f"  FINDING   {inert(f.line())}" for f in r.findings]
    else:
        out.append(f"{head} carries no finding")
    if states:
        out.append(f"            answers' states: {states}")
    if r.holds:
        out.append(f"            legal holds: {r.holds} ({r.holds_in_force} in force)")
    return out


def cmd_verify_pack(args: argparse.Namespace) -> int:
    from tracer.report import verify_pack

    if not args.pack.is_dir():
        print(f"tracer: error: {args.pack}: not a directory", file=sys.stderr)
        return 2
    v = verify_pack(args.pack)
    if args.json:
        emit_json(v.to_json())
    else:
        _print(v)
    return 0 if v.ok else 1
