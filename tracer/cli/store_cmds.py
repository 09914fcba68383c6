"""CLI for the evidence store: keys, vault creation, ingest, purge, log and proofs."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.errors import InputError, KeyFileError, VaultError
from store.textrules import name_problem
from store.words import FindingKind
from tracer.cli.common import Sub, add_custodian, emit_json, existing_vault, json_arg, open_vault, vault_arg
from tracer.clock import now_iso, valid_iso
from tracer.engine.times import spell_utc
from tracer.inert import inert

if TYPE_CHECKING:
    from store.crypto import Identity
    from store.recovery import Quarantined


def register(sub: Sub) -> None:
    p = sub.add_parser("keygen")
    p.add_argument("name", help="the identity's name: letters, digits, . _ - (it names the two files)")
    p.add_argument("--out", type=Path, required=True, help="directory for NAME.key and NAME.pub")
    p.add_argument(
        "--passphrase-file",
        type=Path,
        help="the new key's passphrase (else TRACER_PASSPHRASE, else a prompt)",
    )
    p.set_defaults(handler=cmd_keygen)

    p = sub.add_parser("init")
    vault_arg(p, existing=False)
    add_custodian(p)
    p.add_argument(
        "--origin",
        help="checkpoint origin line (default: tracer.vault/ and 16 hex of SHA-256 over the custodian's "
        "public key and the creation time, so every vault made, even with one key, has its own)",
    )
    p.set_defaults(handler=cmd_init)

    keys = sub.add_parser("keys")
    ksub = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    p = ksub.add_parser("add", help="add a producer key with an optional validity window")
    vault_arg(p)
    p.add_argument("pubfile", type=Path, help="the producer's NAME.pub")
    p.add_argument("--role", choices=["producer"], default="producer", help="the key's role (producer)")
    p.add_argument("--valid-from", help="RFC 3339 time from which its signatures count (default: always)")
    p.add_argument("--valid-until", help="RFC 3339 time after which they stop counting (default: never)")
    add_custodian(p)
    p.set_defaults(handler=cmd_keys_add)
    p = ksub.add_parser("revoke", help="revoke a producer key (manifests signed before stay valid)")
    vault_arg(p)
    p.add_argument("key_id", help="the producer key's id (from `tracer keys list`)")
    p.add_argument("--reason", default="", help="why, recorded in the signed revocation")
    add_custodian(p)
    p.set_defaults(handler=cmd_keys_revoke)
    p = ksub.add_parser("list", help="list producer keys")
    vault_arg(p)
    json_arg(p)
    p.set_defaults(handler=cmd_keys_list)

    p = sub.add_parser("sign")
    p.add_argument("file", type=Path, help="the file whose exact bytes are signed")
    p.add_argument("--key", type=Path, required=True, help="the signer's NAME.key (a producer key)")
    p.add_argument("--passphrase-file", type=Path, help="else TRACER_PASSPHRASE, else a prompt")
    p.add_argument("--out", type=Path, help="where to write the envelope (default stdout)")
    p.add_argument(
        "--payload-type",
        default="application/vnd.tracer.manifest.v1+json",
        help="the DSSE payloadType (default %(default)s)",
    )
    p.set_defaults(handler=cmd_sign)

    p = sub.add_parser("pack")
    p.add_argument("drafts", type=Path, nargs="+", metavar="DRAFT", help="draft manifest files")
    p.add_argument("--key", type=Path, required=True, help="the producer's NAME.key")
    p.add_argument("--passphrase-file", type=Path, help="else TRACER_PASSPHRASE, else a prompt")
    p.add_argument("--out", type=Path, help="output file (one draft; default stdout)")
    p.add_argument("--out-dir", type=Path, help="one input file per draft, named like the draft")
    p.set_defaults(handler=cmd_pack)

    p = sub.add_parser("ingest")
    vault_arg(p)
    p.add_argument("files", type=Path, nargs="+", metavar="FILE", help="signed input files")
    add_custodian(p)
    p.add_argument("--skip-invalid", action="store_true", help="append the valid files anyway")
    json_arg(p)
    p.set_defaults(handler=cmd_ingest)

    p = sub.add_parser("purge")
    vault_arg(p)
    p.add_argument("digest", nargs="?", help="SHA-256 of the text to purge (or use --request)")
    p.add_argument("--policy", help="retention policy id (required without --request)")
    p.add_argument("--reason", help="why (required without --request)")
    p.add_argument("--authorizer", help="who authorized it (default: the custodian's name)")
    p.add_argument("--effective-at", help="RFC 3339 time (default: now)")
    p.add_argument(
        "--request",
        type=Path,
        help="a tombstone request file (schema tracer.tombstone_request/v1) instead of the above",
    )
    add_custodian(p)
    p.set_defaults(handler=cmd_purge)

    p = sub.add_parser("checkpoint")
    vault_arg(p)
    p.add_argument(
        "--cover-checked-tail",
        action="store_true",
        help="custodian: re-sign a tail this machine remembers a checkpoint over; otherwise move it to "
        "VAULT/quarantine/ and ingest its manifests again",
    )
    p.add_argument("--custodian-key", type=Path, help="custodian NAME.key (with --cover-checked-tail)")
    p.add_argument("--passphrase-file", type=Path, help="else TRACER_PASSPHRASE, else a prompt")
    p.set_defaults(handler=cmd_checkpoint)

    p = sub.add_parser("quarantine")
    p.add_argument("file", type=Path, metavar="FILE", help="a quarantine file")
    p.add_argument(
        "--restore",
        type=existing_vault,
        metavar="VAULT",
        help="custodian: ingest again the file's manifests that VAULT lacks (after an interrupted recovery)",
    )
    p.add_argument("--custodian-key", type=Path, help="custodian NAME.key (with --restore)")
    p.add_argument("--passphrase-file", type=Path, help="else TRACER_PASSPHRASE, else a prompt")
    json_arg(p)
    p.set_defaults(handler=cmd_quarantine)

    p = sub.add_parser("log")
    vault_arg(p)
    json_arg(p)
    p.add_argument("--start", type=int, default=0, help="the first log entry to list (default 0)")
    p.add_argument("--limit", type=int, help="list at most this many entries (default: to the end)")
    p.set_defaults(handler=cmd_log)

    p = sub.add_parser("proof")
    vault_arg(p)
    p.add_argument("seq", type=int, nargs="?", help="the log entry to prove included")
    p.add_argument("--size", type=int, help="the tree size to prove it in (default: the whole log)")
    p.add_argument(
        "--consistency",
        type=int,
        nargs=2,
        metavar=("OLD", "NEW"),
        help="prove the tree of size OLD is a prefix of the tree of size NEW",
    )
    json_arg(p)
    p.set_defaults(handler=cmd_proof)


def _custodian(args: argparse.Namespace) -> Identity:
    from tracer.secrets import load_key

    return load_key(args.custodian_key, args.passphrase_file)


def _time(value: str | None, flag: str) -> str:
    """An RFC 3339 time from a flag, in `spell_utc`'s one UTC spelling.

    Stored key windows and effective times are compared with other times later, so
    they are written in one spelling; a time without an offset is ambiguous and refused.
    """
    if value is None:
        return now_iso()
    if not valid_iso(value):
        raise InputError(flag, "$", f"not an RFC 3339 time: {value!r}")
    moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        raise InputError(flag, "$", f"time needs a UTC offset or 'Z': {value!r}")
    return spell_utc(moment)


def cmd_keygen(args: argparse.Namespace) -> int:
    from store.crypto import Identity
    from tracer.secrets import read_passphrase

    problem = name_problem(args.name)
    if problem:
        raise KeyFileError(f"invalid key name: {problem}")
    key_path = args.out / f"{args.name}.key"
    pub_path = args.out / f"{args.name}.pub"
    for existing in (key_path, pub_path):
        if existing.exists():
            raise KeyFileError(f"{existing}: already exists; refusing to overwrite a key")
    passphrase = read_passphrase(args.passphrase_file, f"new key {args.name}")
    if not passphrase:
        raise KeyFileError("refusing an empty passphrase")
    ident = Identity.generate(args.name)
    try:
        key, pub = ident.save(args.out, passphrase)
    except OSError as exc:
        raise KeyFileError(f"{args.out}: cannot write the key files ({exc.strerror})") from exc
    print(f"key id {ident.key_id}\nprivate {key}\npublic  {pub}")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from store.vault import Vault

    custodian = _custodian(args)
    with Vault.create(args.vault, custodian, now_iso(), args.origin) as vault:
        cp = vault.latest_checkpoint()
        print(f"created {inert(str(args.vault))} (origin {inert(vault.origin)})")
        print(f"custodian {inert(custodian.name)} {custodian.key_id}")
        print(f"checkpoint size {cp.size}")
    return 0


def cmd_keys_add(args: argparse.Namespace) -> int:
    from store import admin
    from store.crypto import load_public

    custodian = _custodian(args)
    pub = load_public(args.pubfile)
    vf = _time(args.valid_from, "--valid-from") if args.valid_from else None
    vu = _time(args.valid_until, "--valid-until") if args.valid_until else None
    with open_vault(args.vault) as vault:
        seq = admin.add_producer_key(vault, custodian, pub, now_iso(), vf, vu)
    print(f"added producer key {pub.key_id} ({inert(pub.name)}) at log entry {seq}")
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    from store import admin

    custodian = _custodian(args)
    with open_vault(args.vault) as vault:
        seq = admin.revoke_producer_key(vault, custodian, args.key_id, now_iso(), args.reason)
    print(f"revoked producer key {inert(args.key_id)} at log entry {seq}")
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    from store.roster import producer_keys

    with open_vault(args.vault, read_only=True) as vault:
        keys = producer_keys(vault)
    rows: list[dict[str, Any]] = [
        {
            "key_id": k.key_id,
            "name": k.name,
            "valid_from": k.valid_from,
            "valid_until": k.valid_until,
            "revoked_at": k.revoked_at,
            "added_seq": k.added_seq,
        }
        for k in keys.values()
    ]
    if args.json:
        emit_json({"keys": rows})
    else:
        for r in rows:
            state = f"revoked {r['revoked_at']}" if r["revoked_at"] else "active"
            window = f"{r['valid_from'] or '-'} .. {r['valid_until'] or '-'}"
            print(f"{r['key_id'][:16]}  {inert(str(r['name'])):<24} {window:<45} {state}")
    return 0


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(str(path), "$", f"cannot read file ({exc.strerror})") from exc


def cmd_sign(args: argparse.Namespace) -> int:
    from store.dsse import sign_envelope
    from tracer.secrets import load_key

    ident = load_key(args.key, args.passphrase_file)
    data = _read(args.file)
    env = sign_envelope(data, args.payload_type, ident)
    _write_json(env.to_json(), args.out)
    return 0


def cmd_pack(args: argparse.Namespace) -> int:
    """Many drafts, one key unlock; every draft is read and checked before any is signed."""
    from store.canonical import parse_strict
    from store.producer import draft_to_input
    from tracer.cli.outbox_cmds import pack_into
    from tracer.secrets import load_key

    if args.out_dir is None and len(args.drafts) > 1:
        raise InputError("pack", "$", "several drafts need --out-dir DIR (one input file per draft)")
    if args.out_dir is not None and args.out is not None:
        raise InputError("pack", "$", "give --out or --out-dir, not both")
    drafts = []
    for path in args.drafts:
        draft = parse_strict(_read(path), str(path))
        if not isinstance(draft, dict):
            raise InputError(str(path), "$", "expected a JSON object")
        drafts.append(draft)
    ident = load_key(args.key, args.passphrase_file)
    if args.out_dir is None:
        _write_json(draft_to_input(drafts[0], ident), args.out)
        return 0
    pack_into(args.out_dir, list(zip(args.drafts, drafts, strict=True)), ident)
    return 0


def _write_json(value: Any, out: Path | None) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(str(out), "$", f"cannot write file ({exc.strerror})") from exc


def cmd_ingest(args: argparse.Namespace) -> int:
    from store.ingest import ingest

    custodian = _custodian(args)
    with open_vault(args.vault) as vault:
        report = ingest(vault, list(args.files), custodian, now_iso(), args.skip_invalid)
    if args.json:
        emit_json(report.to_json())
    else:
        for r in report.rejected:
            print(f"REJECTED {inert(r.file)}: {inert(r.path)}: {inert(r.message)}")
        for f in report.faults:
            print(
                f"FAULT    {inert(f.file)}: answer {inert(f.answer_id)}: "
                f"{inert(f.path)}: {f.code}: {inert(f.message)}"
            )
        if report.appended:
            print(f"appended {len(report.accepted)} file(s); checkpoint size {report.checkpoint_size}")
        else:
            print(
                "nothing appended" + (" (all-or-nothing: fix or --skip-invalid)" if report.rejected else "")
            )
    return 0 if report.ok else 1


def cmd_purge(args: argparse.Namespace) -> int:
    from store import admin
    from store.ingest import read_tombstone_request

    flags = [args.digest, args.policy, args.reason, args.authorizer, args.effective_at]
    if args.request is not None:
        if any(f is not None for f in flags):
            raise InputError("purge", "$", "give either --request FILE or DIGEST --policy --reason, not both")
        req = read_tombstone_request(args.request)
    elif args.digest is None or args.policy is None or args.reason is None:
        raise InputError("purge", "$", "DIGEST, --policy and --reason are required (or --request FILE)")
    custodian = _custodian(args)
    if args.request is None:
        req = {
            "digest": args.digest,
            "policy": args.policy,
            "reason": args.reason,
            "authorizer": args.authorizer or custodian.name,
            "effective_at": _time(args.effective_at, "--effective-at"),
        }
    with open_vault(args.vault) as vault:
        seq = admin.purge(
            vault,
            custodian,
            req["digest"],
            req["policy"],
            req["reason"],
            req["authorizer"],
            req["effective_at"],
        )
    print(f"purged {req['digest']}; tombstone at log entry {seq}")
    return 0


def cmd_checkpoint(args: argparse.Namespace) -> int:
    if args.cover_checked_tail:
        return _cover_checked_tail(args)
    with open_vault(args.vault, read_only=True) as vault:
        sys.stdout.write(vault.latest_checkpoint().note)
    return 0


def _cover_checked_tail(args: argparse.Namespace) -> int:
    """Recover a log whose newest entries no valid checkpoint covers, signing over nothing
    that cannot be proven (`store.recovery`): a tail this machine remembers a checkpoint
    over (same size and root: the very bytes signed) is signed again; any other tail is
    moved to a quarantine file, the log is cut back to its newest valid checkpoint and the
    tail's manifests are ingested again with every check."""
    from store import merkle
    from store.recovery import quarantine_tail
    from tracer.clock import now_iso
    from tracer.engine.session import head_checkpoint, valid_prefix_checkpoint
    from tracer.engine.trust import TrustStore

    if args.custodian_key is None:
        raise InputError("checkpoint", "$", "--cover-checked-tail needs --custodian-key")
    custodian = _custodian(args)
    with open_vault(args.vault) as vault:
        leaves = vault.leaf_hashes()
        size, root = len(leaves), merkle.root(leaves)
        cp, code, why = head_checkpoint(vault, vault.roster(), size, root)
        if cp is not None:
            print(f"nothing to cover: the checkpoint at size {size} already covers every entry")
            return 0
        if code != FindingKind.ENTRY_NOT_CHECKPOINTED:
            raise VaultError(f"{args.vault}: {why}; only an uncovered tail can be recovered, not this")
        seen = TrustStore().all_seen(vault.origin)
        if any(s.size == size and s.root == root.hex() for _who, s in seen):
            vault.tree.cover_checked_tail(custodian, size, root)
            print(
                f"covered entries up to size {size}: this machine remembers a checkpoint over exactly "
                f"these entries (root {root.hex()[:16]}); signed again by {custodian.name}"
            )
            return 0
        kept = valid_prefix_checkpoint(vault, leaves)
        if kept is None:
            raise VaultError(
                f"{args.vault}: no valid checkpoint covers any prefix of the log; nothing to keep"
            )
        done = quarantine_tail(vault, custodian, kept, now_iso())
    print(
        f"moved entries {kept}..{size - 1} ({len(done.entries)}) to {inert(str(done.file))}: no checkpoint "
        f"this machine knows covers them, so none was signed over them; the log is back at its "
        f"checkpoint of size {kept}"
    )
    return _print_restored(done)


def _print_restored(done: Quarantined) -> int:
    """What a recovery or a restore brought back; exit 1 when anything did not come back."""
    report = done.report
    restored = len(report.accepted) if report is not None else 0
    print(f"ingested again: {restored} of {len(done.reingested)} manifest(s), each checked as new")
    for r in report.rejected if report is not None else []:
        print(f"  not restored: {inert(r.file)}: {inert(r.message)}")
    for seq, kind in done.to_remake:
        print(f"  to make again by its signer: {inert(kind)} (was log entry {seq})")
    lost = (len(report.rejected) if report is not None else 0) + len(done.to_remake)
    return 1 if lost else 0


def cmd_quarantine(args: argparse.Namespace) -> int:
    """What a recovery moved aside, entry by entry, each checked against its stored leaf."""
    from store.entries import LogEntry
    from store.records import MalformedRecordError
    from store.recovery import Quarantined, read_quarantine, restore

    if args.restore is not None:
        if args.custodian_key is None:
            raise InputError("quarantine", "$", "--restore needs --custodian-key")
        custodian = _custodian(args)
        with open_vault(args.restore) as vault:
            done = restore(
                vault, custodian, Quarantined(args.file, -1, read_quarantine(args.file)), now_iso()
            )
        return _print_restored(done)
    rows = []
    for e in read_quarantine(args.file):
        try:
            entry = LogEntry.from_bytes(e.data)
            leaf_ok = entry.leaf == e.leaf
            try:
                answer = entry.answer_record().answer_id
            except MalformedRecordError:
                answer = None
            kind = entry.kind
        except ValueError:
            leaf_ok, answer, kind = False, None, e.kind
        rows.append({"seq": e.seq, "kind": kind, "leaf_ok": leaf_ok, "answer_id": answer})
    if args.json:
        emit_json({"file": str(args.file), "entries": rows})
        return 0
    for r in rows:
        mark = "leaf ok" if r["leaf_ok"] else "LEAF MISMATCH (bytes altered)"
        extra = f"  answer {inert(str(r['answer_id']))}" if r["answer_id"] else ""
        print(f"{r['seq']:>8}  {inert(str(r['kind'])):<20} {mark}{extra}")
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    """Streams entries page by page: a million-entry log is never held in memory."""
    from store.crypto import b64e

    if args.start < 0 or (args.limit is not None and args.limit < 0):
        raise InputError("log", "$", "--start and --limit must not be negative")
    out = sys.stdout
    with open_vault(args.vault, read_only=True) as vault:
        end = None if args.limit is None else args.start + args.limit
        if args.json:
            out.write('{"entries": [')
        for n, (seq, kind, data, leaf) in enumerate(vault.raw_entries(args.start, end)):
            if args.json:
                row = {"seq": seq, "kind": kind, "leaf_hash": leaf.hex(), "entry": b64e(data)}
                out.write(("\n  " if n == 0 else ",\n  ") + json.dumps(row))
            else:
                out.write(f"{seq:>8}  {kind:<20} {leaf.hex()}\n")
        if args.json:
            out.write("\n]}\n")
    return 0


def cmd_proof(args: argparse.Namespace) -> int:
    with open_vault(args.vault, read_only=True) as vault:
        size = vault.size()
        if args.consistency:
            old, new = args.consistency
            if not 0 < old <= new <= size:
                raise InputError("--consistency", "$", f"need 0 < OLD <= NEW <= {size}")
            proof = vault.consistency_proof(old, new)
            out: dict[str, Any] = {
                "old_size": old,
                "new_size": new,
                "old_root": vault.root(old).hex(),
                "new_root": vault.root(new).hex(),
                "proof": [h.hex() for h in proof],
            }
        else:
            if args.seq is None:
                raise InputError("proof", "$", "give SEQ or --consistency OLD NEW")
            n = size if args.size is None else args.size
            if not 0 <= args.seq < n <= size:
                raise InputError("proof", "$", f"need 0 <= SEQ < SIZE <= {size}")
            proof = vault.inclusion_proof(args.seq, n)
            out = {
                "seq": args.seq,
                "size": n,
                "leaf_hash": vault.entry(args.seq).leaf.hex(),
                "root": vault.root(n).hex(),
                "proof": [h.hex() for h in proof],
            }
    if args.json:
        emit_json(out)
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0
