"""CLI for the case file: `tracer case`, `tag`, `tags`, `note`, `hold`, `release`, `holds`.

Every write is a statement signed by the unlocking investigator (or the custodian) and
checkpointed under their key, like a finding.  Everything printed that an investigator
or a producer wrote (titles, purposes, notes, tags, reasons, ids) is made inert, and
`--json` escapes every hidden character.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracer.cli.common import Sub, add_investigator, emit_json, json_arg, vault_arg
from tracer.cli.engine_cmds import open_session
from tracer.inert import inert

if TYPE_CHECKING:
    from store.casefile import Tag
    from tracer.engine.case import CaseDesk, CaseView, HoldView
    from tracer.engine.jsonshapes import PersonJSON
    from tracer.engine.session import Session

__all__ = ["register", "text_arg"]


def _case_arg(
    p: argparse.ArgumentParser, required: bool = False, what: str = "the case this belongs to"
) -> None:
    p.add_argument("--case", dest="case_id", required=required, metavar="CASE-ID", help=what)


def text_arg(p: argparse.ArgumentParser, name: str, what: str) -> None:
    """--text T, or --file F (multi-line; `-` reads stdin)."""
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(f"--{name}", help=f"the {what} (use --file for several lines)")
    g.add_argument("--file", type=Path, help=f"read the {what} from a file ('-' reads stdin)")


def register(sub: Sub) -> None:
    case = sub.add_parser("case")
    csub = case.add_subparsers(dest="case_command", required=True, metavar="ACTION")
    p = csub.add_parser("open", help="open a case: everything tagged, noted or held under it belongs to it")
    vault_arg(p)
    p.add_argument("case_id", metavar="CASE-ID", help="a new case id: a-z 0-9 . _ -")
    p.add_argument("--title", required=True, help="the case's title (one line)")
    p.add_argument("--purpose", required=True, help="why the case is opened (recorded, signed)")
    add_investigator(p)
    p.set_defaults(handler=cmd_case_open)
    p = csub.add_parser("list", help="the cases you can see")
    vault_arg(p)
    json_arg(p)
    add_investigator(p)
    p.set_defaults(handler=cmd_case_list)
    p = csub.add_parser("show", help="a case: tags, notes, notes on answers, holds, activity, conclusion")
    vault_arg(p)
    p.add_argument("case_id", metavar="CASE-ID", help="the case to show")
    json_arg(p)
    add_investigator(p)
    p.set_defaults(handler=cmd_case_show)
    p = csub.add_parser("conclude", help="sign the case's conclusion (the latest one is the case's)")
    vault_arg(p)
    p.add_argument("case_id", metavar="CASE-ID", help="the case to conclude")
    text_arg(p, "text", "conclusion")
    add_investigator(p)
    p.set_defaults(handler=cmd_case_conclude)

    p = sub.add_parser("tag")
    vault_arg(p)
    p.add_argument("answer_id", help="an answer id, or a prefix of exactly one")
    p.add_argument("tag", help="a-z 0-9 . _ -, e.g. dropped-exception")
    p.add_argument(
        "--target",
        default="answer",
        help="answer (default), claim:N (citation N, from 1; citation:N is read the same) or passage:ID",
    )
    p.add_argument("--remove", action="store_true", help="take the tag off again (signed too)")
    _case_arg(p)
    add_investigator(p)
    p.set_defaults(handler=cmd_tag)
    p = sub.add_parser("tags")
    vault_arg(p)
    p.add_argument("--tag", help="only this tag")
    _case_arg(p, what="only the tags of this case")
    json_arg(p)
    add_investigator(p)
    p.set_defaults(handler=cmd_tags)

    p = sub.add_parser("note")
    vault_arg(p)
    text_arg(p, "text", "note")
    p.add_argument("--answer", help="the answer the note is about (optional)")
    _case_arg(p, required=True)
    add_investigator(p)
    p.set_defaults(handler=cmd_note)

    p = sub.add_parser("hold")
    vault_arg(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--document", help="a document id: its revisions and every passage quoted from it")
    what.add_argument("--answer", help="an answer id: its texts, passages, cited revisions and lineage")
    what.add_argument("--digest", help="one text's SHA-256")
    p.add_argument("--reason", required=True, help="why the hold is placed (signed; shown with the hold)")
    _case_arg(p)
    add_investigator(p)
    p.set_defaults(handler=cmd_hold)
    p = sub.add_parser("release")
    vault_arg(p)
    p.add_argument("hold_seq", type=int, metavar="HOLD-ENTRY", help="the hold's log entry number")
    p.add_argument("--reason", required=True, help="why the hold is released (signed; shown with it)")
    _case_arg(p)
    add_investigator(p)
    p.set_defaults(handler=cmd_release)
    p = sub.add_parser("holds")
    vault_arg(p)
    p.add_argument("--all", action="store_true", help="released holds too")
    json_arg(p)
    add_investigator(p)
    p.set_defaults(handler=cmd_holds)


def _text(args: argparse.Namespace, what: str) -> str | None:
    if args.file is None:
        return str(args.text)
    try:
        data = sys.stdin.read() if str(args.file) == "-" else args.file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(
            f"tracer: error: {inert(str(args.file), False)}: cannot read the {what} ({exc})", file=sys.stderr
        )
        return None
    return data.rstrip("\n")


def _desk(session: Session) -> CaseDesk:
    from tracer.engine.case import CaseDesk

    return CaseDesk(session)


def _done(session: Session, what: str, seq: int) -> int:
    print(f"{what} signed by {inert(session.name)} and recorded at log entry {seq}")
    return 0


def cmd_case_open(args: argparse.Namespace) -> int:
    with open_session(args) as s:
        seq = _desk(s).open_case(args.case_id, args.title, args.purpose)
        return _done(s, f"case {inert(args.case_id)} opened;", seq)


def cmd_case_list(args: argparse.Namespace) -> int:
    with open_session(args) as s:
        desk = _desk(s)
        rows: list[dict[str, Any]] = [
            {
                "case_id": c.case_id,
                "title": c.title,
                "opened_at": c.opened_at,
                "opened_by": desk.person(c.opened_by).to_json(),
                "seq": c.seq,
            }
            for c in desk.cases()
        ]
    if args.json:
        emit_json({"cases": rows})
        return 0
    if not rows:
        print("no case you can see; open one with `tracer case open VAULT CASE-ID --title … --purpose …`")
    for r in rows:
        by = r["opened_by"]
        print(
            f"{inert(r['case_id'], False):<16} {r['opened_at']}  {inert(by['name'], False)} "
            f"({by['key_id'][:16]})  {inert(r['title'], False)}"
        )
    return 0


def _who(p: PersonJSON) -> str:
    return f"{inert(p['name'], False)} ({p['key_id'][:16]})"


def print_case(v: CaseView) -> None:
    c = v.to_json()
    print(f"case        {inert(c['case_id'], False)}")
    print(f"title       {inert(c['title'], False)}")
    print("purpose     " + inert(c["purpose"]).replace("\n", "\n            "))
    print(f"opened      {c['opened']['at']} by {_who(c['opened']['by'])}, log entry {c['opened']['seq']}")
    print("people      " + ", ".join(_who(p) for p in c["investigators"]))
    print(f"tags        {len(c['tags'])}")
    for t in c["tags"]:
        print(
            f"  {t['seq']:>6}  {inert(t['tag'], False):<20} {inert(t['answer_id'], False)} "
            f"{inert(t['target'], False)}  by {_who(t['by'])}"
        )
    _print_notes(c["notes"])
    print(f"answer notes {len(c['findings'])} (investigators' signed notes on answers, `tracer annotate`)")
    for f in c["findings"]:
        print(
            f"  {f['seq']:>6}  {inert(f['answer_id'], False)} {inert(f['target'], False)}: "
            f"{inert(f['note'], False)}  by {_who(f['by'])}"
        )
    print(f"holds       {len(c['holds'])}")
    for h in v.holds:
        print("  " + hold_line(h))
    print(f"activity    {len(c['activity'])}")
    for a in c["activity"]:
        print(
            f"  {a['seq']:>6}  {a['at']}  {_who(a['by'])} {inert(a['action'], False)} "
            f"{inert(a['target'], False)}"
        )
    _print_conclusion(c["conclusion"])


def _print_notes(notes: Sequence[Mapping[str, Any]]) -> None:
    print(f"notes       {len(notes)}")
    for n in notes:
        about = f" on {inert(n['answer_id'], False)}" if n["answer_id"] else ""
        print(f"  {n['seq']:>6}  {n['at']}  {_who(n['by'])}{about}")
        for line in inert(n["text"]).split("\n"):
            print(f"          {line}")


def _print_conclusion(conc: Mapping[str, Any] | None) -> None:
    if conc is None:
        print("conclusion  none yet (`tracer case conclude`)")
        return
    print(f"conclusion  {conc['at']} by {_who(conc['by'])}, log entry {conc['seq']}")
    for line in inert(conc["text"]).split("\n"):
        print(f"          {line}")


def hold_line(h: HoldView) -> str:
    """One hold: entry, state, subject, reason (or that it is withheld), who, when; a
    release on the line below with who released it, when and why."""
    j = h.to_json()
    rel = j["release"]
    state = "IN FORCE" if j["in_force"] else f"released at entry {rel['seq']}" if rel else "released"
    case = (
        "  case withheld"
        if "case_id" in h.withheld
        else f"  case {inert(j['case_id'], False)}"
        if j["case_id"]
        else ""
    )
    line = (
        f"{j['seq']:>6}  {state:<22} {j['subject']['kind']} {inert(j['subject']['id'], False)}: "
        f"{inert(h.reason_text, False)}  by {_who(j['signer'])} at {j['at']}{case}"
    )
    if rel is not None:
        line += (
            f"\n{'':>8}released {rel['at']} by {_who(rel['signer'])}: {inert(h.release_reason_text, False)}"
        )
    return line


def cmd_case_show(args: argparse.Namespace) -> int:
    with open_session(args) as s:
        v = _desk(s).view(args.case_id)
    if args.json:
        emit_json(v.to_json())
    else:
        print_case(v)
    return 0


def cmd_case_conclude(args: argparse.Namespace) -> int:
    text = _text(args, "conclusion")
    if text is None:
        return 2
    with open_session(args) as s:
        return _done(
            s, f"conclusion of case {inert(args.case_id, False)}", _desk(s).conclude(args.case_id, text)
        )


def cmd_tag(args: argparse.Namespace) -> int:
    with open_session(args) as s:
        desk = _desk(s)
        seq = desk.tag(args.case_id, args.answer_id, args.target, args.tag, remove=args.remove)
        what = "tag removed" if args.remove else "tag"
        return _done(s, f"{what} {inert(args.tag, False)} on {inert(args.target, False)}", seq)


def cmd_tags(args: argparse.Namespace) -> int:
    with open_session(args) as s:
        desk = _desk(s)
        if args.case_id is not None:
            desk.view(args.case_id)  # a case the viewer cannot see is "no such case"
        tags = _visible_tags(desk, args.case_id, args.tag)
        rows: list[dict[str, Any]] = [
            {
                "seq": t.seq,
                "case_id": t.case_id,
                "tag": t.tag,
                "answer_id": t.answer_id,
                "target": t.target,
                "at": t.at,
                "by": desk.person(t.investigator).to_json(),
            }
            for t in tags
        ]
    if args.json:
        emit_json({"tags": rows})
        return 0
    for r in rows:
        case = f"[{inert(r['case_id'], False)}] " if r["case_id"] else ""
        print(
            f"{r['seq']:>6}  {case}{inert(r['tag'], False):<20} {inert(r['answer_id'], False)} "
            f"{inert(r['target'], False)}  by {_who(r['by'])}"
        )
    return 0


def _visible_tags(desk: CaseDesk, case_id: str | None, tag: str | None) -> list[Tag]:
    """The tags in force (of one case, or all; of one tag, or all) that the viewer may see:
    made by someone in scope, on an answer in scope."""
    return [
        t
        for t in desk.file.current_tags(case_id)
        if (tag is None or t.tag == tag) and desk.covers(t.investigator) and desk.answer_visible(t.answer_id)
    ]


def cmd_note(args: argparse.Namespace) -> int:
    text = _text(args, "note")
    if text is None:
        return 2
    with open_session(args) as s:
        seq = _desk(s).note(args.case_id, text, args.answer)
        return _done(s, f"note in case {inert(args.case_id, False)}", seq)


def cmd_hold(args: argparse.Namespace) -> int:
    kind, wanted = next((k, getattr(args, k)) for k in ("document", "answer", "digest") if getattr(args, k))
    with open_session(args) as s:
        seq = _desk(s).hold(kind, wanted, args.reason, args.case_id)
        _done(s, f"legal hold on {kind} {inert(wanted, False)}", seq)
        print(f"a purge of the held evidence is refused until `tracer release VAULT {seq} --reason …`")
        return 0


def cmd_release(args: argparse.Namespace) -> int:
    with open_session(args) as s:
        seq = _desk(s).release(args.hold_seq, args.reason, args.case_id)
        return _done(s, f"release of the hold at log entry {args.hold_seq}", seq)


def cmd_holds(args: argparse.Namespace) -> int:
    with open_session(args) as s:
        holds = _desk(s).holds(in_force_only=not args.all)
    if args.json:
        emit_json({"holds": [h.to_json() for h in holds]})
        return 0
    if not holds:
        print("no legal hold in force you can see" if not args.all else "no legal hold you can see")
    for h in holds:
        print(hold_line(h))
    return 0
