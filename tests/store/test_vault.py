"""The vault: append-only API, purge, checkpoints after every batch, encryption at rest."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import store
from store import admin, merkle
from store.batch import Batch
from store.blobstore import BlobStore
from store.crypto import Identity, sha256_hex
from store.errors import AccessDeniedError, StoreError, VaultError
from store.keyring import DataKeys
from store.logindex import LogIndex
from store.note import Checkpoint, open_note, verify_checkpoint
from store.rostercache import RosterCache
from store.schema import DB_FILE
from store.treehead import TreeHead
from store.vault import Vault
from tests.helpers import T0, Case, manifest, passage, revision, signed
from tracer.engine.verify import verify

STORE_DIR = Path(store.__file__).parent
SECRET = "The purple kangaroo ledger balances at 4471 units on the third moon."
TITLE = "Visible Title Marker ZQXJ"


def _content() -> str:
    return f"# Ledger\n\n## Balances\n\n{SECRET}\n"


def _ingest_secret(case: Case) -> dict[str, str]:
    rev = revision("ledger", "A", _content(), "2026-01-05T00:00:00Z", title=TITLE)
    inp = signed(case, manifest("ans-secret", SECRET, [passage(rev, "kangaroo")]))
    report = case.ingest(rev, inp)
    assert report.ok, report.to_json()
    return dict(inp["contents"])


# -- append-only -----------------------------------------------------------------------------

_MUTATORS = re.compile(r"update|delete|remove|drop|truncate|replace|rewrite|set_|edit|purge|clear", re.I)


def test_public_api_has_no_update_or_delete_except_purge() -> None:
    vault_api = [n for n, _ in inspect.getmembers(Vault) if not n.startswith("_")]
    batch_api = [n for n, _ in inspect.getmembers(Batch) if not n.startswith("_")]
    assert [n for n in vault_api if _MUTATORS.search(n)] == []
    assert [n for n in batch_api if _MUTATORS.search(n)] == ["delete_blobs"]
    assert [n for n in dir(admin) if _MUTATORS.search(n) and not n.startswith("_")] == ["purge"]
    # the objects a vault holds change nothing but their own caches
    for part, allowed in ((BlobStore, ["drop_index"]), (LogIndex, []), (TreeHead, []), (RosterCache, [])):
        api = [n for n, _ in inspect.getmembers(part) if not n.startswith("_")]
        assert [n for n in api if _MUTATORS.search(n)] == allowed


def test_only_purge_deletes_and_nothing_updates() -> None:
    """Every UPDATE/DELETE/DROP/ALTER/TRUNCATE/CREATE OR REPLACE in store/ is accounted for."""
    found: list[str] = []
    pattern = re.compile(
        r"\b(UPDATE|DELETE\s+FROM|DROP\s+TABLE|ALTER\s+TABLE|TRUNCATE|CREATE\s+OR\s+REPLACE)\b[^\"']*"
    )
    for path in sorted(STORE_DIR.glob("*.py")):
        for m in pattern.finditer(path.read_text(encoding="utf-8")):
            found.append(f"{path.name}: {m.group(0).strip()}")
    # as a multiset: moving a statement within its file changes nothing that matters
    assert sorted(found) == sorted(
        [
            # scratch tables for verify, made afresh (emptied) once per range
            "audit.py: CREATE OR REPLACE TEMP TABLE r_{table} ({cols})",
            # verify-dataset's own in-memory connection: the stored blob rows it reads
            "dataset.py: CREATE OR REPLACE TEMP TABLE blobs AS SELECT digest, collection, dk_id "
            "FROM _stored_blobs",
            # and the view rows it derives, made (or emptied) again after each keep
            "dataset.py: CREATE OR REPLACE TEMP TABLE r_{table} ({defs})",
            "batch.py: DELETE FROM blobs WHERE digest = ?",  # Batch.delete_blobs, for purge
            # the recovery cuts an uncovered tail back to its last valid checkpoint, after
            # writing it to a quarantine file (`store.recovery`)
            "recovery.py: DELETE FROM log WHERE seq >= ?",
            "recovery.py: DELETE FROM {table} WHERE seq >= ?",
            "recovery.py: DELETE FROM view_groups WHERE grp >= ?",
            # derived rows that disagree with the signed commitment, replaced by rows derived
            # again from the log (`ViewMender._replace`), and the cache of group digests (`ViewGuard`)
            "viewmend.py: DROP TABLE IF EXISTS temp.main.{table}",
            "viewmend.py: CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM main.{table}",  # the shadow
            "viewmend.py: DROP TABLE IF EXISTS temp.{scratch}",
            "viewmend.py: DROP TABLE IF EXISTS temp.{scratch}",
            "viewmend.py: DELETE FROM temp.main.{table} WHERE {where}",
            "viewmend.py: DELETE FROM {table} WHERE {where}",
            "viewguard.py: DELETE FROM view_groups",
            "viewguard.py: DELETE FROM view_groups WHERE grp >= {start // GROUP}",
        ]
    )
    callers = [
        p.name for p in STORE_DIR.glob("*.py") if "delete_blobs(" in p.read_text() and p.name != "batch.py"
    ]
    assert callers == ["admin.py"]


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM log",
        "UPDATE log SET kind = 'x'",
        "SELECT 1; DELETE FROM blobs",
        "DROP TABLE checkpoints",
        "INSERT INTO log VALUES (99, 'x', '', '')",
        "",
    ],
)
def test_query_accepts_select_only(case: Case, sql: str) -> None:
    size = case.vault.size()
    with pytest.raises(VaultError, match="SELECT statements only"):
        case.vault.query(sql)
    assert case.vault.size() == size


def test_entries_are_stamped_and_leaf_hashed(case: Case) -> None:
    _ingest_secret(case)
    for seq, _kind, data, leaf in case.vault.raw_entries():
        assert leaf == merkle.leaf_hash(data)
        assert leaf.hex() == sha256_hex(b"\x00" + data)
        assert case.vault.entry(seq).seq == seq


def test_read_only_vault_refuses_batches(case: Case) -> None:
    case.vault.close()
    ro = Vault.open(case.path, read_only=True)
    try:
        with pytest.raises(VaultError, match="read-only"), ro.batch(case.custodian):
            pass
    finally:
        ro.close()
    case.vault = Vault.open(case.path)


def test_open_refusals(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="no such vault directory"):
        Vault.open(tmp_path / "missing")
    with pytest.raises(VaultError, match="is missing"):
        Vault.open(tmp_path)


def test_create_refuses_existing_vault_and_bad_origin(case: Case, tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="already exists"):
        Vault.create(case.path, case.custodian, T0)
    target = tmp_path / "fresh"
    with pytest.raises(VaultError, match="cannot sign checkpoints"):
        Vault.create(target, case.custodian, T0, origin="two\nlines")
    assert not (target / DB_FILE).exists()
    bad_name = Identity.from_seed("bad name", b"x")
    with pytest.raises(VaultError, match="cannot sign checkpoints"):
        Vault.create(target, bad_name, T0)
    assert not (target / DB_FILE).exists()
    with Vault.create(target, case.custodian, T0, origin="tracer.test/fresh") as v:
        assert v.size() == 1 and v.latest_checkpoint().size == 1


def test_failed_create_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    custodian = Identity.from_seed("custodian", b"custodian")

    def boom(self: Batch) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(Batch, "flush", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        Vault.create(tmp_path / "v", custodian, T0)
    assert list((tmp_path / "v").iterdir()) == []
    monkeypatch.undo()
    with Vault.create(tmp_path / "v", custodian, T0) as v:
        assert v.size() == 1


# -- checkpoints -----------------------------------------------------------------------------


def _check_latest(case: Case) -> None:
    v = case.vault
    cp_row = v.latest_checkpoint()
    assert cp_row.size == v.size()
    text, _names = open_note(cp_row.note, _all_keys(case))
    cp = Checkpoint.parse(text)
    assert (cp.origin, cp.size, cp.root) == (v.origin, v.size(), v.root())


def test_checkpoint_after_every_batch(case: Case) -> None:
    counts = [len(case.vault.checkpoints())]
    _check_latest(case)
    _ingest_secret(case)
    counts.append(len(case.vault.checkpoints()))
    _check_latest(case)
    other = Identity.from_seed("p2", b"p2")
    admin.add_producer_key(case.vault, case.custodian, other.public, T0)
    counts.append(len(case.vault.checkpoints()))
    _check_latest(case)
    admin.record_access(case.vault, case.investigators["ines"], "look", "", T0)
    counts.append(len(case.vault.checkpoints()))
    _check_latest(case)
    digest = sha256_hex(SECRET.encode())
    admin.purge(case.vault, case.custodian, digest, "p", "r", "a", T0)
    counts.append(len(case.vault.checkpoints()))
    _check_latest(case)
    assert counts == list(range(counts[0], counts[0] + 5))
    # each checkpoint's size is where the log stood after its batch, and every older
    # checkpoint is consistent with the newest
    rows = case.vault.checkpoints()
    assert [r.size for r in rows] == sorted(r.size for r in rows)
    newest = case.vault.latest_checkpoint().size
    for r in rows:
        text, _ = open_note(r.note, _all_keys(case))
        old = Checkpoint.parse(text)
        proof = case.vault.consistency_proof(old.size, newest)
        merkle.verify_consistency(old.size, newest, old.root, case.vault.root(), proof)


def _all_keys(case: Case) -> dict[str, bytes]:
    keys = {case.custodian.name: case.custodian.public.ed25519}
    keys.update({n: i.public.ed25519 for n, i in case.investigators.items()})
    return keys


def test_empty_batch_writes_no_checkpoint(case: Case) -> None:
    before = case.vault.checkpoints()
    with case.vault.batch(case.custodian):
        pass
    assert case.vault.checkpoints() == before


def test_failed_batch_appends_nothing(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    size, cps = case.vault.size(), case.vault.checkpoints()

    def boom(self: Checkpoint, identity: Identity, name: str) -> str:
        raise RuntimeError("signer unplugged")

    monkeypatch.setattr(Checkpoint, "sign_as", boom)
    with pytest.raises(RuntimeError):
        _ingest_secret(case)
    monkeypatch.undo()
    assert (case.vault.size(), case.vault.checkpoints()) == (size, cps)
    assert case.vault.query("SELECT count(*) FROM v_answers") == [(0,)]
    assert case.vault.query("SELECT count(*) FROM blobs") == [(0,)]
    _ingest_secret(case)  # and the vault still works afterwards
    assert case.vault.latest_checkpoint().size == case.vault.size()


# -- purge -------------------------------------------------------------------------------------


def test_purge_appends_tombstone_and_deletes_blob(case: Case) -> None:
    _ingest_secret(case)
    digest = sha256_hex(SECRET.encode())
    assert case.vault.blobs.rows(digest)
    size = case.vault.size()
    seq = admin.purge(case.vault, case.custodian, digest, "retention-90d", "expired", "dpo", T0)
    assert seq == size and case.vault.size() == size + 1
    assert case.vault.entry(seq).kind == "tombstone"
    assert case.vault.blobs.rows(digest) == []
    assert DataKeys(case.vault, case.custodian).decrypt(digest) is None
    assert case.vault.query("SELECT digest, policy, reason, authorizer FROM v_tombstones") == [
        (digest, "retention-90d", "expired", "dpo")
    ]
    assert case.vault.latest_checkpoint().size == size + 1
    report = verify(case.vault)
    assert report.ok, [f.to_json() for f in report.findings]
    assert report.counts.get("purged", 0) >= 1 and report.counts.get("missing", 0) == 0


def test_purge_is_one_transaction(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    _ingest_secret(case)
    digest = sha256_hex(SECRET.encode())
    size, cps, blobs = case.vault.size(), case.vault.checkpoints(), case.vault.blobs.rows(digest)

    def boom(self: Batch, digest: str) -> None:
        raise RuntimeError("injected failure between tombstone and delete")

    monkeypatch.setattr(Batch, "delete_blobs", boom)
    with pytest.raises(RuntimeError, match="injected"):
        admin.purge(case.vault, case.custodian, digest, "p", "r", "a", T0)
    assert (case.vault.size(), case.vault.checkpoints()) == (size, cps)
    assert case.vault.blobs.rows(digest) == blobs
    assert case.vault.query("SELECT count(*) FROM v_tombstones") == [(0,)]
    monkeypatch.undo()

    # a failure after the delete (while signing the checkpoint) restores the blob too
    def late(self: Checkpoint, identity: Identity, name: str) -> str:
        raise RuntimeError("late failure")

    monkeypatch.setattr(Checkpoint, "sign_as", late)
    with pytest.raises(RuntimeError, match="late"):
        admin.purge(case.vault, case.custodian, digest, "p", "r", "a", T0)
    monkeypatch.undo()
    assert case.vault.blobs.rows(digest) == blobs and case.vault.size() == size
    case.reopen()
    assert case.vault.blobs.rows(digest) == blobs and case.vault.size() == size
    admin.purge(case.vault, case.custodian, digest, "p", "r", "a", T0)
    assert case.vault.blobs.rows(digest) == [] and case.vault.size() == size + 1


def test_purge_refusals(case: Case) -> None:
    _ingest_secret(case)
    digest = sha256_hex(SECRET.encode())
    size = case.vault.size()
    with pytest.raises(VaultError, match="not referenced"):
        admin.purge(case.vault, case.custodian, "0" * 64, "p", "r", "a", T0)
    with pytest.raises(AccessDeniedError, match="not this vault's custodian"):
        admin.purge(case.vault, case.producer, digest, "p", "r", "a", T0)
    assert case.vault.size() == size
    admin.purge(case.vault, case.custodian, digest, "p", "r", "a", T0)
    with pytest.raises(VaultError, match="already purged"):
        admin.purge(case.vault, case.custodian, digest, "p", "r", "a", T0)
    assert case.vault.size() == size + 1


# -- encryption at rest ------------------------------------------------------------------------


def _vault_bytes(path: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(path.iterdir()) if f.is_file()}


def test_known_sentence_never_reaches_disk_in_plaintext(case: Case) -> None:
    _ingest_secret(case)
    needles = [SECRET.encode("utf-8"), SECRET.encode("utf-16-le"), b"purple kangaroo"]
    while_open = _vault_bytes(case.path)
    case.vault.close()
    after_close = _vault_bytes(case.path)
    for files in (while_open, after_close):
        assert DB_FILE in files
        for name, data in files.items():
            for needle in needles:
                assert needle not in data, f"{needle!r} found in {name}"
    # control: the scan does find text that is stored in the clear (a revision title)
    assert any(TITLE.encode() in data for data in while_open.values())
    assert TITLE.encode() in after_close[DB_FILE]
    case.vault = Vault.open(case.path)


def test_data_keys_without_a_wrap_yield_no_plaintext(case: Case) -> None:
    contents = _ingest_secret(case)
    stranger = Identity.from_seed("stranger", b"stranger")
    keys = DataKeys(case.vault, stranger)
    assert keys.keys == {} and keys.collections == set()
    for digest in contents:
        assert case.vault.blobs.rows(digest)
        assert keys.decrypt(digest) is None
    # an investigator scoped to another collection cannot read it either
    other = case.grant("olga", ["hr"])
    assert all(DataKeys(case.vault, other).decrypt(d) is None for d in contents)
    # while the custodian and a '*' investigator can
    for who in (case.custodian, case.investigators["ines"]):
        keys = DataKeys(case.vault, who)
        for digest, text in contents.items():
            got = keys.decrypt(digest)
            assert got is not None and got[1] == text.encode()


def test_tampered_ciphertext_is_an_error_not_out_of_scope(case: Case) -> None:
    contents = _ingest_secret(case)
    digest = next(iter(contents))
    ct = case.vault.blobs.rows(digest)[0][3]
    case.vault.con.execute("UPDATE blobs SET ct = ? WHERE digest = ?", [bytes([ct[0] ^ 1]) + ct[1:], digest])
    with pytest.raises(StoreError):
        DataKeys(case.vault, case.custodian).decrypt(digest)


def test_checkpoint_note_verifies_with_custodian_key(case: Case) -> None:
    note = case.vault.latest_checkpoint().note
    cp = verify_checkpoint(note, case.custodian.name, case.custodian.public.ed25519, origin=case.vault.origin)
    assert cp.size == case.vault.size()


def test_create_where_a_file_is_in_the_way(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(VaultError, match="cannot create the vault directory"):
        Vault.create(blocker, Identity.from_seed("custodian", b"c"), T0)


def test_a_view_table_added_by_a_later_version_is_derived_on_open(case: Case) -> None:
    """Views come from the log: a vault made before a view existed gets it, filled, on a
    writable open; a read-only open says how to add it; a missing raw table is damage."""
    from store.errors import VaultDamagedError
    from store.schema import VIEW_COLUMNS
    from store.vaultfile import BASE_VIEWS as _BASE_VIEWS

    _ingest_secret(case)
    newer = "v_citations"
    assert newer not in _BASE_VIEWS
    expected = case.vault.query(f"SELECT * FROM {newer} ORDER BY ALL")  # noqa: S608
    assert expected
    case.vault.con.execute(f"DROP TABLE {newer}")
    case.vault.close()
    with pytest.raises(VaultError, match="write access"):
        Vault.open(case.path, read_only=True)
    case.vault = Vault.open(case.path)
    assert case.vault.query(f"SELECT * FROM {newer} ORDER BY ALL") == expected  # noqa: S608
    case.vault.con.execute("DROP TABLE v_answers")
    case.vault.close()
    with pytest.raises(VaultDamagedError, match="'v_answers' is missing"):
        Vault.open(case.path)
    case.vault = Vault.create(case.path.parent / "another", case.custodian, T0)
    assert set(VIEW_COLUMNS) <= {
        r[0] for r in case.vault.query("SELECT table_name FROM information_schema.tables")
    }
