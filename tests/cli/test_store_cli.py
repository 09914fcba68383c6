"""Store commands through the CLI: outputs (human and --json), exit codes, passphrases."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest

from store import merkle
from store.crypto import load_public
from store.dsse import Envelope, verify_envelope
from store.note import Checkpoint, open_note, verify_checkpoint
from store.vault import Vault
from tests.cli.conftest import ANSWER, PASSPHRASE, World, draft, revision_input

# -- keygen and passphrases -------------------------------------------------------------------


def test_keygen_writes_encrypted_key_and_prints_key_id(world: World) -> None:
    r = world.ok("keygen", "olga", "--out", world.keys)
    pub = load_public(world.pub("olga"))
    assert r.out.splitlines()[0] == f"key id {pub.key_id}"
    key = world.key("olga")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_bytes().count(b"BEGIN ENCRYPTED PRIVATE KEY") == 2


def test_keygen_refuses_to_overwrite(world: World) -> None:
    before = world.key("custodian").read_bytes()
    r = world.run("keygen", "custodian", "--out", world.keys)
    assert r.code == 2 and "already exists; refusing to overwrite" in r.err
    assert world.key("custodian").read_bytes() == before
    world.key("ines").unlink()  # .pub alone is still not overwritten
    r = world.run("keygen", "ines", "--out", world.keys)
    assert r.code == 2 and "ines.pub: already exists" in r.err


@pytest.mark.parametrize(
    "name", ["two words", "a+b", "tab\tname", "../escape", "sub/dir", "", "x" * 65, ".hidden", "é"]
)
def test_keygen_refuses_names_a_signed_note_cannot_carry(world: World, name: str) -> None:
    r = world.run("keygen", name, "--out", world.keys)
    assert r.code == 2, r
    assert "invalid key name" in r.err and "is not 1-64 characters" in r.err
    assert "Traceback" not in r.err
    assert sorted(p.name for p in world.keys.iterdir()) == sorted(
        f"{n}.{e}" for n in ("custodian", "producer", "ines") for e in ("key", "pub")
    )


def test_keygen_name_message_mentions_c2sp(world: World) -> None:
    r = world.run("keygen", "my key", "--out", world.keys)
    assert "C2SP signed-note key names" in r.err


def test_passphrase_file_wins_over_environment(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    pw = world.root / "pw.txt"
    pw.write_text("file-secret\n", encoding="utf-8")
    world.ok("keygen", "filekey", "--out", world.keys, "--passphrase-file", pw)
    # env passphrase is wrong for this key; the file must be used
    r = world.run("sign", pw, "--key", world.key("filekey"), "--passphrase-file", pw)
    assert r.code == 0, r
    r = world.run("sign", pw, "--key", world.key("filekey"))
    assert r.code == 2 and "wrong passphrase" in r.err
    monkeypatch.setenv("TRACER_PASSPHRASE", "file-secret")
    assert world.run("sign", pw, "--key", world.key("filekey")).code == 0


def test_no_passphrase_and_no_terminal_is_a_clear_error(world: World) -> None:
    r = world.spawn("keygen", "olga", "--out", world.keys, unset=("TRACER_PASSPHRASE",))
    assert r.code == 2 and "use --passphrase-file or TRACER_PASSPHRASE" in r.err
    assert "no terminal to prompt on" in r.err and "Traceback" not in r.err
    r = world.spawn("keygen", "olga", "--out", world.keys, env={"TRACER_PASSPHRASE": ""})
    assert r.code == 2 and "empty passphrase" in r.err


def test_empty_passphrase_file_refused(world: World) -> None:
    empty = world.root / "empty.txt"
    empty.write_text("", encoding="utf-8")
    r = world.run("keygen", "olga", "--out", world.keys, "--passphrase-file", empty)
    assert r.code == 2 and "empty passphrase" in r.err


def test_missing_passphrase_file(world: World) -> None:
    r = world.run("init", world.vault, *world.cust(), "--passphrase-file", world.root / "nope")
    assert r.code == 2 and "cannot read passphrase file" in r.err


# -- init, keys --------------------------------------------------------------------------------


def test_init_creates_vault_with_first_checkpoint(world: World) -> None:
    r = world.ok("init", world.vault, *world.cust(), "--origin", "tracer.test/init")
    assert "created" in r.out and "checkpoint size 1" in r.out
    with Vault.open(world.vault, read_only=True) as v:
        assert v.origin == "tracer.test/init" and v.size() == 1
    again = world.run("init", world.vault, *world.cust())
    assert again.code == 2 and "a vault already exists here" in again.err


def test_init_with_wrong_passphrase(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACER_PASSPHRASE", "wrong")
    r = world.run("init", world.vault, *world.cust())
    assert r.code == 2 and "wrong passphrase or damaged key file" in r.err
    assert not world.vault.exists()


def test_init_with_unsignable_origin_leaves_nothing(world: World) -> None:
    r = world.run("init", world.vault, *world.cust(), "--origin", "bad\norigin")
    assert r.code == 2 and "cannot sign checkpoints" in r.err
    assert not (world.vault / "vault.duckdb").exists()
    world.ok("init", world.vault, *world.cust())


def test_keys_add_list_revoke(world: World) -> None:
    w = world
    w.ok("init", w.vault, *w.cust())
    producer = load_public(w.pub("producer")).key_id
    r = w.ok(
        "keys",
        "add",
        w.vault,
        w.pub("producer"),
        "--role",
        "producer",
        "--valid-from",
        "2026-01-01T02:00:00+02:00",
        "--valid-until",
        "2027-01-01T00:00:00Z",
        *w.cust(),
    )
    assert f"added producer key {producer} (producer) at log entry 1" in r.out
    listed = w.ok("keys", "list", w.vault, "--json").json()
    assert listed == {
        "keys": [
            {
                "key_id": producer,
                "name": "producer",
                "valid_from": "2026-01-01T00:00:00Z",  # normalized to UTC
                "valid_until": "2027-01-01T00:00:00Z",
                "revoked_at": None,
                "added_seq": 1,
            }
        ]
    }
    human = w.ok("keys", "list", w.vault).out
    assert producer[:16] in human and "active" in human
    dup = w.run("keys", "add", w.vault, w.pub("producer"), *w.cust())
    assert dup.code == 2 and "already in the keyring" in dup.err
    r = w.ok("keys", "revoke", w.vault, producer[:12], "--reason", "rotated", *w.cust())
    assert "revoked producer key" in r.out
    listed = w.ok("keys", "list", w.vault, "--json").json()
    assert listed["keys"][0]["revoked_at"] == "2026-06-01T00:00:00Z"
    assert "revoked 2026-06-01T00:00:00Z" in w.ok("keys", "list", w.vault).out
    again = w.run("keys", "revoke", w.vault, producer, *w.cust())
    assert again.code == 2 and "already revoked" in again.err
    short = w.run("keys", "revoke", w.vault, "abc", *w.cust())
    assert short.code == 2 and "no single producer key" in short.err


@pytest.mark.parametrize("bad", ["yesterday", "2026-01-01T00:00:00"])
def test_keys_add_refuses_bad_times(world: World, bad: str) -> None:
    world.ok("init", world.vault, *world.cust())
    r = world.run("keys", "add", world.vault, world.pub("producer"), "--valid-from", bad, *world.cust())
    assert r.code == 2 and "--valid-from" in r.err


def test_keys_add_by_non_custodian(world: World) -> None:
    world.ok("init", world.vault, *world.cust())
    r = world.run("keys", "add", world.vault, world.pub("producer"), "--custodian-key", world.key("ines"))
    assert r.code == 2 and "not this vault's custodian" in r.err


# -- sign and pack -----------------------------------------------------------------------------


def test_sign_wraps_exact_bytes(world: World) -> None:
    data = b'{"b": 1,  "a": [1, 2]}\n'
    f = world.root / "payload.json"
    f.write_bytes(data)
    out = world.root / "env.json"
    world.ok("sign", f, "--key", world.key("producer"), "--out", out, "--payload-type", "text/x-test")
    env = Envelope.from_json(json.loads(out.read_text()), str(out))
    assert env.payload == data and env.payload_type == "text/x-test"
    pub = load_public(world.pub("producer"))
    assert verify_envelope(env, {pub.key_id: pub.ed25519}) == pub.key_id
    # to stdout without --out
    stdout = world.ok("sign", f, "--key", world.key("producer")).json()
    assert base64.b64decode(stdout["payload"]) == data


def test_sign_and_pack_missing_file_is_exit_2_without_traceback(world: World) -> None:
    for cmd in ("sign", "pack"):
        r = world.run(cmd, world.root / "missing.json", "--key", world.key("producer"))
        assert r.code == 2 and "cannot read file" in r.err and "Traceback" not in r.err


def test_pack_builds_ingestible_input(world: World) -> None:
    d = world.write("draft.json", draft())
    r = world.ok("pack", d, "--key", world.key("producer"))
    inp = r.json()
    assert set(inp) == {"envelope", "contents"}
    payload = json.loads(base64.b64decode(inp["envelope"]["payload"]))
    assert "answer" not in payload and payload["answer_sha256"] in inp["contents"]
    assert inp["contents"][payload["answer_sha256"]] == ANSWER
    bad = world.write("bad.json", ["not", "an", "object"])
    r = world.run("pack", bad, "--key", world.key("producer"))
    assert r.code == 2 and "expected a JSON object" in r.err
    dup = world.root / "inputs" / "dup.json"
    dup.write_text('{"a": 1, "a": 2}', encoding="utf-8")
    r = world.run("pack", dup, "--key", world.key("producer"))
    assert r.code == 2 and "$.a" in r.err and "duplicate key" in r.err


# -- ingest ------------------------------------------------------------------------------------


def test_ingest_human_and_json(vault_world: World) -> None:
    w = vault_world
    packed = w.root / "inputs" / "ans-2.json"
    w.ok("pack", w.write("d2.json", draft("ans-2")), "--key", w.key("producer"), "--out", packed)
    r = w.run("ingest", w.vault, packed, *w.cust(), "--json")
    assert r.code == 0
    report = r.json()
    assert report["ok"] is True and report["appended"] is True
    assert report["rejected"] == [] and report["faults"] == []
    (acc,) = report["accepted"]
    assert acc == {"file": str(packed), "kind": "manifest", "ident": "ans-2", "seq": acc["seq"]}
    assert report["checkpoint_size"] == acc["seq"] + 1
    packed3 = w.root / "inputs" / "ans-3.json"
    w.ok("pack", w.write("d3.json", draft("ans-3")), "--key", w.key("producer"), "--out", packed3)
    human = w.ok("ingest", w.vault, packed3, *w.cust()).out
    assert human.strip() == f"appended 1 file(s); checkpoint size {report['checkpoint_size'] + 1}"


def test_ingest_rejections_exit_1_and_list_every_file(vault_world: World) -> None:
    w = vault_world
    with Vault.open(w.vault, read_only=True) as v:
        size, note = v.size(), v.latest_checkpoint().note
    good = w.root / "inputs" / "good.json"
    w.ok("pack", w.write("dg.json", draft("ans-good")), "--key", w.key("producer"), "--out", good)
    not_json = w.root / "inputs" / "not.json"
    not_json.write_text("{nope", encoding="utf-8")
    unknown = w.root / "inputs" / "unknown.json"
    w.ok("pack", w.write("du.json", draft("ans-x")), "--key", w.key("ines"), "--out", unknown)
    r = w.run("ingest", w.vault, good, not_json, unknown, *w.cust())
    assert r.code == 1
    lines = r.out.splitlines()
    assert [ln.split(":")[0] for ln in lines if ln.startswith("REJECTED")] == [
        f"REJECTED {not_json}",
        f"REJECTED {unknown}",
    ]
    assert "no signature by a known key" in r.out
    assert lines[-1] == "nothing appended (all-or-nothing: fix or --skip-invalid)"
    with Vault.open(w.vault, read_only=True) as v:
        assert (v.size(), v.latest_checkpoint().note) == (size, note)
    js = w.run("ingest", w.vault, good, not_json, unknown, *w.cust(), "--json")
    assert js.code == 1
    rep = js.json()
    assert rep["ok"] is False and rep["appended"] is False and rep["checkpoint_size"] is None
    assert [(x["file"], x["path"]) for x in rep["rejected"]] == [
        (str(not_json), "$"),
        (str(unknown), "$.envelope.signatures"),
    ]
    skip = w.run("ingest", w.vault, good, not_json, unknown, *w.cust(), "--skip-invalid", "--json")
    assert skip.code == 1
    rep = skip.json()
    assert rep["appended"] is True and len(rep["rejected"]) == 2
    assert rep["checkpoint_size"] == size + 1


def test_ingest_faults_are_reported_and_exit_0(vault_world: World) -> None:
    w = vault_world
    packed = w.root / "inputs" / "faulty.json"
    w.ok(
        "pack",
        w.write("df.json", draft("ans-faulty", citations=[(0, 5, ["ghost"])])),
        "--key",
        w.key("producer"),
        "--out",
        packed,
    )
    r = w.run("ingest", w.vault, packed, *w.cust())
    assert r.code == 0
    assert "FAULT" in r.out and "answer ans-faulty: $.citations[0].passage_ids[0]: unknown_passage" in r.out
    rep = w.run("ingest", w.vault, packed, *w.cust(), "--json")
    assert rep.code == 1  # now a duplicate answer id


def test_ingest_needs_the_custodian(vault_world: World) -> None:
    w = vault_world
    r = w.run("ingest", w.vault, w.root / "inputs" / "ans-1.json", "--custodian-key", w.key("nobody"))
    assert r.code == 2 and "cannot read key file" in r.err


# -- purge -------------------------------------------------------------------------------------


def test_purge(vault_world: World) -> None:
    w = vault_world
    inp = json.loads((w.root / "inputs" / "ans-1.json").read_text())
    payload = json.loads(base64.b64decode(inp["envelope"]["payload"]))
    digest = payload["answer_sha256"]
    r = w.ok("purge", w.vault, digest, "--policy", "retention-90d", "--reason", "expired", *w.cust())
    with Vault.open(w.vault, read_only=True) as v:
        seq = v.size() - 1
        assert v.entry(seq).kind == "tombstone" and v.blobs.rows(digest) == []
        assert v.query("SELECT authorizer, effective_at FROM v_tombstones") == [
            ("custodian", "2026-06-01T00:00:00Z")
        ]
    assert r.out.strip() == f"purged {digest}; tombstone at log entry {seq}"
    again = w.run("purge", w.vault, digest, "--policy", "p", "--reason", "r", *w.cust())
    assert again.code == 2 and "already purged" in again.err
    unknown = w.run("purge", w.vault, "f" * 64, "--policy", "p", "--reason", "r", *w.cust())
    assert unknown.code == 2 and "not referenced by any log entry" in unknown.err
    bad_time = w.run(
        "purge", w.vault, "f" * 64, "--policy", "p", "--reason", "r", "--effective-at", "soon", *w.cust()
    )
    assert bad_time.code == 2 and "--effective-at" in bad_time.err


# -- checkpoint, log, proof ---------------------------------------------------------------------


def test_checkpoint_prints_the_exact_note(vault_world: World) -> None:
    w = vault_world
    r = w.ok("checkpoint", w.vault)
    with Vault.open(w.vault, read_only=True) as v:
        assert r.out == v.latest_checkpoint().note
        size, root, origin = v.size(), v.root(), v.origin
    cust = load_public(w.pub("custodian"))
    cp = verify_checkpoint(r.out, cust.name, cust.ed25519, origin=origin)
    assert (cp.size, cp.root) == (size, root)
    assert r.out.splitlines()[:2] == ["tracer.test/cli", str(size)]
    assert r.out.splitlines()[-1].startswith("\u2014 custodian ")


def _latest(w: World) -> Checkpoint:
    cust = load_public(w.pub("custodian"))
    ines = load_public(w.pub("ines"))
    text, _ = open_note(w.ok("checkpoint", w.vault).out, {"custodian": cust.ed25519, "ines": ines.ed25519})
    return Checkpoint.parse(text)


def test_log_json_verifies_against_the_checkpoint(vault_world: World) -> None:
    w = vault_world
    cp = _latest(w)
    entries = w.ok("log", w.vault, "--json").json()["entries"]
    assert [e["seq"] for e in entries] == list(range(cp.size))
    leaves = []
    for e in entries:
        assert set(e) == {"seq", "kind", "leaf_hash", "entry"}
        data = base64.b64decode(e["entry"], validate=True)
        body = json.loads(data)
        assert body["seq"] == e["seq"] and body["kind"] == e["kind"]
        assert merkle.leaf_hash(data).hex() == e["leaf_hash"]
        leaves.append(bytes.fromhex(e["leaf_hash"]))
    assert merkle.root(leaves) == cp.root
    assert [e["kind"] for e in entries] == [
        "vault_init",
        "key_add",
        "investigator_grant",
        "revision",
        "manifest",
    ]
    page = w.ok("log", w.vault, "--json", "--start", "2", "--limit", "2").json()["entries"]
    assert [e["seq"] for e in page] == [2, 3]
    human = w.ok("log", w.vault).out.splitlines()
    assert len(human) == cp.size and human[0].split() == ["0", "vault_init", entries[0]["leaf_hash"]]
    assert w.run("log", w.vault, "--start", "-1").code == 2


def test_proof_json_inclusion_and_consistency_verify(vault_world: World) -> None:
    w = vault_world
    cp = _latest(w)
    entries = w.ok("log", w.vault, "--json").json()["entries"]
    for e in entries:
        p = w.ok("proof", w.vault, str(e["seq"]), "--json").json()
        assert set(p) == {"seq", "size", "leaf_hash", "root", "proof"}
        assert p["size"] == cp.size and p["root"] == cp.root.hex() and p["leaf_hash"] == e["leaf_hash"]
        merkle.verify_inclusion(
            e["seq"], cp.size, bytes.fromhex(p["leaf_hash"]), [bytes.fromhex(h) for h in p["proof"]], cp.root
        )
    p = w.ok("proof", w.vault, "1", "--size", "3", "--json").json()
    merkle.verify_inclusion(
        1, 3, bytes.fromhex(p["leaf_hash"]), [bytes.fromhex(h) for h in p["proof"]], bytes.fromhex(p["root"])
    )
    with Vault.open(w.vault, read_only=True) as v:
        checkpoints = v.checkpoints()
    for old in {c.size for c in checkpoints}:
        c = w.ok("proof", w.vault, "--consistency", str(old), str(cp.size), "--json").json()
        assert set(c) == {"old_size", "new_size", "old_root", "new_root", "proof"}
        assert c["new_root"] == cp.root.hex()
        merkle.verify_consistency(
            old, cp.size, bytes.fromhex(c["old_root"]), cp.root, [bytes.fromhex(h) for h in c["proof"]]
        )
    human = w.ok("proof", w.vault, "0").out
    assert human.startswith("seq: 0\nsize: ")


PROOF_REFUSALS = [
    ["99"],
    ["-1"],
    ["0", "--size", "0"],
    ["3", "--size", "2"],
    [],
    ["--consistency", "0", "2"],
    ["--consistency", "3", "2"],
    ["--consistency", "1", "99"],
]


def test_proof_refusals_are_exit_2(vault_world: World) -> None:
    for args in PROOF_REFUSALS:
        r = vault_world.run("proof", vault_world.vault, *args, "--json")
        assert r.code == 2 and r.out == "" and "tracer: error:" in r.err, (args, r)


# -- exit codes for usage and environment errors -------------------------------------------------


def test_usage_errors_are_exit_2(world: World) -> None:
    assert world.run("no-such-command").code == 2
    assert world.run("ingest").code == 2
    assert world.run("keys").code == 2
    r = world.run("checkpoint", world.root / "nowhere")
    assert r.code == 2 and "no such vault directory" in r.err
    r = world.run("log", world.root)
    assert r.code == 2 and "not a vault" in r.err


def test_help_lists_every_store_command(world: World) -> None:
    r = world.run("--help")
    assert r.code == 0
    for cmd in ("keygen", "init", "keys", "sign", "pack", "ingest", "purge", "checkpoint", "log", "proof"):
        assert f"\n  {cmd} " in r.out


def test_real_console_script_end_to_end(vault_world: World) -> None:
    """The installed `tracer` script, not just main(): same outputs, same codes."""
    w = vault_world
    r = w.spawn("checkpoint", w.vault)
    assert r.code == 0 and r.out == w.ok("checkpoint", w.vault).out
    rev = w.write("rev-B.json", revision_input("B"))
    r = w.spawn("ingest", w.vault, rev, *w.cust(), "--json")
    assert r.code == 0 and json.loads(r.out)["appended"] is True
    r = w.spawn("ingest", w.vault, rev, *w.cust())
    assert r.code == 1 and "already ingested" in r.out and "Traceback" not in r.err


def test_store_files_untouched_by_read_commands(vault_world: World) -> None:
    w = vault_world
    before = {p.name: p.read_bytes() for p in Path(w.vault).iterdir()}
    for args in (["checkpoint"], ["log", "--json"], ["proof", "0"]):
        w.ok(args[0], w.vault, *args[1:])
    w.ok("keys", "list", w.vault, "--json")
    after = {p.name: p.read_bytes() for p in Path(w.vault).iterdir()}
    assert before == after


def test_passphrase_prompt_not_needed_when_env_set(world: World) -> None:
    r = world.spawn("init", world.vault, *world.cust())
    assert r.code == 0, r
    assert PASSPHRASE not in r.out + r.err


def test_purge_from_a_tombstone_request_file(vault_world: World) -> None:
    w = vault_world
    inp = json.loads((w.root / "inputs" / "ans-1.json").read_text())
    digest = json.loads(base64.b64decode(inp["envelope"]["payload"]))["question_sha256"]
    request = {
        "schema": "tracer.tombstone_request/v1",
        "digest": digest,
        "policy": "retention-30d",
        "reason": "question text expired",
        "authorizer": "dpo@example.org",
        "effective_at": "2026-05-31T12:00:00+02:00",
    }
    bad = w.write("bad-request.json", {**request, "digest": "XYZ"})
    r = w.run("purge", w.vault, "--request", bad, *w.cust())
    assert r.code == 2 and "bad-request.json: $.digest:" in r.err and "does not match" in r.err
    both = w.run("purge", w.vault, digest, "--request", bad, *w.cust())
    assert both.code == 2 and "not both" in both.err
    neither = w.run("purge", w.vault, digest, *w.cust())
    assert neither.code == 2 and "--policy and --reason are required" in neither.err
    good = w.write("request.json", request)
    r = w.ok("purge", w.vault, "--request", good, *w.cust())
    assert r.out.startswith(f"purged {digest}; tombstone at log entry ")
    with Vault.open(w.vault, read_only=True) as v:
        assert v.query("SELECT digest, policy, reason, authorizer, effective_at FROM v_tombstones") == [
            (digest, "retention-30d", "question text expired", "dpo@example.org", "2026-05-31T12:00:00+02:00")
        ]
