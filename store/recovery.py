"""Recovering a vault whose newest entries no valid checkpoint covers, without blessing them.

An uncovered tail is what deleting the newest checkpoint row leaves behind — and also what
an attacker without a key leaves after appending, or after rewriting an uncovered entry's
unsigned wrapper (`seq`, `ingested_at`, `faults`).  No check can tell those apart from the
entries alone, so the recovery signs over nothing it cannot prove:

* **Remembered**: when this machine remembers a checkpoint it saw or signed at exactly the
  log's size and root, the tail is byte for byte what was signed then (the leaves cover the
  wrappers too): the checkpoint is signed again.  The caller (the engine) decides that.
* **Quarantined** otherwise: the tail moves into `VAULT/quarantine/<first>-<last>.jsonl`
  (seq, kind column, stored leaf and the exact entry bytes, one line each; `tracer
  quarantine FILE` lists it), the log is cut back to the newest valid checkpoint, which
  then covers every entry again, and each producer manifest of the tail is re-ingested
  through the normal ingest (its signature, window, ids and texts all checked again, its
  texts read from the vault's own ciphertexts).  A source revision the custodian's key
  signed is made again by the custodian at its new place, with its content from the
  vault; any other statement is bound to the place it was signed for and is listed, to be
  made again by its signer.
  A tail holding a revocation, grant, key change, tombstone, hold or release is refused:
  quarantining it would undo a decision that must stay final, so it is recovered only on a
  machine that remembers its checkpoint.

Nothing here reads a verification's findings: an unrelated old finding never blocks it.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from store.crypto import Identity
from store.dsse import verify_envelope
from store.entries import STATEMENT_TYPE, EntryKind, LogEntry
from store.errors import InputError, SignatureError, VaultError
from store.guarded import GUARDED_KINDS, guarded_kind
from store.ingest import IngestReport, ingest
from store.keyring import DataKeys
from store.records import MalformedRecordError
from store.schema import VIEW_COLUMNS
from store.vault import Vault
from store.viewcommit import GROUP

__all__ = ["Quarantined", "quarantine_tail", "read_quarantine", "restore"]

QUARANTINE_DIR = "quarantine"


@dataclass(frozen=True)
class QuarantinedEntry:
    seq: int
    kind: str
    leaf: bytes
    data: bytes

    def to_json(self) -> dict[str, object]:
        return {
            "seq": self.seq,
            "kind": self.kind,
            "leaf_hash": self.leaf.hex(),
            "entry": base64.b64encode(self.data).decode("ascii"),
        }


@dataclass
class Quarantined:
    """What a recovery moved aside and what became of it."""

    file: Path
    kept_size: int
    entries: list[QuarantinedEntry] = field(default_factory=list)
    #: seqs of the manifests ingested again, and that ingest's report
    reingested: list[int] = field(default_factory=list)
    report: IngestReport | None = None
    #: (seq, kind) of statements that cannot move: to be made again by their signers
    to_remake: list[tuple[int, str]] = field(default_factory=list)


def quarantine_tail(vault: Vault, custodian: Identity, kept_size: int, now: str) -> Quarantined:
    """Move entries `kept_size`.. into a quarantine file, cut the log back to the valid
    checkpoint at `kept_size`, and re-ingest the tail's manifests.  `kept_size` is the size
    of the newest checkpoint the caller proved valid for this log's prefix."""
    if vault.read_only:
        raise VaultError(f"{vault.path}: vault is open read-only")
    if custodian.public.ed25519 != vault.custodian.ed25519:
        raise VaultError(f"{vault.path}: only the custodian may recover a vault")
    tail = [QuarantinedEntry(seq, kind, leaf, data) for seq, kind, data, leaf in vault.raw_entries(kept_size)]
    if not tail:
        raise VaultError(f"{vault.path}: nothing past the checkpoint at size {kept_size} to recover")
    _refuse_guarded(vault, tail)
    folder = vault.path / QUARANTINE_DIR
    folder.mkdir(exist_ok=True)
    out = Quarantined(folder / f"{tail[0].seq:08d}-{tail[-1].seq:08d}.jsonl", kept_size, tail)
    body = "".join(json.dumps(e.to_json(), sort_keys=True) + "\n" for e in tail)
    tmp = out.file.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(body)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, out.file)  # durable before anything is cut: a crash after keeps it whole
    _cut(vault, kept_size)
    restore(vault, custodian, out, now)
    return out


def _refuse_guarded(vault: Vault, tail: list[QuarantinedEntry]) -> None:
    """Refuse to move aside a tail holding entries that must stay final (holds, purges...)."""
    guarded = [(e.seq, guarded_kind(e.data) or e.kind) for e in tail if _is_guarded(e)]
    if not guarded:
        return
    seq, kind = guarded[0]
    many = "entry" if len(guarded) == 1 else "entries"
    raise VaultError(
        f"{vault.path}: the uncovered tail holds {len(guarded)} {many} "
        f"that must stay final (first: {kind} at log entry {seq}); moving it aside would undo it. "
        "Recover on the machine that signed it (it remembers the checkpoint), or inspect it with "
        "`tracer open --forensic`"
    )


def restore(vault: Vault, custodian: Identity, out: Quarantined, now: str) -> Quarantined:
    """Ingest again, with every check, the producer manifests of a quarantine that are not
    in the vault now (also after a recovery that was interrupted before this step; the
    texts are read from the vault's ciphertexts, which the cut keeps)."""
    vault.require_custodian(custodian, "restoring a quarantine")
    vault.views.require("v_answers", "v_revisions")
    present = {str(a) for (a,) in vault.query("SELECT answer_id FROM v_answers")}
    revisions = {(str(d), str(r)) for d, r in vault.query("SELECT document_id, revision FROM v_revisions")}
    texts = _texts_of(vault, custodian, out.entries)
    out.to_remake.clear()
    plan = _Restore(vault, present, revisions, texts, to_remake=out.to_remake)
    for e in out.entries:
        plan.sort(e)
    out.reingested = [seq for seq, doc in plan.manifests if "envelope" in doc]
    if plan.manifests:
        out.report = _ingest_docs(vault, custodian, plan.manifests, now)
    return out


@dataclass
class _Restore:
    """What a restore compares a quarantine with (the answers and revisions the vault holds
    now, the tail's texts), and what it decides for each entry: ingest it again, or list it
    to be made again by its signer."""

    vault: Vault
    present: set[str]
    revisions: set[tuple[str, str]]
    texts: dict[str, str]
    manifests: list[tuple[int, dict[str, object]]] = field(default_factory=list)
    to_remake: list[tuple[int, str]] = field(default_factory=list)

    def sort(self, e: QuarantinedEntry) -> None:
        entry = _parse(e)
        if (
            entry is not None
            and entry.kind == EntryKind.MANIFEST
            and isinstance(entry.body.get("envelope"), dict)
        ):
            # the producer's envelope carries its own signature: ingest checks it again and
            # writes a new wrapper, so a rewritten wrapper (faults, times) is never kept
            if _answer_id(entry) not in self.present:
                self.manifests.append((e.seq, _manifest_doc(entry, self.texts)))
            return
        rev = (
            _custodian_revision(self.vault, entry)
            if entry is not None and entry.kind == EntryKind.REVISION
            else None
        )
        if rev:
            self._revision(e.seq, rev)
        else:
            self.to_remake.append((e.seq, entry.kind if entry is not None else e.kind))

    def _revision(self, seq: int, rev: Mapping[str, object]) -> None:
        """The custodian's own statement, checked under its key: made again at a new place."""
        if (str(rev.get("document_id")), str(rev.get("revision"))) in self.revisions:
            return
        doc = _revision_doc(rev, self.texts)
        if doc is None:
            self.to_remake.append((seq, "revision"))
        else:
            self.manifests.insert(0, (seq, doc))


def _manifest_doc(entry: LogEntry, texts: dict[str, str]) -> dict[str, object]:
    """A quarantined manifest as ingest reads it: the producer's envelope and its texts."""
    digests = _digests_of(entry)
    return {"envelope": entry.body["envelope"], "contents": {d: texts[d] for d in digests if d in texts}}


def _revision_doc(rev: Mapping[str, object], texts: dict[str, str]) -> dict[str, object] | None:
    """A quarantined custodian revision as a source-revision file, or None without its text."""
    content = texts.get(str(rev.get("content_sha256")))
    if content is None:
        return None
    body = {k: v for k, v in rev.items() if k != "content_sha256"}
    return {"schema": "tracer.source_revision/v1", **body, "content": content}


def _ingest_docs(
    vault: Vault, custodian: Identity, docs: list[tuple[int, dict[str, object]]], now: str
) -> IngestReport:
    """Ingest the documents, revisions first, with every check ingest makes."""
    with tempfile.TemporaryDirectory(prefix="tracer-recover-") as tmp:
        files = []
        for seq, doc in docs:
            p = Path(tmp) / f"{seq:08d}.json"
            p.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
            files.append(p)
        return ingest(vault, files, custodian, now, skip_invalid=True)


def _custodian_revision(vault: Vault, entry: LogEntry) -> Mapping[str, object] | None:
    """The statement of a revision entry whose envelope the custodian's key signed."""
    try:
        env = entry.envelope
        if env is None or env.payload_type != STATEMENT_TYPE:
            return None
        verify_envelope(env, {vault.custodian.key_id: vault.custodian.ed25519})
        stmt = json.loads(env.payload).get("statement")
    except (SignatureError, InputError, ValueError, AttributeError):
        return None
    return stmt if isinstance(stmt, dict) else None


def _answer_id(entry: LogEntry) -> str | None:
    try:
        return entry.answer_record().answer_id
    except MalformedRecordError:
        return None


def read_quarantine(path: Path) -> list[QuarantinedEntry]:
    """The entries of a quarantine file, each checked to be what the file says (its leaf)."""
    out: list[QuarantinedEntry] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
            e = QuarantinedEntry(
                int(row["seq"]),
                str(row["kind"]),
                bytes.fromhex(row["leaf_hash"]),
                base64.b64decode(row["entry"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise VaultError(f"{path}: line {n} is not a quarantined entry ({exc})") from exc
        out.append(e)
    return out


def _is_guarded(e: QuarantinedEntry) -> bool:
    return e.kind in GUARDED_KINDS or guarded_kind(e.data) is not None


def _parse(e: QuarantinedEntry) -> LogEntry | None:
    try:
        return LogEntry.from_bytes(e.data)
    except ValueError:
        return None


def _digests_of(entry: LogEntry) -> set[str]:
    try:
        m = entry.answer_record()
    except MalformedRecordError:
        return set()
    out = {str(m.question_sha256), str(m.answer_sha256)}
    for p in m.passages:
        out |= {str(p.retrieved_sha256), str(p.model_input_sha256)}
    out.discard("None")
    return out


def _texts_of(vault: Vault, custodian: Identity, tail: list[QuarantinedEntry]) -> dict[str, str]:
    """The tail's texts from the vault's own ciphertexts, read before anything is cut."""
    keys = DataKeys(vault, custodian)
    wanted: set[str] = set()
    for e in tail:
        entry = _parse(e)
        if entry is not None and entry.kind == EntryKind.MANIFEST:
            wanted |= _digests_of(entry)
        elif entry is not None and entry.kind == EntryKind.REVISION:
            rev = _custodian_revision(vault, entry)
            if rev is not None:
                wanted.add(str(rev.get("content_sha256")))
    out: dict[str, str] = {}
    for digest in sorted(wanted):
        found = keys.decrypt(digest)
        if found is not None:
            out[digest] = found[1].decode("utf-8")
    return out


def _cut(vault: Vault, kept_size: int) -> None:
    """Entries from `kept_size` on, their view rows and cached view digests, in one transaction."""
    con = vault.con
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM log WHERE seq >= ?", [kept_size])
        for table in VIEW_COLUMNS:
            con.execute(f"DELETE FROM {table} WHERE seq >= ?", [kept_size])  # noqa: S608
        con.execute("DELETE FROM view_groups WHERE grp >= ?", [kept_size // GROUP])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    vault.forget_tree()
