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

from store.errors import InputError, StoreError, VaultInUseError
from tracer.cli.chunk_cmds import PathError
from tracer.cli.common import Sub, add_custodian, emit_json, open_vault, vault_arg
from tracer.clock import now_iso
from tracer.inert import inert

if TYPE_CHECKING:
    from store.crypto import Identity
    from store.ingest import IngestReport
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
    from tracer.producer.outbox import TEMP_PREFIX

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


def _already_in_vault(vault: Vault, path: Path) -> bool:
    """Whether this exact file's record is already in the vault (a pass that crashed after
    its commit): the same signed envelope, or the same revision with the same content."""
    from store import queries
    from store.canonical import parse_strict
    from store.crypto import sha256_hex
    from store.dsse import Envelope

    try:
        doc = parse_strict(path.read_bytes(), str(path))
    except (OSError, InputError):
        return False
    if not isinstance(doc, dict):
        return False
    if isinstance(doc.get("envelope"), dict):
        try:
            env = Envelope.from_json(doc["envelope"], str(path), "$.envelope")
            payload = json.loads(env.payload)
        except (StoreError, ValueError):
            return False
        answer_id = payload.get("answer_id") if isinstance(payload, dict) else None
        if not isinstance(answer_id, str):
            return False
        found = queries.answer_entry(vault, answer_id)
        stored = found[1].envelope if found is not None else None
        return stored is not None and stored.to_json() == env.to_json()
    if doc.get("schema") == "tracer.source_revision/v1" and isinstance(doc.get("content"), str):
        digest = sha256_hex(doc["content"].encode("utf-8"))
        return any(
            r.revision == doc.get("revision") and r.content_sha256 == digest
            for r in queries.revisions_of(vault, str(doc.get("document_id")))
        )
    return False


def drain(vault_path: Path, outbox: Path, custodian: Identity, now: str, skip_invalid: bool = False) -> Pass:
    """One pass: ingest every finished file as one batch, then move each file aside."""
    from store.ingest import ingest
    from tracer.producer.outbox import INGESTED, remove_stale_temporaries

    out = Pass(stale_removed=remove_stale_temporaries(outbox))
    files = pending(outbox)
    if not files:
        return out
    with open_vault(vault_path) as vault:
        fresh: list[Path] = []
        for f in files:
            if _already_in_vault(vault, f):
                out.already.append(f.name)
            else:
                fresh.append(f)
        report = ingest(vault, fresh, custodian, now, skip_invalid) if fresh else None
    # The batch has committed (or appended nothing); only now is anything moved.
    out.report = report
    for name in out.already:
        _move(outbox / name, outbox / INGESTED)
        out.moved.append(name)
    if report is None or not report.appended:
        if report is not None and skip_invalid:
            _reject(outbox, report, out)
        return out
    for a in report.accepted:
        src = Path(a.file)
        _move(src, outbox / INGESTED)
        out.moved.append(src.name)
    if skip_invalid:
        _reject(outbox, report, out)
    return out


def _reject(outbox: Path, report: IngestReport, out: Pass) -> None:
    from tracer.producer.outbox import REJECTED, write_atomically

    for r in report.rejected:
        src = Path(r.file)
        if not src.exists():
            continue
        target = _move(src, outbox / REJECTED)
        reason = f"{r.path}: {r.message}\n".encode()
        write_atomically(target.with_name(target.name + ".reason.txt"), reason, replace=True)
        out.rejected_moved.append(src.name)


def pack_into(out_dir: Path, drafts: list[tuple[Path, dict[str, Any]]], producer: Identity) -> list[Path]:
    """`tracer pack --out-dir`: each draft signed (one unlocked key) and written atomically.

    Names are checked before anything is signed: two drafts of one name, or a name
    already in `out_dir`, are refused rather than overwritten.
    """
    from store.producer import draft_to_input
    from tracer.producer.outbox import encode, write_atomically

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
    from tracer.producer.outbox import INGESTED, REJECTED

    if as_json:
        emit_json(p.to_json())
        return
    for name in p.already:
        print(f"ALREADY  {inert(name)}: in the vault from an earlier pass; moved to {INGESTED}/")
    r = p.report
    if r is not None:
        for rej in r.rejected:
            print(f"REJECTED {inert(rej.file)}: {inert(rej.path)}: {inert(rej.message)}")
        for f in r.faults:
            print(
                f"FAULT    {inert(f.file)}: answer {inert(f.answer_id)}: "
                f"{f.path}: {f.code}: {inert(f.message)}"
            )
        if r.appended:
            print(f"appended {len(r.accepted)} file(s); checkpoint size {r.checkpoint_size}")
        elif r.rejected:
            print("nothing appended (all-or-nothing: fix the files or use --skip-invalid)")
    for name in p.rejected_moved:
        print(f"moved {inert(name)} to {REJECTED}/ (reason beside it)")
    for name in p.stale_removed:
        print(f"removed {inert(name)}: a temporary file a crashed writer left")


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
        try:
            p = drain(vault_path, outbox, custodian, clock(), skip_invalid=True)
        except VaultInUseError as exc:  # another writer holds the vault: try next poll
            print(f"tracer: {exc}; retrying", file=sys.stderr)
            continue
        except FileNotFoundError:  # the outbox was removed meanwhile: wait for it again
            continue
        if p.report is not None or p.already or p.stale_removed:
            busy += 1
            on_pass(p)
    return busy


def _check_outbox(outbox: Path, *, missing_ok: bool) -> None:
    if outbox.is_dir() or (missing_ok and not os.path.lexists(outbox)):
        return
    if os.path.lexists(outbox):
        raise PathError(str(outbox), "the outbox is not a directory")
    raise PathError(str(outbox), "the outbox does not exist (with --watch it is waited for)")


def cmd_ingest_outbox(args: argparse.Namespace) -> int:
    from tracer.secrets import load_key

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
