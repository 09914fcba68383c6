"""A vault where each kind of stored text is purged once, each behind its own answer.

retrieved text, model input, answer text, cited revision, current revision: the TUI
must put a full tombstone card wherever each of them would stand.
"""

from __future__ import annotations

from pathlib import Path

from store import admin
from store.crypto import sha256_hex
from tests.helpers import PASSPHRASE, T0, manifest, new_case, passage, revision, signed

#: answer id -> (what is purged, the words of the purged text, the tombstone's policy)
PURGED = {
    "ans-p-retrieved": ("retrieved text", "Lanterns are sold in pairs only.", "RET-RETRIEVED"),
    "ans-p-model": ("model input", "[source: kb] Tents come with six pegs.", "RET-MODEL"),
    "ans-p-answer": ("answer", "A stove is 900 g, about nine hundred grams.", "RET-ANSWER"),
    "ans-p-cited": ("cited revision", "# Ropes\n\n## Length\n\nRopes are thirty metres long.\n", "RET-CITED"),
    "ans-p-current": (
        "current revision",
        "# Maps\n\n## Scale\n\nMaps are printed at 1:40000 now.\n",
        "RET-CURRENT",
    ),
}


def _digest(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


def make_purged_vault(path: Path) -> Path:
    """Vault at `path / 'vault'`; returns the key file of `ines` (all scopes)."""
    case = new_case(path / "vault", {"ines": ["*"]})
    try:
        lantern = revision("lanterns", "A", "# Lanterns\n\n## Sale\n\nLanterns are sold in pairs only.\n", T0)
        tents = revision("tents", "A", "# Tents\n\n## Kit\n\nTents come with six pegs.\n", T0)
        stoves = revision("stoves", "A", "# Stoves\n\n## Weight\n\nStoves weigh nine hundred grams.\n", T0)
        ropes_a = revision("ropes", "A", PURGED["ans-p-cited"][1], T0)
        ropes_b = revision(
            "ropes",
            "B",
            "# Ropes\n\nIntro.\n\n## Length\n\nRopes are thirty metres long.\n",
            "2026-03-01T00:00:00Z",
        )
        maps_a = revision("maps", "A", "# Maps\n\n## Scale\n\nMaps are printed at 1:50000.\n", T0)
        maps_b = revision("maps", "B", PURGED["ans-p-current"][1], "2026-03-01T00:00:00Z")
        model_p = passage(tents, "six pegs", model_input_text=PURGED["ans-p-model"][1])
        ok = case.ingest(
            lantern,
            tents,
            stoves,
            ropes_a,
            ropes_b,
            maps_a,
            maps_b,
            signed(case, manifest("ans-p-retrieved", "Sold in pairs.", [passage(lantern, "pairs")])),
            signed(case, manifest("ans-p-model", "Six pegs.", [model_p])),
            signed(case, manifest("ans-p-answer", PURGED["ans-p-answer"][1], [passage(stoves, "grams")])),
            signed(case, manifest("ans-p-cited", "Thirty metres.", [passage(ropes_a, "thirty")])),
            signed(case, manifest("ans-p-current", "Printed at 1:50000.", [passage(maps_a, "printed")])),
        )
        assert ok.ok, ok.to_json()
        texts = {
            "ans-p-retrieved": PURGED["ans-p-retrieved"][1],
            "ans-p-model": PURGED["ans-p-model"][1],
            "ans-p-answer": PURGED["ans-p-answer"][1],
            "ans-p-cited": PURGED["ans-p-cited"][1],
            "ans-p-current": PURGED["ans-p-current"][1],
        }
        for answer_id, text in texts.items():
            what, _words, policy = PURGED[answer_id]
            admin.purge(case.vault, case.custodian, _digest(text), policy, f"{what} expired", "dpo", T0)
    finally:
        case.close()
    keys = path / "keys"
    case.investigators["ines"].save(keys, PASSPHRASE)
    return keys / "ines.key"
