"""`tracer ingest-outbox VAULT OUTBOX`: ingest what producers left in an outbox.

Each pass takes every finished file (`*.json`, never a `.tmp-*` file still being
written), ingests them as one all-or-nothing batch, and only after that batch has
committed moves them to `OUTBOX/ingested/`. A crash between the commit and the move
leaves files that are already in the vault; the next pass recognizes them (same answer
id and the very same signed envelope, or the same revision with the same content) and
moves them aside without ingesting them twice. Files the vault refuses go to
`OUTBOX/rejected/` beside a `.reason.txt` when `--skip-invalid` (or `--watch`) is given;
otherwise nothing is appended and they stay for someone to fix. Every pass also removes
the `.tmp-*` files a crashed writer left (older than `TEMP_MAX_AGE`). `--watch` started
before the producer's first write waits for the outbox to appear.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import merkle
from store.canonical import parse_strict
from store.crypto import Identity, sha256_hex
from store.dsse import Envelope, EnvelopeJSON
from store.entries import EntryKind, LogEntry
from store.errors import InputError, StoreError, VaultDamagedError, VaultInUseError
from store.merkle import leaf_hash
from store.producer import draft_to_input
from tracer.cli.chunk_cmds import PathError
from tracer.cli.common import Sub, add_custodian, emit_json, open_vault, vault_arg
from tracer.clock import now_iso
from tracer.inert import inert
from tracer.producer.outbox import (
    INGESTED,
    REJECTED,
    TEMP_PREFIX,
    encode,
    remove_stale_temporaries,
    write_atomically,
)
from tracer.secrets import load_key

if TYPE_CHECKING:
    from store.ingest import IngestReport, Rejected
    from store.vault import Vault


def register(sub: Sub) -> None:
    p = sub.add_parser(
        "ingest-outbox", help="ingest the files a producer left in an outbox, then move them aside"
    )
    vault_arg(p)
    p.add_argument("outbox", type=Path, metavar="OUTBOX", help="directory the producer SDK writes to")
    add_custodian(p)
    p.add_argument(
        "--skip-invalid", action="store_true", help="append the valid files; move refused ones to rejected/"
    )
    p.add_argument("--watch", action="store_true", help="keep polling (implies --skip-invalid)")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between polls with --watch")
    p.add_argument("--rounds", type=int, help="with --watch: stop after this many polls")
    p.add_argument("--json", action="store_true", help="one JSON object per pass")
    p.set_defaults(handler=cmd_ingest_outbox)


@dataclass
class Pass:
    """One pass over the outbox: what was appended, recognized as done, or refused."""

    report: IngestReport | None = None
    already: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    rejected_moved: list[str] = field(default_factory=list)
    #: `.tmp-*` files a crashed writer left, removed in this pass
    stale_removed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.report is None or self.report.ok

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "ingest": self.report.to_json() if self.report is not None else None,
            "already_in_vault": self.already,
            "moved_to_ingested": self.moved,
            "moved_to_rejected": self.rejected_moved,
            "stale_temporaries_removed": self.stale_removed,
        }


def pending(outbox: Path) -> list[Path]:
    """Finished files in the outbox, source revisions first, then by name."""
    files = [
        p
        for p in outbox.iterdir()
        if p.is_file() and p.suffix == ".json" and not p.name.startswith((".", TEMP_PREFIX))
    ]
    return sorted(files, key=lambda p: (not p.name.startswith("revision-"), p.name))


def _move(path: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    target = folder / path.name
    if target.exists():
        if target.read_bytes() == path.read_bytes():
            path.unlink()
            return target
        n = 1
        while (folder / f"{path.stem}.{n}{path.suffix}").exists():
            n += 1
        target = folder / f"{path.stem}.{n}{path.suffix}"
    os.replace(path, target)
    return target


@dataclass(frozen=True, slots=True)
class _Claim:
    """What a finished outbox file says it is: an answer's signed envelope, or a revision."""

    path: Path
    answer_id: str | None = None
    envelope: EnvelopeJSON | None = None
    revision: tuple[str, str] | None = None
    content_sha256: str | None = None


def _claim(path: Path) -> _Claim | None:
    try:
        doc = parse_strict(path.read_bytes(), str(path))
    except (OSError, InputError):
        return None
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("envelope"), dict):
        return _envelope_claim(path, doc["envelope"])
    if (
        doc.get("schema") == "tracer.source_revision/v1"
        and isinstance(doc.get("content"), str)
        and isinstance(doc.get("document_id"), str)
        and isinstance(doc.get("revision"), str)
    ):
        digest = sha256_hex(doc["content"].encode("utf-8"))
        return _Claim(path, revision=(doc["document_id"], doc["revision"]), content_sha256=digest)
    return None


def _envelope_claim(path: Path, raw: dict[str, Any]) -> _Claim | None:
    """A signed manifest's claim: the answer id its payload names, and the envelope."""
    try:
        env = Envelope.from_json(raw, str(path), "$.envelope")
        payload = json.loads(env.payload)
    except (StoreError, ValueError):
        return None
    answer_id = payload.get("answer_id") if isinstance(payload, dict) else None
    return _Claim(path, answer_id=answer_id, envelope=env.to_json()) if isinstance(answer_id, str) else None


def already_in_vault(vault: Vault, files: list[Path]) -> set[Path]:
    """The files whose record is already in the vault (a pass that crashed after its
    commit): the same signed envelope, or the same revision with the same content.

    The derived views only say where to look, in one query for the whole batch (never
    one per file, so the cost does not grow with the vault); the decision rests on the
    log: each candidate entry's bytes must hash to its stored leaf, carry its own seq
    and hold the file's envelope (or the revision statement with the file's content
    digest), and the stored leaves must be covered by a valid signed checkpoint. A row
    someone edited can make a file look new (ingest then judges it), never make a new
    file look done.
    """
    from store import queries

    hints = _hints(vault, [c for c in map(_claim, files) if c is not None])
    if not hints:
        return set()
    done: set[Path] = set()
    for seq, data, leaf in queries.log_rows_many(vault, sorted(hints)):
        entry = _checked_entry(seq, data, leaf)
        if entry is not None:
            done.update(c.path for c in hints[seq] if _holds(entry, c))
    if done:
        _require_checkpointed(vault)
    return done


def _hints(vault: Vault, claims: list[_Claim]) -> dict[int, list[_Claim]]:
    """The log entries the derived views say hold the claims (where to look, not proof)."""
    from store import queries

    answers = {c.answer_id: c for c in claims if c.answer_id is not None}
    revisions = {c.revision: c for c in claims if c.revision is not None}
    hints: dict[int, list[_Claim]] = {}
    for answer_id, seq in queries.answer_seqs_many(vault, sorted(answers)):
        hints.setdefault(seq, []).append(answers[answer_id])
    for doc_id, rev, seq in queries.revision_seqs_many(vault, sorted({d for d, _ in revisions})):
        claim = revisions.get((doc_id, rev))
        if claim is not None:
            hints.setdefault(seq, []).append(claim)
    return hints


def _checked_entry(seq: int, data: bytes, leaf: bytes) -> LogEntry | None:
    if leaf_hash(data) != leaf:
        return None
    try:
        entry = LogEntry.from_bytes(data)
    except ValueError:
        return None
    return entry if entry.seq == seq else None


def _holds(entry: LogEntry, claim: _Claim) -> bool:
    body = entry.body
    if claim.envelope is not None:
        return entry.kind == EntryKind.MANIFEST and body.get("envelope") == claim.envelope
    try:
        statement = entry.payload_json()
    except (StoreError, ValueError):
        return False
    return (
        entry.kind == EntryKind.REVISION
        and isinstance(statement, dict)
        and (statement.get("document_id"), statement.get("revision")) == claim.revision
        and statement.get("content_sha256") == claim.content_sha256
    )


def _require_checkpointed(vault: Vault) -> None:
    """The stored leaves are the tree a valid signed checkpoint commits to; else the
    entries just read may be someone's insertion, and the vault is called damaged."""
    leaves = vault.leaf_hashes()
    if vault.tree.covering_checkpoint(len(leaves), merkle.root(leaves)) is None:
        raise VaultDamagedError(
            f"{vault.path}: no valid signed checkpoint covers the log's {len(leaves)} entries, so "
            "the files it seems to hold cannot be taken as ingested (run `tracer verify`)"
        )


def drain(vault_path: Path, outbox: Path, custodian: Identity, now: str, skip_invalid: bool = False) -> Pass:
    """One pass: ingest every finished file as one batch, then move each file aside."""
    from store.ingest import ingest

    out = Pass(stale_removed=remove_stale_temporaries(outbox))
    files = pending(outbox)
    if not files:
        return out
    with open_vault(vault_path) as vault:
        done = already_in_vault(vault, files)
        out.already = [f.name for f in files if f in done]
        fresh = [f for f in files if f not in done]
        report = ingest(vault, fresh, custodian, now, skip_invalid) if fresh else None
    # The batch has committed (or appended nothing); only now is anything moved.
    out.report = report
    for name in out.already:
        _move(outbox / name, outbox / INGESTED)
        out.moved.append(name)
    if report is not None:
        _move_reported(outbox, report, out, skip_invalid)
    return out


def _move_reported(outbox: Path, report: IngestReport, out: Pass, skip_invalid: bool) -> None:
    """After the commit: the accepted files to ingested/ (when the batch appended), and
    with --skip-invalid the refused ones to rejected/."""
    if report.appended:
        for a in report.accepted:
            src = Path(a.file)
            _move(src, outbox / INGESTED)
            out.moved.append(src.name)
    if skip_invalid:
        _reject(outbox, report, out)


#: what a manifest signed by a key outside the vault's producer keyring is refused with
UNKNOWN_KEY = "no signature by a known key"


def hint(rejected: Rejected) -> str | None:
    """What to do about a refusal, when the fix is a command: a producer key the vault
    does not know is registered by its custodian."""
    if rejected.path == "$.envelope.signatures" and UNKNOWN_KEY in rejected.message:
        return (
            "the producer's key is not in this vault's keyring; its custodian registers it with "
            "`tracer keys add VAULT PRODUCER.pub --role producer --custodian-key CUSTODIAN.key`"
        )
    return None


def _reject(outbox: Path, report: IngestReport, out: Pass) -> None:
    for r in report.rejected:
        src = Path(r.file)
        if not src.exists():
            continue
        target = _move(src, outbox / REJECTED)
        fix = hint(r)
        reason = (f"{r.path}: {r.message}\n" + (f"hint: {fix}\n" if fix else "")).encode()
        write_atomically(target.with_name(target.name + ".reason.txt"), reason, replace=True)
        out.rejected_moved.append(src.name)


def pack_into(out_dir: Path, drafts: list[tuple[Path, dict[str, Any]]], producer: Identity) -> list[Path]:
    """`tracer pack --out-dir`: each draft signed (one unlocked key) and written atomically.

    Names are checked before anything is signed: two drafts of one name, or a name
    already in `out_dir`, are refused rather than overwritten.
    """
    targets = [out_dir / path.name for path, _ in drafts]
    seen: set[Path] = set()
    for t in targets:
        if t in seen or t.exists():
            raise PathError(str(t), "already exists (or two drafts share its name); not overwritten")
        seen.add(t)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PathError(str(out_dir), f"cannot create directory ({exc.strerror})") from exc
    for target, (_, draft) in zip(targets, drafts, strict=True):
        try:
            write_atomically(target, encode(draft_to_input(draft, producer)))
        except OSError as exc:
            raise PathError(str(target), f"cannot write file ({exc.strerror})") from exc
    return targets


def _print(p: Pass, as_json: bool) -> None:
    if as_json:
        emit_json(p.to_json())
        return
    for name in p.already:
        print(f"ALREADY  {inert(name)}: in the vault from an earlier pass; moved to {INGESTED}/")
    if p.report is not None:
        _print_report(p.report)
    for name in p.rejected_moved:
        print(f"moved {inert(name)} to {REJECTED}/ (reason beside it)")
    for name in p.stale_removed:
        print(f"removed {inert(name)}: a temporary file a crashed writer left")


def _print_report(r: IngestReport) -> None:
    for rej in r.rejected:
        print(f"REJECTED {inert(rej.file)}: {inert(rej.path)}: {inert(rej.message)}")
        fix = hint(rej)
        if fix is not None:
            print(f"         hint: {fix}")
    for f in r.faults:
        print(
            f"FAULT    {inert(f.file)}: answer {inert(f.answer_id)}: {f.path}: {f.code}: {inert(f.message)}"
        )
    if r.appended:
        print(f"appended {len(r.accepted)} file(s); checkpoint size {r.checkpoint_size}")
    elif r.rejected:
        print("nothing appended (all-or-nothing: fix the files or use --skip-invalid)")


def watch(
    vault_path: Path,
    outbox: Path,
    custodian: Identity,
    *,
    interval: float,
    rounds: int | None,
    on_pass: Callable[[Pass], None],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], str] = now_iso,
) -> int:
    """Poll the outbox; returns the number of passes that found something to do."""
    busy = 0
    n = 0
    waiting = False
    while rounds is None or n < rounds:
        if n:
            sleep(interval)
        n += 1
        if not outbox.is_dir():  # started before the producer's first write: wait for it
            _check_outbox(outbox, missing_ok=True)
            if not waiting:
                print(f"tracer: waiting for {inert(str(outbox))} to be created", file=sys.stderr)
                waiting = True
            continue
        waiting = False
        p = _drain_once(vault_path, outbox, custodian, clock())
        if p is None:
            continue
        if p.report is not None or p.already or p.stale_removed:
            busy += 1
            on_pass(p)
    return busy


def _drain_once(vault_path: Path, outbox: Path, custodian: Identity, now: str) -> Pass | None:
    """One watched pass, or None when it must wait for the next poll."""
    try:
        return drain(vault_path, outbox, custodian, now, skip_invalid=True)
    except VaultInUseError as exc:  # another writer holds the vault: try next poll
        print(f"tracer: {exc}; retrying", file=sys.stderr)
        return None
    except FileNotFoundError:  # the outbox was removed meanwhile: wait for it again
        return None


def _check_outbox(outbox: Path, *, missing_ok: bool) -> None:
    if outbox.is_dir() or (missing_ok and not os.path.lexists(outbox)):
        return
    if os.path.lexists(outbox):
        raise PathError(str(outbox), "the outbox is not a directory")
    raise PathError(str(outbox), "the outbox does not exist (with --watch it is waited for)")


def cmd_ingest_outbox(args: argparse.Namespace) -> int:
    _check_outbox(args.outbox, missing_ok=args.watch)
    if args.interval <= 0 or (args.rounds is not None and args.rounds < 1):
        raise PathError("ingest-outbox", "--interval must be > 0 and --rounds ≥ 1")
    custodian = load_key(args.custodian_key, args.passphrase_file)
    if args.watch:
        with contextlib.suppress(KeyboardInterrupt):
            watch(
                args.vault,
                args.outbox,
                custodian,
                interval=args.interval,
                rounds=args.rounds,
                on_pass=lambda p: _print(p, args.json),
            )
        return 0
    p = drain(args.vault, args.outbox, custodian, now_iso(), args.skip_invalid)
    if p.report is None and not p.already:
        if args.json:
            emit_json(p.to_json())
        else:
            _print(p, False)
            print("nothing to ingest")
        return 0
    _print(p, args.json)
    return 0 if p.ok else 1
