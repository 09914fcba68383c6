"""CLI for authorization: the investigator roster, the access log and investigator notes.

An investigator's signed note (log kind `finding`) is written with `tracer annotate`
(`tracer finding`, its old name, still works) and is called a note in everything this
prints, so it is never confused with what `tracer verify` raises (findings).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.words import SignatureState
from tracer.cli.common import (
    LazyChoices,
    Sub,
    add_custodian,
    add_investigator,
    emit_json,
    json_arg,
    open_vault,
    vault_arg,
)
from tracer.inert import inert


def _rights() -> list[str]:
    from store.roster import RIGHTS

    return sorted(RIGHTS)


def register(sub: Sub) -> None:
    inv = sub.add_parser("investigators")
    isub = inv.add_subparsers(dest="inv_command", required=True, metavar="ACTION")
    p = isub.add_parser("grant", help="grant an investigator read access to collections")
    vault_arg(p)
    p.add_argument("pubfile", type=Path, help="the investigator's NAME.pub")
    p.add_argument("--scope", action="append", required=True, help="collection name, or '*' (repeatable)")
    p.add_argument(
        "--right",
        action="append",
        default=[],
        choices=LazyChoices(_rights),
        metavar="RIGHT",
        help="hold: may place and release legal holds",
    )
    add_custodian(p)
    p.set_defaults(handler=cmd_grant)
    p = isub.add_parser("revoke", help="revoke an investigator and rotate their collections' keys")
    vault_arg(p)
    p.add_argument("key_id", help="the investigator's key id (from `tracer investigators list`)")
    p.add_argument("--reason", default="", help="why, recorded in the signed revocation")
    add_custodian(p)
    p.set_defaults(handler=cmd_revoke)
    p = isub.add_parser("list", help="list investigators")
    vault_arg(p)
    json_arg(p)
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("access")
    vault_arg(p)
    json_arg(p)
    p.add_argument(
        "--limit", type=int, default=1000, help="list at most this many entries (default %(default)s)"
    )
    p.set_defaults(handler=cmd_access)

    p = sub.add_parser(
        "annotate",
        aliases=["finding"],
        description="Sign and append an investigator note on an answer, one of its claims or one of "
        "its passages. `tracer finding` is the old name of this command and still works. What "
        "`tracer verify` raises is a finding; what you write here is a note (log kind `finding`). "
        "Case notes, not tied to one answer, are `tracer note`.",
    )
    vault_arg(p)
    p.add_argument("answer_id", help="an answer id, or a prefix of exactly one")
    p.add_argument("note", help="the note's text")
    p.add_argument(
        "--target",
        default="answer",
        help="answer (default), claim:N (citation N, from 1; citation:N is read the same) or passage:ID",
    )
    p.add_argument("--case", dest="case_id", metavar="CASE-ID", help="the case this note belongs to")
    add_investigator(p)
    p.set_defaults(handler=cmd_annotate)


def cmd_grant(args: argparse.Namespace) -> int:
    from store import admin
    from store.crypto import load_public
    from tracer.clock import now_iso
    from tracer.secrets import load_key

    custodian = load_key(args.custodian_key, args.passphrase_file)
    pub = load_public(args.pubfile)
    with open_vault(args.vault) as vault:
        old = vault.roster().investigators.get(pub.key_id)
        if old is not None and old.active:
            print(
                f"tracer: error: {args.vault}: {inert(old.name)} ({pub.key_id[:16]}) is already granted, and "
                "a grant cannot be changed: to give them other scopes or rights (such as --right hold), "
                "they make a new key (`tracer keygen NAME --out DIR`), you revoke the old one "
                f"(`tracer investigators revoke VAULT {pub.key_id[:16]}`) and grant the new one "
                "(see docs/cases.md, 'The hold right')",
                file=sys.stderr,
            )
            return 2
        seq = admin.grant_investigator(vault, custodian, pub, list(args.scope), now_iso(), list(args.right))
    rights = f" rights {', '.join(sorted(set(args.right)))}" if args.right else ""
    print(
        f"granted {inert(pub.name)} ({pub.key_id[:16]}) scopes {', '.join(args.scope)}{rights} "
        f"at log entry {seq}"
    )
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    from store import admin
    from tracer.clock import now_iso
    from tracer.secrets import load_key

    custodian = load_key(args.custodian_key, args.passphrase_file)
    with open_vault(args.vault) as vault:
        seq = admin.revoke_investigator(vault, custodian, args.key_id, now_iso(), args.reason)
    print(
        f"revoked {inert(args.key_id)} at log entry {seq}; "
        "their collections' keys were rotated for new content"
    )
    print("note: text they already read or exported cannot be recalled")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from store.roster import investigators

    with open_vault(args.vault, read_only=True) as vault:
        roster = investigators(vault)
    rows: list[dict[str, Any]] = [
        {
            "key_id": i.key_id,
            "name": i.name,
            "scopes": list(i.scopes),
            "granted_at": i.granted_at,
            "revoked_at": i.revoked_at,
        }
        for i in roster.values()
    ]
    if args.json:
        emit_json({"investigators": rows})
    else:
        for r in rows:
            state = f"revoked {r['revoked_at']}" if r["revoked_at"] else "active"
            print(
                f"{r['key_id'][:16]}  {inert(str(r['name'])):<16} scopes {','.join(r['scopes']):<24} {state}"
            )
    return 0


def cmd_access(args: argparse.Namespace) -> int:
    from store import queries
    from store.roster import investigators
    from tracer.engine.journal import read_journal

    with open_vault(args.vault, read_only=True) as vault:
        names = {k: i.name for k, i in investigators(vault).items()}
        names[vault.custodian.key_id] = vault.custodian.name
        rows = queries.access_rows(vault, args.limit)
        journal = read_journal(vault)
    out: list[dict[str, Any]] = [
        {
            "seq": r.seq,
            "investigator": names.get(r.investigator, r.investigator),
            "key_id": r.investigator,
            "action": r.action,
            "target": r.target,
            "at": r.at,
            "forensic": r.forensic,
        }
        for r in rows
    ]
    local = [j.to_json() for j in journal]
    if args.json:
        emit_json({"access": out, "journal": local})
    else:
        _print_access(out, local)
    return 0


def _print_access(out: list[dict[str, Any]], local: Sequence[Mapping[str, Any]]) -> None:
    """The signed access entries, then this machine's local journal (its signatures' states)."""
    for r in out:
        flag = " FORENSIC" if r["forensic"] else ""
        print(
            f"{r['seq']:>8}  {inert(str(r['at']))}  {inert(str(r['investigator'])):<14} "
            f"{inert(str(r['action'])):<14} {inert(str(r['target']))}{flag}"
        )
    if local:
        print(f"local journal on this machine (read-only or forensic opens): {len(local)} entries")
    for j in local:
        flag = " FORENSIC" if j["forensic"] else ""
        sig = "" if j["signature"] == SignatureState.VALID else f" [{j['signature'].upper()}]"
        print(
            f" journal  {inert(str(j['at']))}  {inert(str(j['investigator'])):<14} "
            f"{inert(str(j['action'])):<14} {inert(str(j['target']))}{flag}{sig}"
        )


def cmd_annotate(args: argparse.Namespace) -> int:
    from tracer.cli.engine_cmds import open_session
    from tracer.engine.case import CaseDesk
    from tracer.engine.lookup import resolve_answer

    if args.command == "finding":
        print(
            "tracer: note: `tracer finding` is now `tracer annotate`; the old name keeps working",
            file=sys.stderr,
        )
    with open_session(args) as session:
        desk = CaseDesk(session)
        answer_id = resolve_answer(session.vault, args.answer_id)
        seq = desk.finding(args.case_id, answer_id, args.target, args.note)
    print(f"investigator note on {inert(answer_id)} signed and recorded at log entry {seq}")
    return 0
