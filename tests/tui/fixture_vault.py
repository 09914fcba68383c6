"""One small vault holding every state the TUI must show, built through the real API.

Built once per process with fixed keys and copied per test (`tests.templates`), so
nothing is shared between tests: opening a vault appends access entries, and a shared
vault would drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store import admin
from store.crypto import Identity, sha256_hex
from tests.helpers import PASSPHRASE, T0, Case, manifest, new_case, passage, revision, signed
from tests.templates import copy_of

RETURNS_A = (
    "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within thirty days of delivery.\n"
)
RETURNS_C = RETURNS_A.replace("thirty", "fourteen")
SHIPPING_A = "# Shipping\n\n## Carriers\n\nParcels ship with Northpost within two business days.\n"
SHIPPING_B = (
    "# Shipping\n\nThis page was reorganised in spring.\n\n## Carriers\n\n"
    "Parcels ship with Northpost within two business days.\n"
)
WARRANTY = "# Warranty\n\n## Coverage\n\nDevices carry a two year warranty against defects.\n"
MANUAL = "# Manual\n\n## Charging\n\nCharge the device for eight hours before first use.\n"
TRAVEL = "# Travel\n\n## Allowance\n\nStaff may claim forty euros per day while travelling.\n"
RUNBOOK = "# Restart runbook\n\n## Restart\n\nRestart the queue nightly, except in production during sales.\n"
DRAFT_PUBLIC = "# Draft\n\n## Plan\n\nThe public plan ships the new portal in March.\n"
DRAFT_SECRET_A = "# Secret draft\n\n## Budget\n\nThe budget for the portal is four hundred thousand.\n"
DRAFT_SECRET_B = DRAFT_SECRET_A.replace("four hundred", "nine hundred")

HOSTILE_MARKUP = "[bold]loud[/bold] [@click=app.quit]quit[/] [link=https://evil.test]x[/link] [a[0]]"
HOSTILE_CONTROLS = (
    "clear\x1b[2J osc52\x1b]52;c;ZXZpbA==\x07 link\x1b]8;;https://evil.test\x1b\\t\x1b]8;;\x1b\\ "
    "title\x1b]0;pwned\x07 csi\x9b31m cr\rover bidi\u202eevil\u2066iso\u2069 zw\u200bsp"
)
# identifiers may not hold control or invisible characters (ingest refuses them), but
# markup in them must still show literally
HOSTILE_RUN = "run-[bold]x[/bold]"
HOSTILE_REVISION = "A[@click=app.quit]"
HOSTILE_CONTENT = f"# Hostile {HOSTILE_MARKUP}\n\n## Section\n\nThe text says {HOSTILE_CONTROLS} and more.\n"

ANSWER_IDS = (
    "ans-verified",
    "ans-stale",
    "ans-moved",
    "ans-purged",
    "ans-missing",
    "note-1",
    "ans-derived",
    "ans-hostile",
    "ans-runbook",
)


@dataclass(frozen=True)
class Keys:
    """Key files (all with PASSPHRASE) for the investigators the tests unlock as."""

    ines: Path
    rita: Path
    olaf: Path
    stranger: Path


def _at(i: int) -> str:
    return f"2026-02-0{1 + i % 8}T10:00:0{i % 10}Z"


def build(case: Case) -> None:
    rev = {
        "ret_a": revision("returns", "A", RETURNS_A, "2026-01-05T00:00:00Z"),
        "ret_c": revision("returns", "C", RETURNS_C, "2026-05-05T00:00:00Z"),
        "ship_a": revision("shipping", "A", SHIPPING_A, "2026-01-05T00:00:00Z"),
        "ship_b": revision("shipping", "B", SHIPPING_B, "2026-04-01T00:00:00Z"),
        "war": revision("warranty", "A", WARRANTY, "2026-01-05T00:00:00Z"),
        "manual": revision("manual", "A", MANUAL, "2026-01-05T00:00:00Z"),
        "travel": revision("travel", "A", TRAVEL, "2026-01-05T00:00:00Z"),
        "runbook": revision("runbook", "A", RUNBOOK, "2026-01-05T00:00:00Z"),
        "pub": revision("draft-public", "A", DRAFT_PUBLIC, "2026-01-05T00:00:00Z"),
        "sec_a": revision(
            "draft-secret", "A", DRAFT_SECRET_A, "2026-01-05T00:00:00Z", collection="restricted"
        ),
        "sec_b": revision(
            "draft-secret", "B", DRAFT_SECRET_B, "2026-04-05T00:00:00Z", collection="restricted"
        ),
        "hostile": revision(
            "hostile-doc", HOSTILE_REVISION, HOSTILE_CONTENT, "2026-01-05T00:00:00Z", title=HOSTILE_MARKUP
        ),
    }

    def one(aid: str, answer: str, key: str, contains: str, i: int, **kw: Any) -> dict[str, Any]:
        return signed(case, manifest(aid, answer, [passage(rev[key], contains)], generated_at=_at(i), **kw))

    stale_answer = "Refunds are accepted for thirty days. Keep the receipt."
    stale = signed(
        case,
        manifest(
            "ans-stale",
            stale_answer,
            [passage(rev["ret_a"], "thirty days")],
            citations=[(0, 37, ["p1"])],
            generated_at=_at(1),
        ),
    )
    missing = one("ans-missing", "Charge it for eight hours.", "manual", "eight hours", 4)
    missing["contents"] = {d: t for d, t in missing["contents"].items() if "Charge the device" not in t}
    note = signed(
        case,
        manifest(
            "note-1",
            "Portal ships in March; budget four hundred thousand.",
            [passage(rev["pub"], "public plan", "p1"), passage(rev["sec_a"], "budget", "p2", rank=2)],
            kind="note",
            generated_at=_at(5),
        ),
    )
    derived_p = passage(rev["pub"], "public plan", "p1")
    derived_p.update(
        derived_from="note-1", retrieved_text="Portal ships in March; budget four hundred thousand."
    )
    derived = signed(
        case, manifest("ans-derived", "The portal ships in March.", [derived_p], generated_at=_at(6))
    )
    hostile_answer = f"Answer {HOSTILE_MARKUP} then {HOSTILE_CONTROLS} end."
    hostile = signed(
        case,
        manifest(
            "ans-hostile",
            hostile_answer,
            [passage(rev["hostile"], "The text says")],
            citations=[(0, 6, ["p1"]), (7, 7 + len(HOSTILE_MARKUP), ["p1"])],
            generated_at=_at(7),
            run_id=HOSTILE_RUN,
        ),
    )
    report = case.ingest(
        *rev.values(),
        one("ans-verified", "Devices carry a two year warranty.", "war", "two year", 0),
        stale,
        one("ans-moved", "Parcels ship within two business days.", "ship_a", "Northpost", 2),
        one("ans-purged", "Staff may claim forty euros a day.", "travel", "forty euros", 3),
        missing,
        note,
        derived,
        hostile,
        one("ans-runbook", "Restart the queue nightly.", "runbook", "Restart the queue", 8),
    )
    assert report.ok, report.to_json()
    admin.purge(
        case.vault,
        case.custodian,
        _travel_digest(),
        "retention-90d",
        "travel data expired",
        "dpo@northstar",
        T0,
    )


def _travel_digest() -> str:
    p = passage(revision("travel", "A", TRAVEL, "2026-01-05T00:00:00Z"), "forty euros")
    return sha256_hex(str(p["retrieved_text"]).encode("utf-8"))


def make_vault(path: Path) -> Keys:
    """Vault at `path / 'vault'`, key files under `path / 'keys'`: a copy of the one this
    process built first."""
    copy_of("tui-fixture-vault", _build_vault, path)
    keys = path / "keys"
    return Keys(keys / "ines.key", keys / "rita.key", keys / "olaf.key", keys / "stranger.key")


def _build_vault(path: Path) -> None:
    case = new_case(path / "vault", {"ines": ["*"], "rita": ["support"], "olaf": ["*"]})
    try:
        build(case)
        admin.revoke_investigator(case.vault, case.custodian, case.investigators["olaf"].key_id, T0, "left")
    finally:
        case.close()
    keys = path / "keys"
    for ident in (*case.investigators.values(), Identity.from_seed("stranger", b"stranger")):
        ident.save(keys, PASSPHRASE)
