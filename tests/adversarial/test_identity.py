"""Signers are identified by key, never by a display name.  Before, checkpoint verifiers
were keyed by name and the signing name came from the key file's name: a key file
copied to another name, two investigators with one name, or a name with a space made
the next checkpoint unverifiable and locked everyone out for good."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from store import admin
from store.crypto import Identity, load_identity
from store.errors import VaultError
from store.note import Checkpoint, open_note
from tests.helpers import PASSPHRASE, T0, Case
from tracer.engine.session import unlock
from tracer.engine.trust import TrustStore


def _open_as(case: Case, ident: Identity) -> None:
    case.vault.close()
    s = unlock(case.path, ident, trust=TrustStore())
    s.record("answer", "x")
    s.close()
    case.reopen()


def test_a_renamed_key_file_signs_under_the_roster_name(case: Case, tmp_path: Path) -> None:
    ines = case.investigators["ines"]
    key, _pub = ines.save(tmp_path / "keys", PASSPHRASE)
    copy = key.with_name("ivan-laptop.key")
    shutil.copy(key, copy)
    laptop = load_identity(copy, PASSPHRASE)
    assert laptop.name == "ivan-laptop"  # the file's name ...
    _open_as(case, laptop)
    note = case.vault.latest_checkpoint().note
    assert "\u2014 ines " in note  # ... but the checkpoint is signed as the roster says
    for ident in (case.investigators["ines"], case.custodian):  # and nobody is locked out
        _open_as(case, ident)


def test_a_second_investigator_cannot_take_a_name(case: Case) -> None:
    other = Identity.from_seed("ines", b"another ines")
    with pytest.raises(VaultError, match="already taken"):
        admin.grant_investigator(case.vault, case.custodian, other.public, ["*"], T0)


@pytest.mark.parametrize("name", ["custodian", "ines"])
def test_a_producer_key_cannot_take_a_persons_name(case: Case, name: str) -> None:
    """Before, a key added as a producer under the name 'custodian' (or an investigator's)
    was signed into the roster, and its manifests read as signed by that person."""
    size = case.vault.size()
    impostor = Identity.from_seed(name, b"an impostor producer")
    with pytest.raises(VaultError, match=r"is the custodian's|already taken by investigator"):
        admin.add_producer_key(case.vault, case.custodian, impostor.public, T0)
    assert case.vault.size() == size


def test_an_investigator_cannot_take_an_active_producer_keys_name(case: Case) -> None:
    named_like_producer = Identity.from_seed(case.producer.name, b"a person")
    with pytest.raises(VaultError, match="already taken by producer key"):
        admin.grant_investigator(case.vault, case.custodian, named_like_producer.public, ["*"], T0)


def test_a_name_that_cannot_sign_a_note_is_refused_before_signing(case: Case) -> None:
    size = case.vault.size()
    for name in ("ivan laptop", "a+b", "", "x" * 65, "tab\there"):
        with pytest.raises(VaultError):
            admin.grant_investigator(
                case.vault, case.custodian, Identity.from_seed(name, b"n").public, ["*"], T0
            )
    assert case.vault.size() == size


def test_verifiers_are_routed_by_name_and_key_together(case: Case) -> None:
    """Two keys under one name do not shadow each other (Go's note.VerifierList)."""
    a, b = Identity.from_seed("alice", b"a1"), Identity.from_seed("alice", b"a2")
    note = Checkpoint("o", 1, bytes(32)).sign(b)
    text, names = open_note(note, [("alice", a.public.ed25519), ("alice", b.public.ed25519)])
    assert names == ["alice"] and text.startswith("o\n")


def test_an_investigators_checkpoint_opens_for_everyone(case: Case) -> None:
    omar = case.grant("omar", ["support"])
    _open_as(case, omar)
    _open_as(case, case.investigators["ines"])
    _open_as(case, omar)
