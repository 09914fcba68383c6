"""One rule for misleading characters: ids refuse every character display marks."""

from __future__ import annotations

from store.textrules import id_problem, is_hidden, name_problem


def test_every_hidden_character_is_refused_in_an_id() -> None:
    accepted = [
        cp
        for cp in range(0x110000)
        if not 0xD800 <= cp <= 0xDFFF
        and (cp == 9 or is_hidden(cp, keep_newlines=False))
        and not id_problem(chr(cp))
    ]
    assert accepted == []


def test_ordinary_ids_and_names_pass() -> None:
    for ok in ("ans-0f914800ec7a", "psg-b47db759e7", "returns-policy@r2", "Ünïcode id", "run 7"):
        assert id_problem(ok) is None
    assert id_problem("ans\u200b1") == "contains the invisible or control character U+200B"
    assert name_problem("ines") is None and name_problem("ivan laptop") is not None
