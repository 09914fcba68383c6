"""CLI for the investigator's engine: verify, trace, revalidate, impact."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tracer.cli.common import LazyChoices, Sub, add_investigator, emit_json, json_arg, vault_arg
from tracer.inert import inert

if TYPE_CHECKING:
    from tracer.engine.case import HoldView
    from tracer.engine.catalog import AnswerState, Revalidation
    from tracer.engine.session import Session


def register(sub: Sub) -> None:
    p = sub.add_parser("verify")
    vault_arg(p)
    add_investigator(p)
    json_arg(p)
    p.add_argument(
        "--structural-only",
        action="store_true",
        help="do not unlock: Merkle, signatures, views and presence only (no text checksums)",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="re-check every entry in full, ignoring this machine's receipt of the last clean verify",
    )
    p.set_defaults(handler=cmd_verify)

    p = sub.add_parser("trace")
    vault_arg(p)
    p.add_argument("answer_id", help="an answer id, or a prefix of exactly one")
    add_investigator(p)
    json_arg(p)
    _normalizer_arg(p)
    p.set_defaults(handler=cmd_trace)

    p = sub.add_parser("revalidate")
    vault_arg(p)
    add_investigator(p)
    json_arg(p)
    _normalizer_arg(p)
    _superseded_arg(p)
    p.add_argument(
        "--fail-on",
        metavar="STATES",
        type=_state_words,
        help="exit 1 when any answer's integrity or currency is one of these comma-separated "
        "state words (e.g. stale,ambiguous,missing): for CI",
    )
    p.set_defaults(handler=cmd_revalidate)

    p = sub.add_parser("impact")
    vault_arg(p)
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--document", help="a document id, or a prefix of exactly one")
    group.add_argument("--digest", help="SHA-256 of a text or revision the vault references")
    p.add_argument("--revision", help="narrows --document to one of its revisions")
    add_investigator(p)
    json_arg(p)
    _normalizer_arg(p)
    _superseded_arg(p)
    p.set_defaults(handler=cmd_impact)


def _normalizer_choices() -> list[str]:
    from tracer.engine.normalizers import KNOWN, RECORDED

    return [RECORDED, *sorted(v for v in KNOWN if v != "tracer-norm/1")]


def _normalizer_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--normalizer",
        choices=LazyChoices(_normalizer_choices),
        default="recorded",
        metavar="NORMALIZER",
        help="one of %(choices)s: check each citation under the normalizer it was recorded with "
        "(recorded, the default), or carry tracer-norm/1 citations over to tracer-norm/2 "
        "(Markdown-only edits stop counting)",
    )


def _superseded_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--answered-from-superseded",
        action="store_true",
        help="only answers whose cited revision had already been superseded when they were generated",
    )


def open_session(args: argparse.Namespace, read_only: bool | None = None) -> Session:
    from tracer.engine.session import unlock
    from tracer.secrets import load_key, resolve_key_path

    identity = load_key(resolve_key_path(args.key), args.passphrase_file)
    session = unlock(args.vault, identity, forensic=args.forensic, read_only=read_only)
    st = session.status
    if st.pin == "first use":
        # as the TUI does: a key pinned on first use is only as good as a check out of band
        where = " at a path that held another vault (ORIGIN CHANGED)" if st.origin_changed else ""
        print(
            f"tracer: FIRST USE{where}: pinned custodian {inert(st.custodian)} key {st.custodian_key_id} "
            "for this vault on this machine; confirm this fingerprint out of band",
            file=sys.stderr,
        )
    for w in session.status.warnings:
        loud = w == session.status.origin_changed
        print(f"tracer: {'WARNING' if loud else 'note'}: {inert(w)}", file=sys.stderr)
    if session.status.forensic:
        print(f"tracer: FORENSIC MODE: {session.status.forensic_reason}", file=sys.stderr)
    return session


def _progress(enabled: bool) -> Callable[[str, int, int], None]:
    """Progress on stderr, only for a person watching a terminal (never in --json mode)."""
    last: dict[str, Any] = {"phase": "", "pct": -1}

    def report(phase: str, done: int, total: int) -> None:
        if not enabled:
            return
        pct = 100 if total <= 0 else int(100 * done / total)
        if phase != last["phase"] or pct != last["pct"]:
            last["phase"], last["pct"] = phase, pct
            end = "\n" if pct >= 100 else ""
            sys.stderr.write(f"\r{phase:<6} {pct:3d}% ({done}/{total})" + end)
            sys.stderr.flush()

    return report


def cmd_verify(args: argparse.Namespace) -> int:
    from store.vault import Vault
    from tracer.cli.render import print_verify
    from tracer.engine.verify import verify

    show = not args.json and sys.stderr.isatty()
    if args.structural_only:
        with Vault.open(args.vault) as vault:
            report = verify(vault, None, _progress(show))
    else:
        with open_session(args) as session:
            session.record("verify", "")
            report = verify(session.vault, session, _progress(show), full=args.full)
    if args.json:
        emit_json(report.to_json())
    else:
        print_verify(report)
    return 0 if report.ok else 1


def cmd_trace(args: argparse.Namespace) -> int:
    from store.errors import StoreError
    from tracer.cli.render import print_trace
    from tracer.engine import lookup
    from tracer.engine.serialize import trace_json
    from tracer.engine.trace import Tracer, UnknownAnswerError

    with open_session(args) as session:
        answer_id = lookup.resolve_answer(session.vault, args.answer_id)
        try:
            t = Tracer(session, args.normalizer).trace(answer_id)
        except UnknownAnswerError as exc:
            raise StoreError(f"{args.vault}: no answer {answer_id!r} in this vault") from exc
        if args.json:
            emit_json(trace_json(t))
        else:
            print_trace(t, session)
    return 0


def cmd_revalidate(args: argparse.Namespace) -> int:
    from tracer.cli.render import print_revalidation
    from tracer.engine.catalog import revalidate

    with open_session(args) as session:
        session.record("revalidate", "")
        result = revalidate(
            session,
            _progress(not args.json and sys.stderr.isatty()),
            normalizer=args.normalizer,
            superseded_only=args.answered_from_superseded,
        )
    matched = _failing(result.answers, args.fail_on)
    if args.json:
        out = result.to_json()
        if args.fail_on is not None:
            out["fail_on"] = {"states": sorted(args.fail_on), "answers": matched}
        emit_json(out)
    else:
        print_revalidation(result)
        if args.fail_on is not None:
            words = ",".join(sorted(args.fail_on))
            print(f"FAIL-ON {words}: {len(matched)} answer(s)" + (" — exit 1" if matched else ""))
    return 1 if matched else 0


def _state_words(value: str) -> frozenset[str]:
    """`--fail-on`'s comma-separated words, each an integrity or currency state."""
    from tracer.engine.vocabulary import Currency, Integrity

    known = {s.value for s in Integrity} | {s.value for s in Currency}
    words = frozenset(w.strip() for w in value.split(",") if w.strip())
    unknown = sorted(words - known)
    if not words or unknown:
        raise argparse.ArgumentTypeError(
            f"not a state word: {', '.join(unknown) or '(none given)'}; known: {', '.join(sorted(known))}"
        )
    return words


def _failing(answers: Sequence[AnswerState], states: frozenset[str] | None) -> list[str]:
    """The ids of the answers whose integrity or currency, as reported, is in `states`."""
    if not states:
        return []
    out = []
    for a in answers:
        row = a.to_json()
        if row["integrity"] in states or row["currency"] in states:
            out.append(a.row.answer_id)
    return out


def cmd_impact(args: argparse.Namespace) -> int:
    from tracer.engine.case import CaseDesk
    from tracer.engine.catalog import impact

    if args.revision and not args.document:
        print(
            "tracer: error: --revision narrows --document; it cannot be used with --digest", file=sys.stderr
        )
        return 2
    with open_session(args) as session:
        document, revision = _impact_subject(session, args)
        target = f"digest:{args.digest}" if args.digest else f"document:{document}@{revision or '*'}"
        session.record("impact", target)
        result = impact(
            session,
            document=document,
            revision=revision,
            digest=args.digest,
            normalizer=args.normalizer,
            superseded_only=args.answered_from_superseded,
        )
        seen = [a.row.answer_id for a in result.answers if a.summary.visible]
        held = CaseDesk(session).holds_over(None if args.digest else document, seen)
    _emit_impact(result, held, as_json=args.json)
    return 0


def _emit_impact(result: Revalidation, held: list[tuple[HoldView, list[str]]], *, as_json: bool) -> None:
    """The impact's answers and the holds in force over them, as JSON or as lines."""
    from tracer.cli.case_lines import impact_hold_lines
    from tracer.cli.render import print_revalidation

    if as_json:
        out = result.to_json()
        out["holds"] = [{**hv.to_json(), "covers": aids} for hv, aids in held]
        emit_json(out)
        return
    print_revalidation(result)
    for line in impact_hold_lines(held, len(result.answers)):
        print(line)


def _impact_subject(session: Session, args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The (document, revision) `impact` asks about, each resolved to a known id; a digest
    is checked to be known. An unknown id is exit 2 naming the closest known ones, never
    "0 answer(s)"."""
    from tracer.engine import lookup

    document, revision = args.document, args.revision
    if args.digest:
        lookup.known_digest(session, args.digest)
        return document, revision
    document = lookup.resolve_document(session, document)
    if revision:
        revision = lookup.resolve_revision(session, document, revision)
    return document, revision


__all__ = ["open_session", "register"]
