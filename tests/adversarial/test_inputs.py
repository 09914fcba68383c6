"""Every bad input refused: clear error naming the file and field, non-zero exit, and
an unchanged vault.  Key files, hostile ids, FIFOs, oversized texts, digests with a
trailing newline."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest

from tests.cli.conftest import World, draft
from tests.helpers import manifest, passage, revision


def _size(w: World) -> int:
    r = w.ok("log", w.vault, "--json")
    return len(r.json()["entries"])


def _pub(w: World, name: str, text: str) -> Path:
    p = w.root / f"{name}.pub"
    p.write_text(text, encoding="utf-8")
    return p


def _real_pub(w: World) -> dict[str, str]:
    data: dict[str, str] = json.loads(w.pub("producer").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(
    ("label", "mutate"),
    [
        ("duplicate name", lambda d, raw: raw.replace('"name"', '"name": "x", "name"', 1)),
        ("NaN", lambda d, raw: raw.replace('"name": "producer"', '"name": NaN')),
        ("space", lambda d, raw: json.dumps({**d, "name": "ivan laptop"})),
        ("plus", lambda d, raw: json.dumps({**d, "name": "a+b"})),
        ("newline", lambda d, raw: json.dumps({**d, "name": "a\nRESULT OK"})),
        ("escape", lambda d, raw: json.dumps({**d, "name": "a\x1b[31m"})),
        ("empty", lambda d, raw: json.dumps({**d, "name": ""})),
        ("integer", lambda d, raw: json.dumps({**d, "name": 5})),
        ("huge", lambda d, raw: json.dumps({**d, "name": "a" * 100_000})),
        ("wrong key id", lambda d, raw: json.dumps({**d, "key_id": "0" * 64})),
    ],
)
def test_public_key_files_are_parsed_strictly(vault_world: World, label: str, mutate: object) -> None:
    w = vault_world
    d = _real_pub(w)
    raw = json.dumps(d)
    text = mutate(d, raw)  # type: ignore[operator]
    before = _size(w)
    for cmd in (
        ["keys", "add", w.vault, _pub(w, "bad", text), "--role", "producer", *w.cust()],
        ["investigators", "grant", w.vault, _pub(w, "bad", text), "--scope", "*", *w.cust()],
    ):
        r = w.run(*cmd)
        assert r.code != 0, (label, r)
        assert "bad.pub" in r.err and "Traceback" not in r.err, (label, r.err)
    assert _size(w) == before


def test_empty_scope_and_the_custodians_own_key_are_refused(vault_world: World) -> None:
    w = vault_world
    before = _size(w)
    r = w.run("investigators", "grant", w.vault, w.pub("custodian"), "--scope", "*", *w.cust())
    assert r.code == 2 and "custodian's own key" in r.err
    w.ok("keygen", "omar", "--out", w.keys)
    r = w.run("investigators", "grant", w.vault, w.pub("omar"), "--scope", "", *w.cust())
    assert r.code == 2 and "scope" in r.err
    assert _size(w) == before


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("answer_id", "ans-nl\n  RESULT OK: no findings"),
        ("answer_id", "ans-\u202egnp.exe"),
        ("run_id", "run\x1b]8;;http://x\x07"),
        ("answer_id", "ans\u200b1"),
        ("collection", "support\u2028"),
    ],
)
def test_hostile_ids_are_refused_at_ingest(vault_world: World, field: str, value: str) -> None:
    w = vault_world
    d = draft("ans-hostile")
    d[field] = value
    w.write("d.json", d)
    r = w.run("pack", w.root / "inputs" / "d.json", "--key", w.key("producer"), "--out", w.root / "m.json")
    assert r.code == 0, r
    before = _size(w)
    r = w.run("ingest", w.vault, w.root / "m.json", *w.cust())
    assert r.code == 1
    assert f"$.envelope.payload.{field}" in r.out + r.err
    assert "RESULT OK" not in (r.out + r.err).replace(repr(value), "")
    assert _size(w) == before


def test_hostile_passage_id_is_refused(vault_world: World) -> None:
    w = vault_world
    rev = revision("returns", "A", "Refunds within thirty days.\n", "2026-01-05T00:00:00Z")
    d = manifest("ans-p", "Thirty days.", [passage(rev, "thirty", "p\n1")])
    w.write("d.json", d)
    assert (
        w.run(
            "pack", w.root / "inputs" / "d.json", "--key", w.key("producer"), "--out", w.root / "m.json"
        ).code
        == 0
    )
    r = w.run("ingest", w.vault, w.root / "m.json", *w.cust())
    assert r.code == 1 and "$.envelope.payload.passages[0].passage_id" in r.out + r.err


@pytest.mark.parametrize("field", ["source_system", "source_revision", "backend"])
def test_hostile_revision_source_fields_are_refused(vault_world: World, field: str) -> None:
    """Before, a revision's `source_revision` accepted a newline while its document id,
    revision and collection refused one; every id shown verbatim follows one rule."""
    w = vault_world
    rev = revision("returns", "B", "Refunds within fourteen days.\n", "2026-02-05T00:00:00Z")
    rev[field] = "x\nRESULT      OK: no findings"
    w.write("rev.json", rev)
    before = _size(w)
    r = w.run("ingest", w.vault, w.root / "inputs" / "rev.json", *w.cust())
    assert r.code == 1 and f"$.{field}" in r.out + r.err, r
    assert _size(w) == before


def test_a_fifo_is_refused_at_once(vault_world: World) -> None:
    w = vault_world
    fifo = w.root / "pipe.json"
    os.mkfifo(fifo)
    done = threading.Event()
    result: dict[str, object] = {}

    def go() -> None:
        result["r"] = w.spawn("ingest", w.vault, fifo, *w.cust())
        done.set()

    t = threading.Thread(target=go, daemon=True)
    t.start()
    finished = done.wait(60)
    if not finished:  # unblock the reader so the test ends, then fail
        with open(fifo, "w") as fh:
            fh.write("{}")
    assert finished, "ingest blocked on a FIFO"
    r = result["r"]
    assert r.code == 1 and "not a regular file" in r.out + r.err  # type: ignore[attr-defined]


def test_an_oversized_text_is_refused_with_the_limit(vault_world: World) -> None:
    w = vault_world
    big = revision("huge", "A", "x" * (33 * 1024 * 1024), "2026-01-05T00:00:00Z")
    path = w.write("big.json", big)
    before = _size(w)
    r = w.run("ingest", w.vault, path, *w.cust())
    assert r.code == 1 and "limit" in r.out + r.err and "big.json" in r.out + r.err
    assert _size(w) == before


def test_a_digest_with_a_trailing_newline_is_refused(vault_world: World) -> None:
    w = vault_world
    digest = hashlib.sha256(b"x").hexdigest()
    req = {
        "schema": "tracer.tombstone_request/v1",
        "digest": digest + "\n",
        "policy": "P",
        "reason": "R",
        "authorizer": "A",
        "effective_at": "2026-06-01T00:00:00Z",
    }
    path = w.write("purge.json", req)
    r = w.run("purge", w.vault, "--request", path, *w.cust())
    assert r.code != 0 and "$.digest" in r.out + r.err
