"""Build small vaults through the same API and input formats a user's files go through."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from store import admin
from store.crypto import Identity
from store.entries import LogEntry, Statement, make_statement, place_of
from store.guarded import extension_line, guarded_kind
from store.ingest import IngestReport, ingest
from store.merkle import root
from store.note import Checkpoint
from store.producer import draft_to_input
from store.rowtables import insert_rows
from store.schema import VIEW_COLUMNS
from store.vault import Vault
from store.views import Rows, derive
from tests.templates import copy_of
from tracer.engine.session import Session, unlock
from tracer.engine.textnorm import CHUNKER_VERSION, NORMALIZER_VERSION, chunk_document
from tracer.engine.trust import TrustStore

T0 = "2026-01-01T00:00:00Z"
PASSPHRASE = b"test-passphrase"


@dataclass
class Case:
    """A vault with a custodian, one producer and investigators, all from fixed seeds.

    The vault is opened when first used: many tests go straight to `session()` (or to
    the CLI), and an open that is closed unused costs DuckDB's set-up and tear-down
    (~30 ms) for nothing.  `None` here means "not opened yet", never "closed"."""

    path: Path
    _vault: Vault | None
    custodian: Identity
    producer: Identity
    investigators: dict[str, Identity] = field(default_factory=dict)
    counter: int = 0

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            self._vault = Vault.open(self.path)
        return self._vault

    @vault.setter
    def vault(self, vault: Vault) -> None:
        self._vault = vault

    @property
    def inputs(self) -> Path:
        d = self.path.parent / "inputs"
        d.mkdir(exist_ok=True)
        return d

    def write(self, obj: dict[str, Any], name: str | None = None) -> Path:
        self.counter += 1
        p = self.inputs / (name or f"input-{self.counter:04d}.json")
        p.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
        return p

    def ingest(self, *objs: dict[str, Any], now: str = "2026-06-01T00:00:00Z") -> IngestReport:
        files = [self.write(o) for o in objs]
        return ingest(self.vault, files, self.custodian, now)

    def grant(self, name: str, scopes: list[str]) -> Identity:
        ident = Identity.from_seed(name, name.encode())
        admin.grant_investigator(self.vault, self.custodian, ident.public, scopes, T0)
        self.investigators[name] = ident
        return ident

    def session(self, name: str = "ines", **kw: Any) -> Session:
        """Unlock as an investigator; reopens the vault through the real unlock path."""
        if self._vault is not None:
            self._vault.close()
        s = unlock(self.path, self.investigators[name], trust=TrustStore(), **kw)
        self.vault = s.vault
        return s

    def reopen(self) -> Vault:
        if self._vault is not None:
            self._vault.close()
        self.vault = Vault.open(self.path)
        return self.vault

    def close(self) -> None:
        if self._vault is None:
            return
        try:
            self._vault.close()
        except Exception:  # noqa: S110 - already closed
            pass


def new_case(path: Path, scopes: dict[str, list[str]] | None = None) -> Case:
    """A vault at `path` with the fixed custodian, the producer key and investigators
    granted `scopes` (ines '*').  Nothing in it is random, so a copy of the one this
    process created first for the same scopes is the same vault row for row."""
    scopes = scopes or {"ines": ["*"]}
    custodian = Identity.from_seed("custodian", b"custodian")
    producer = Identity.from_seed("producer", b"producer")
    if path.exists():
        c = _create(path, custodian, producer, scopes)
    else:
        name = "case-" + json.dumps(list(scopes.items()))
        copy_of(name, lambda d: _create(d, custodian, producer, scopes).close(), path)
        c = Case(path, None, custodian, producer)
        c.investigators = {n: Identity.from_seed(n, n.encode()) for n in scopes}
    return c


#: where `tests/conftest.py` points TRACER_HOME, under a test's tmp_path
HOME = "tracer-home"


def case_copy(
    name: str, build: Callable[[Case], object], tmp: Path, scopes: dict[str, list[str]] | None = None
) -> Case:
    """The case `build` makes of `new_case(scopes)`, with the TRACER_HOME it left (pins,
    remembered checkpoints, receipts): built once per process under `name`, then copied to
    `tmp / 'vault'` and `tmp / HOME` for each test.  The one thing in the home that names
    the build's directory, the path a vault was last opened at, is rewritten to the copy's,
    so the copy is what building it at `tmp` would have left."""
    investigators: dict[str, Identity] = {}

    def make(d: Path) -> None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TRACER_HOME", str(d / HOME))
            c = new_case(d / "vault", scopes)
            try:
                build(c)
                investigators.update(c.investigators)
            finally:
                c.close()

    src = copy_of(name, make, tmp)
    trust = TrustStore(tmp / HOME).path
    if trust.exists():
        text = trust.read_text(encoding="utf-8")
        trust.write_text(text.replace(str(src.resolve()), str(tmp.resolve())), encoding="utf-8")
    path = tmp / "vault"
    c = Case(path, None, Identity.from_seed("custodian", b"custodian"), _PRODUCER)
    c.investigators = {n: Identity.from_seed(n, n.encode()) for n in (scopes or {"ines": ["*"]})}
    c.investigators.update(investigators)
    c.counter = len(list(c.inputs.glob("input-*.json")))
    return c


_PRODUCER = Identity.from_seed("producer", b"producer")


def _create(path: Path, custodian: Identity, producer: Identity, scopes: dict[str, list[str]]) -> Case:
    vault = Vault.create(path, custodian, T0, origin="tracer.test/vault")
    admin.add_producer_key(vault, custodian, producer.public, T0)
    c = Case(path, vault, custodian, producer)
    for name, sc in scopes.items():
        c.grant(name, sc)
    return c


def revision(
    document_id: str,
    rev: str,
    content: str,
    committed_at: str,
    collection: str = "support",
    title: str | None = None,
) -> dict[str, Any]:
    return {
        "schema": "tracer.source_revision/v1",
        "document_id": document_id,
        "revision": rev,
        "source_system": "northstar-wiki",
        "source_revision": f"src-{rev}",
        "path": f"policies/{document_id}.md",
        "title": title or document_id.replace("-", " ").title(),
        "uri": f"docstore://{document_id}",
        "backend": "docstore",
        "collection": collection,
        "committed_at": committed_at,
        "content": content,
    }


def passage(
    rev: dict[str, Any], contains: str, passage_id: str = "p1", rank: int = 1, **extra: Any
) -> dict[str, Any]:
    """A retrieved passage: the chunk of `rev` that contains `contains`, located exactly."""
    chunk = next(c for c in chunk_document(rev["content"]) if contains in c.text)
    out: dict[str, Any] = {
        "passage_id": passage_id,
        "collection": rev["collection"],
        "source": {"system": rev["source_system"], "path": rev["path"], "revision": rev["source_revision"]},
        "document": {
            "document_id": rev["document_id"],
            "uri": rev["uri"],
            "revision": rev["revision"],
            "backend": rev["backend"],
        },
        "chunk": {
            "chunk_id": f"{rev['document_id']}#{chunk.chunk_index}",
            "pipeline_version": CHUNKER_VERSION,
            "parameters": {},
        },
        "locator": {
            "heading_path": list(chunk.heading_path),
            "paragraph": chunk.paragraph,
            "char_start": chunk.start,
            "char_end": chunk.end,
        },
        "retrieved_text": chunk.text,
        "normalizer_version": NORMALIZER_VERSION,
        "retrieved_at": "2026-02-01T10:00:00Z",
        "rank": rank,
        "score": 0.9 - rank / 100,
        "query": "what is the policy?",
    }
    out.update(extra)
    return out


def manifest(
    answer_id: str,
    answer: str,
    passages: list[dict[str, Any]],
    citations: list[tuple[int, int, list[str]]] | None = None,
    collection: str = "support",
    generated_at: str = "2026-02-01T10:00:01Z",
    **extra: Any,
) -> dict[str, Any]:
    """A draft manifest (texts inline); `Case.signed` turns it into an input file."""
    draft: dict[str, Any] = {
        "run_id": f"run-{answer_id}",
        "answer_id": answer_id,
        "generated_at": generated_at,
        "producer": {"system": "northstar-support-assistant", "version": "1.0.0"},
        "runtime": {
            "model": "model-x",
            "prompt_template_version": "support-v3",
            "pipeline_version": "rag-2.1",
            "parameters": {"temperature": 0.2},
        },
        "authorization": {"principal": "agent:helpdesk", "policy_version": "acl-7", "decision": "allow"},
        "collection": collection,
        "question": "What does the policy say?",
        "answer": answer,
        "passages": passages,
        "citations": [
            {"answer_start": s, "answer_end": e, "passage_ids": ids}
            for s, e, ids in (
                citations
                if citations is not None
                else [(0, len(answer), [p["passage_id"] for p in passages])]
            )
        ],
    }
    draft.update(extra)
    return draft


def signed(case: Case, draft: dict[str, Any], producer: Identity | None = None) -> dict[str, Any]:
    """A signed input file as plain JSON: tests edit it the way an attacker would."""
    return dict(draft_to_input(draft, producer or case.producer))


def append_by_hand(
    case: Case,
    item: LogEntry | Statement | bytes,
    checkpoint_signer: Identity | None = None,
    checkpoint_name: str | None = None,
) -> int:
    """What an attacker with write access to the file does: append a row the way the store
    would (right seq, leaf hash and view rows), without the store's checks.

    `item` is an entry (re-stamped with the next seq), a statement (signed now by its
    signer, bound to this place), or raw entry bytes kept verbatim (a replayed copy).
    With `checkpoint_signer`, a checkpoint over the new size is signed with that key too
    (under `checkpoint_name`, default the key's name): the attacker holds that key.
    """
    con = case.vault.con
    leaves = case.vault.leaf_hashes()
    seq = len(leaves)
    if isinstance(item, Statement):
        item = make_statement(
            item.kind, item.body, item.signer, place_of(case.vault.origin, seq, root(leaves))
        )
    if isinstance(item, LogEntry):
        entry = item.at(seq)
    else:
        entry = LogEntry.from_bytes(item)
    rows: Rows = {t: [] for t in VIEW_COLUMNS}
    derive(seq, entry, rows)
    con.execute("INSERT INTO log VALUES (?, ?, ?, ?)", [seq, entry.kind, entry.data, entry.leaf])
    for table, items in rows.items():
        if items:
            insert_rows(con, table, items)
    if checkpoint_signer is not None:
        # as an honest signer would: committing to the guarded entries the bytes now say
        pairs = [(s, leaf) for s, _k, data, leaf in case.vault.index.guarded_rows() if guarded_kind(data)]
        cp = Checkpoint(case.vault.origin, seq + 1, root([*leaves, entry.leaf]), (extension_line(pairs),))
        note = cp.sign_as(checkpoint_signer, checkpoint_name or checkpoint_signer.name)
        cid = con.execute("SELECT max(id) + 1 FROM checkpoints").fetchall()[0][0]
        con.execute(
            "INSERT INTO checkpoints VALUES (?, ?, ?, ?)", [cid, seq + 1, checkpoint_signer.key_id, note]
        )
    case.reopen()
    return seq


#: DuckDB's file layout: three 4 KiB header blocks, then 256 KiB data blocks
_DB_HEADER, _DB_BLOCK = 3 * 4096, 256 * 1024


def damage_a_block(db: Path, table: str) -> None:
    """Overwrite 4 KiB inside one of `table`'s data blocks: the file still opens, and the
    page's checksum fails only when a query reads it."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            f"SELECT DISTINCT block_id FROM pragma_storage_info('{table}') WHERE block_id >= 0 ORDER BY 1"  # noqa: S608
        ).fetchall()
    finally:
        con.close()
    blocks = [int(r[0]) for r in rows]
    assert blocks, f"{table} has no data block"
    with db.open("r+b") as f:
        f.seek(_DB_HEADER + blocks[len(blocks) // 2] * _DB_BLOCK + 8192)
        f.write(os.urandom(4096))
