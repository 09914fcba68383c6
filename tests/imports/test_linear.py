"""Import stays linear in the file (issue 25 item 4): the export is hashed once per file,
not once per answer, and the revisions its passages name are read in one query and
decrypted once each, however many passages name them.  Speed itself is measured by
bench/import.py, never asserted here."""

from __future__ import annotations

from typing import Any

import pytest

import store.crypto
from store import queries
from tests.helpers import Case
from tests.imports.conftest import dump, run_import, write
from tests.imports.test_pitfalls import _rag, retrace


def test_the_export_is_hashed_once_and_revisions_read_once(
    sourced: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = [retrace(_rag(), f"{i + 1:032x}") for i in range(12)]
    data = dump(docs)
    path = write(sourced, "many.jsonl", data)
    real_sha, real_many = store.crypto.sha256_hex, queries.revisions_of_many
    hashed: list[int] = []
    reads: list[list[str]] = []

    def sha(b: bytes) -> str:
        if b == data:
            hashed.append(len(b))
        return real_sha(b)

    def many(vault: Any, ids: list[str]) -> Any:
        reads.append(list(ids))
        return real_many(vault, ids)

    for module in ("tracer.importers.run", "store.imported", "store.keyring"):
        monkeypatch.setattr(f"{module}.sha256_hex", sha)
    monkeypatch.setattr(queries, "revisions_of_many", many)
    decrypts: list[int] = []
    from store.keyring import DataKeys

    real_decrypt_many = DataKeys.decrypt_many

    def counted(self: DataKeys, digests: Any, rows: Any = None) -> Any:
        decrypts.append(len(digests))
        return real_decrypt_many(self, digests, rows)

    monkeypatch.setattr(DataKeys, "decrypt_many", counted)
    plan = run_import(sourced, path)
    assert len(plan.seqs) == 12 and all(p["chain"] for it in plan.items for p in it.statement["passages"])
    # once by the reader, once by append_imported's check, once when it is encrypted
    assert len(hashed) == 3, hashed
    assert reads == [["returns"]] and decrypts == [1]
