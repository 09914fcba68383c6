"""`tracer revalidate --fail-on STATES`: exit 1 exactly when an answer is in a named state
(the CI gate docs/cli.md documents), 0 otherwise, 2 for a word that is no state."""

from __future__ import annotations

from tests.cli.conftest import DOC, World
from tests.helpers import revision


def test_fail_on_is_0_while_no_answer_is_in_a_named_state(vault_world: World) -> None:
    w = vault_world
    r = w.run("revalidate", w.vault, "--key", w.key("ines"), "--fail-on", "stale,ambiguous")
    assert r.code == 0, r
    assert "FAIL-ON ambiguous,stale: 0 answer(s)" in r.out
    assert w.run("revalidate", w.vault, "--key", w.key("ines")).code == 0


def test_fail_on_is_1_once_the_answer_went_stale(vault_world: World) -> None:
    w = vault_world
    changed = revision("returns", "B", DOC.replace("thirty days", "fourteen days"), "2026-02-01T00:00:00Z")
    w.ok("ingest", w.vault, w.write("rev-B.json", changed), *w.cust())
    plain = w.run("revalidate", w.vault, "--key", w.key("ines"))
    assert plain.code == 0 and "stale 1" in plain.out, plain
    r = w.run("revalidate", w.vault, "--key", w.key("ines"), "--fail-on", "stale")
    assert r.code == 1 and "FAIL-ON stale: 1 answer(s) — exit 1" in r.out, r
    j = w.run("revalidate", w.vault, "--key", w.key("ines"), "--fail-on", "ambiguous, stale", "--json")
    assert j.code == 1
    assert j.json()["fail_on"] == {"states": ["ambiguous", "stale"], "answers": ["ans-1"]}
    other = w.run("revalidate", w.vault, "--key", w.key("ines"), "--fail-on", "missing,moved")
    assert other.code == 0, other


def test_a_word_that_is_no_state_is_2_naming_the_known_ones(vault_world: World) -> None:
    w = vault_world
    r = w.run("revalidate", w.vault, "--key", w.key("ines"), "--fail-on", "stale,outdated")
    assert r.code == 2 and "not a state word: outdated" in r.err and "checksum_mismatch" in r.err, r
