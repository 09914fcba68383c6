"""`tracer init`'s default origin is what its help and docs/cli.md say it is: derived from
the custodian's key and the creation time, so one key makes vaults with distinct origins."""

from __future__ import annotations

import pytest

from store.crypto import load_identity, sha256_hex
from store.vault import Vault
from tests.cli.conftest import PASSPHRASE, REPO, World


def _origin(w: World, vault: str) -> str:
    w.ok("init", w.root / vault, *w.cust())
    with Vault.open(w.root / vault, read_only=True) as v:
        return v.origin


def test_one_key_two_times_two_origins_by_the_documented_rule(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    public = load_identity(world.key("custodian"), PASSPHRASE.encode()).public.ed25519
    origins = []
    for vault, clock in (("v1", "2026-06-01T00:00:00Z"), ("v2", "2026-06-01T00:00:01Z")):
        monkeypatch.setenv("TRACER_CLOCK", clock)
        origin = _origin(world, vault)
        assert origin == f"tracer.vault/{sha256_hex(public + clock.encode())[:16]}"
        origins.append(origin)
    assert origins[0] != origins[1]


def test_help_and_docs_say_key_and_creation_time(world: World) -> None:
    help_text = " ".join(world.ok("init", "--help").out.split())
    for words in ("public key and the creation time", "even with one key, has its own"):
        assert words in help_text, help_text
    doc = (REPO / "docs" / "cli.md").read_text("utf-8")
    section = " ".join(doc.split("### `tracer init", 1)[1].split("\n### ", 1)[0].split())
    assert "public key followed by the creation time" in section
    assert "two vaults made with one key get two origins" in section
