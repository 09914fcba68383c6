"""The Northstar sample vault: deterministic, and holding the facts its README promises.

These checks read the vault through the store API only (no engine verdicts): the
currency states per answer are asserted by the engine's own tests against
`sample_vault.expected`.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sample_vault import expected
from sample_vault.build import BuildInfo, build, main
from store.crypto import Identity, load_identity, load_public, sha256_hex
from store.keyring import DataKeys
from store.roster import investigators, producer_keys
from store.vault import Vault
from tracer.engine.textnorm import CHUNKER_VERSION, NORMALIZER_VERSION, normalize

SUPPORT = "northstar-support-assistant"
OPS = "northstar-ops-copilot"


@pytest.fixture(scope="module")
def built(sample_build: BuildInfo) -> BuildInfo:
    """The session's sample build (tests/conftest.py), built by the same `build` as here:
    this module only reads it (read-only, never copied into), and builds again itself
    where a second build is the point."""
    return sample_build


@pytest.fixture(scope="module")
def vault(built: BuildInfo) -> Iterator[Vault]:
    v = Vault.open(built.vault_dir, read_only=True)
    yield v
    v.close()


def _key(built: BuildInfo, name: str, passphrase: str) -> Identity:
    return load_identity(built.keys_dir / f"{name}.key", passphrase.encode())


@pytest.fixture(scope="module")
def ines(built: BuildInfo) -> Identity:
    return _key(built, "ines", "ines-demo")


@pytest.fixture(scope="module")
def texts(vault: Vault, ines: Identity) -> DataKeys:
    return DataKeys(vault, ines)


def _text(keys: DataKeys, digest: str) -> str:
    found = keys.decrypt(digest)
    assert found is not None, digest
    return found[1].decode("utf-8")


# -- determinism and cost ------------------------------------------------------------------


@dataclass(frozen=True)
class Rebuilt:
    """What `python -m sample_vault.build` did over a copy of the session's build: the
    refusal without --force, then the rebuild with it (its BuildInfo kept by a spy that
    calls the real `build`), so the determinism check costs one build, not two."""

    out: Path
    refused: bool
    kept: bool
    info: BuildInfo


@pytest.fixture(scope="module")
def rebuilt(built: BuildInfo, tmp_path_factory: pytest.TempPathFactory) -> Rebuilt:
    import sample_vault.build as module

    out = tmp_path_factory.mktemp("cli") / "cli"
    shutil.copytree(built.out_dir, out)
    before = (out / "vault.duckdb").read_bytes()
    try:
        main(["--out", str(out)])
        refused = False
    except SystemExit:
        refused = True
    kept = (out / "vault.duckdb").read_bytes() == before
    infos: list[BuildInfo] = []

    def spy(*args: Any, **kwargs: Any) -> BuildInfo:
        infos.append(build(*args, **kwargs))
        return infos[-1]

    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(io.StringIO()):
        mp.setattr(module, "build", spy)
        assert main(["--out", str(out), "--force"]) == 0
    (info,) = infos
    return Rebuilt(out, refused, kept, info)


def test_two_builds_have_the_same_log_and_checkpoint_root(
    built: BuildInfo, vault: Vault, rebuilt: Rebuilt
) -> None:
    again = rebuilt.info
    assert again.vault_dir != built.vault_dir
    assert again.root_hex == built.root_hex
    assert again.log_size == built.log_size
    assert again.checkpoint_note == built.checkpoint_note
    with Vault.open(again.vault_dir, read_only=True) as other:
        assert other.root() == vault.root()
        assert other.size() == vault.size()
        assert other.leaf_hashes() == vault.leaf_hashes()
        assert [c.note for c in other.checkpoints()] == [c.note for c in vault.checkpoints()]
    assert again.answer_states == built.answer_states


def test_vault_root_matches_the_latest_checkpoint(built: BuildInfo, vault: Vault) -> None:
    cp = vault.latest_checkpoint()
    assert cp.size == vault.size() == built.log_size
    assert vault.root().hex() == built.root_hex


def test_cli_refuses_to_overwrite_without_force(built: BuildInfo, rebuilt: Rebuilt) -> None:
    """A vault already there (a copy of the session's build: the refusal looks only at the
    file) is kept without --force and rebuilt, the same vault, with it."""
    assert rebuilt.refused and rebuilt.kept
    with Vault.open(rebuilt.out, read_only=True) as again:
        assert again.root().hex() == built.root_hex


# -- counts, producers and keys -------------------------------------------------------------


def test_a_few_hundred_manifests_from_two_producers(built: BuildInfo, vault: Vault) -> None:
    (n,) = vault.query("SELECT count(*) FROM v_answers")[0]
    assert n == built.manifests >= expected.MIN_MANIFESTS
    systems = dict(vault.query("SELECT producer_system, count(*) FROM v_answers GROUP BY 1"))
    assert set(systems) == {SUPPORT, OPS}
    assert min(systems.values()) >= 50
    months = {r[0][:7] for r in vault.query("SELECT generated_at FROM v_answers")}
    assert {f"2026-{m:02d}" for m in range(1, 11)} <= months


def test_no_manifest_was_recorded_with_faults(vault: Vault) -> None:
    assert vault.query("SELECT answer_id, faults FROM v_answers WHERE faults <> '[]'") == []


def test_producer_key_rotation_and_revocation(built: BuildInfo, vault: Vault) -> None:
    keys = {k.name: k for k in producer_keys(vault).values()}
    assert set(keys) == set(expected.PRODUCER_KEYS)
    for name, want in expected.PRODUCER_KEYS.items():
        k = keys[name]
        assert (k.valid_from, k.valid_until, k.revoked_at) == (
            want["valid_from"],
            want["valid_until"],
            want["revoked_at"],
        )
        assert load_public(built.keys_dir / f"{name}.pub").ed25519 == k.ed25519
        _key(built, name, expected.PRODUCER_KEY_PASSPHRASE)
    rotation = str(expected.PRODUCER_KEYS["support-assistant-2026b"]["valid_from"])
    rows = vault.query("SELECT producer_system, generated_at, signer FROM v_answers")
    signed_by = {k.key_id: k.name for k in keys.values()}
    for system, at, signer in rows:
        name = signed_by[signer]
        if system == OPS:
            assert name == "ops-copilot-2026"
            assert at < str(keys[name].revoked_at)  # signed before revocation: still valid
        else:
            assert name == ("support-assistant-2026a" if at < rotation else "support-assistant-2026b")
    used = {signed_by[r[2]] for r in rows}
    assert used == set(expected.PRODUCER_KEYS)


def test_investigators_granted_and_rachel_revoked(built: BuildInfo, vault: Vault) -> None:
    roster = {i.name: i for i in investigators(vault).values()}
    assert set(roster) == set(expected.INVESTIGATORS)
    for name, want in expected.INVESTIGATORS.items():
        assert sorted(roster[name].scopes) == sorted(want["scopes"])
        assert (roster[name].revoked_at is not None) == want["revoked"]
        _key(built, name, str(want["passphrase"]))
    assert roster["rachel"].revoked_at == expected.RACHEL_REVOKED_AT
    _key(built, "custodian", expected.CUSTODIAN["passphrase"])


def test_scopes_and_revocation_seal_text(built: BuildInfo, vault: Vault) -> None:
    omar = DataKeys(vault, _key(built, "omar", "omar-demo"))
    assert omar.collections == {"support", "ops", "hr"}
    rachel = DataKeys(vault, _key(built, "rachel", "rachel-demo"))
    rows = vault.query(
        "SELECT generated_at, answer_sha256 FROM v_answers WHERE collection = 'support' ORDER BY seq"
    )
    early, late = rows[0][1], rows[-1][1]
    assert rows[-1][0] >= "2026-10-28"  # delivered late, after rachel was revoked
    assert rachel.decrypt(early) is not None
    assert rachel.decrypt(late) is None


# -- the never-substitute facts: tombstones, deletions, missing imports ---------------------


def test_tombstones_for_the_travel_allowance(vault: Vault, texts: DataKeys) -> None:
    rows = vault.query("SELECT digest, policy, authorizer, effective_at FROM v_tombstones")
    assert [(r[0], r[1], r[3]) for r in rows] == [
        (t["digest"], t["policy"], t["effective_at"]) for t in expected.TOMBSTONES
    ]
    for t in expected.TOMBSTONES:
        rev = vault.query(
            "SELECT content_sha256 FROM v_revisions WHERE document_id = ? AND revision = ?",
            [t["document_id"], t["revision"]],
        )
        assert rev == [(t["digest"],)]
        assert vault.blobs.rows(str(t["digest"])) == []
    # the passages retrieved from the purged revisions are retained and still verify
    passages = vault.query("SELECT retrieved_sha256 FROM v_passages WHERE document_id = 'travel-allowance'")
    assert len(passages) >= 3
    for (digest,) in passages:
        assert sha256_hex(_text(texts, digest).encode("utf-8")) == digest


def test_returns_policy_history_and_deletion(vault: Vault, texts: DataKeys) -> None:
    deleted = vault.query("SELECT document_id, deleted_at FROM v_deletions")
    assert deleted == list(expected.DELETED_DOCUMENTS.items())
    revs = vault.query(
        "SELECT revision, content_sha256 FROM v_revisions WHERE document_id = 'returns-policy' "
        "ORDER BY committed_at"
    )
    assert [r[0] for r in revs] == ["r1", "r2", "r3", "r4", "r5"]
    a, ws, b, c, d = (normalize(_text(texts, r[1])) for r in revs)
    sentence = "Customers may request a refund within {} days of delivery."
    assert ws == a and _text(texts, revs[0][1]) != _text(texts, revs[1][1])
    assert a.count(sentence.format("thirty")) == 1 and "## Introduction" not in a
    assert "## Introduction" in b and b.count(sentence.format("thirty")) == 1
    assert c.count(sentence.format("fourteen")) == 1 and "thirty days of delivery" not in c
    assert d.count(sentence.format("fourteen")) == 2 and "## Appendix" in d


def test_never_imported_documents_are_cited_but_absent(vault: Vault) -> None:
    for doc in expected.NEVER_IMPORTED:
        assert vault.query("SELECT 1 FROM v_revisions WHERE document_id = ?", [doc]) == []
        assert vault.query("SELECT count(*) FROM v_passages WHERE document_id = ?", [doc])[0][0]


# -- the tampered record ----------------------------------------------------------------------


def test_exactly_one_blob_differs_from_its_digest(vault: Vault, texts: DataKeys) -> None:
    tombstoned = {r[0] for r in vault.query("SELECT digest FROM v_tombstones")}
    digests = [r[0] for r in vault.query("SELECT DISTINCT digest FROM v_digests ORDER BY 1")]
    bad = []
    for digest in digests:
        if digest in tombstoned:
            continue
        if sha256_hex(_text(texts, digest).encode("utf-8")) != digest:
            bad.append(digest)
    assert bad == [expected.TAMPERED["digest"]]


def test_tampered_record_is_the_documented_one(built: BuildInfo, vault: Vault, texts: DataKeys) -> None:
    t = expected.TAMPERED
    assert built.tampered == {k: t[k] for k in ("answer_id", "passage_id", "digest", "collection")}
    row = vault.query(
        "SELECT retrieved_sha256, model_input_sha256, collection FROM v_passages "
        "WHERE answer_id = ? AND passage_id = ?",
        [t["answer_id"], t["passage_id"]],
    )
    assert len(row) == 1
    retrieved, model_input, collection = row[0]
    assert retrieved == t["digest"] and collection == t["collection"]
    forged = _text(texts, retrieved)  # decrypts: the AEAD was redone under the same key
    assert t["replacement"] in forged and t["original"] not in forged
    assert sha256_hex(forged.encode("utf-8")) != retrieved
    kept = _text(texts, model_input)  # the model-input copy was left alone
    assert sha256_hex(kept.encode("utf-8")) == model_input and t["original"] in kept


# -- passages are real chunks of the revisions they cite --------------------------------------


def test_passages_are_chunks_of_their_cited_revisions(vault: Vault, texts: DataKeys) -> None:
    revisions = {
        (d, r): digest
        for d, r, digest in vault.query("SELECT document_id, revision, content_sha256 FROM v_revisions")
    }
    tombstoned = {r[0] for r in vault.query("SELECT digest FROM v_tombstones")}
    normalized: dict[str, str] = {}
    rows = vault.query(
        "SELECT answer_id, passage_id, document_id, doc_revision, heading_path, char_start, "
        "char_end, retrieved_sha256, chunker_version, normalizer_version, derived_from "
        "FROM v_passages"
    )
    checked = 0
    for aid, pid, doc, rev, path, start, end, digest, chunker, norm, derived in rows:
        if derived is not None:
            continue
        assert (chunker, norm) == (CHUNKER_VERSION, NORMALIZER_VERSION)
        content = revisions.get((doc, rev))
        if content is None or content in tombstoned or digest == expected.TAMPERED["digest"]:
            continue
        if content not in normalized:
            normalized[content] = normalize(_text(texts, content))
        text = normalized[content]
        assert text[start:end] == _text(texts, digest), (aid, pid)
        assert json.loads(path)[0] == text.split("\n", 1)[0].lstrip("# ")
        checked += 1
    assert checked > 500


def test_citations_fit_their_answers(vault: Vault, texts: DataKeys) -> None:
    lengths = {
        aid: len(_text(texts, digest))
        for aid, digest in vault.query("SELECT answer_id, answer_sha256 FROM v_answers")
    }
    rows = vault.query("SELECT answer_id, answer_start, answer_end FROM v_citations")
    assert rows
    for aid, start, end in rows:
        assert 0 <= start < end <= lengths[aid]


# -- the story's answers ----------------------------------------------------------------------


def test_key_answers_exist_and_every_state_occurs(built: BuildInfo, vault: Vault) -> None:
    ids = {r[0] for r in vault.query("SELECT answer_id FROM v_answers")}
    assert set(expected.KEY_ANSWERS.values()) <= ids
    assert set(built.answer_states) == ids
    assert set(built.answer_states.values()) == set(expected.STATES)
    for state, answers in expected.KEY_STATES_ALL_SCOPES.items():
        for aid in answers:
            assert built.answer_states[aid] == state
    for aid in expected.KEY_UNAVAILABLE_WITHOUT_LEGAL:
        assert built.answer_states_limited[aid] == "unavailable"


def test_memory_note_and_its_citers(vault: Vault) -> None:
    note = expected.NOTE
    kind, coll = vault.query(
        "SELECT answer_kind, collection FROM v_answers WHERE answer_id = ?", [note["answer_id"]]
    )[0]
    assert (kind, coll) == ("note", "legal")
    docs = vault.query(
        "SELECT document_id, collection FROM v_passages WHERE answer_id = ? ORDER BY idx",
        [note["answer_id"]],
    )
    assert docs == [("support-faq", "support"), ("legal-brightwater-draft", "legal")]
    for aid, collection in note["cited_by"]:
        lineage, coll = vault.query("SELECT lineage, collection FROM v_answers WHERE answer_id = ?", [aid])[0]
        assert json.loads(lineage) == [note["answer_id"]] and coll == collection
        derived = vault.query(
            "SELECT collection FROM v_passages WHERE answer_id = ? AND derived_from = ?",
            [aid, note["answer_id"]],
        )
        assert derived == [("legal",)]


def test_dropped_production_exception(vault: Vault, texts: DataKeys) -> None:
    d = expected.DROPPED_EXCEPTION
    answer = _text(
        texts,
        vault.query("SELECT answer_sha256 FROM v_answers WHERE answer_id = ?", [d["answer_id"]])[0][0],
    )
    retrieved = [
        _text(texts, r[0])
        for r in vault.query(
            "SELECT retrieved_sha256 FROM v_passages WHERE answer_id = ? ORDER BY rank",
            [d["answer_id"]],
        )
    ]
    assert retrieved[0] == d["retrieved_sentence"]
    assert "settlement" not in answer and "on-call lead" not in answer
    control = vault.query(
        "SELECT answer_sha256 FROM v_answers WHERE answer_id = ?", [d["control_answer_id"]]
    )[0][0]
    assert d["retrieved_sentence"] in _text(texts, control)


def test_hostile_text_is_stored_verbatim(vault: Vault, texts: DataKeys) -> None:
    for aid, needles in expected.HOSTILE_ANSWERS.items():
        digests = [
            r[0]
            for r in vault.query(
                "SELECT question_sha256 FROM v_answers WHERE answer_id = ? UNION ALL "
                "SELECT answer_sha256 FROM v_answers WHERE answer_id = ? UNION ALL "
                "SELECT retrieved_sha256 FROM v_passages WHERE answer_id = ?",
                [aid, aid, aid],
            )
        ]
        blob = "".join(_text(texts, d) for d in digests)
        for needle in needles:
            assert needle in blob, (aid, needle)
