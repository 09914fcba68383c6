"""A small vault that exercises every part of a pack, and helpers to read packs back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store import admin
from store.crypto import sha256_hex
from tests.helpers import Case, case_copy, manifest, passage, revision, signed
from tracer.engine.session import Session
from tracer.report import export_pack

REFUND_A = (
    "# Returns policy\n\n## Refund window\n\nCustomers may request a refund within thirty days of delivery.\n"
)
REFUND_C = REFUND_A.replace("thirty", "fourteen")
TRAVEL = "# Travel allowance\n\n## Per diem\n\nStaff receive forty euros per day when travelling abroad.\n"
DRAFT = (
    "# Brightwater settlement\n\n## Terms\n\nThe confidential settlement amount is nine hundred thousand.\n"
)
HOSTILE = (
    "Refunds within thirty days. <script>alert('x')</script><img src=https://evil.example/x.png> "
    "\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 \u202eevil\u202c zero\u200bwidth"
)
SECRET = "nine hundred thousand"
FINDING = "Answer drops the condition <b>here</b> \x1b[2J"
ALL_IDS = ["ans-stale", "ans-purged", "ans-hostile", "ans-secret", "ans-note", "ans-note-secret"]


@dataclass
class Built:
    case: Case
    session: Session
    travel_digest: str


SCOPES = {"ines": ["support"], "root": ["*"]}


def build(tmp: Path) -> Built:
    """Stale, purged, hostile, out-of-scope and lineage answers, plus one finding; the vault
    (and the home its writes left) built once per process and copied to `tmp`, then
    unlocked by ines."""
    c = case_copy("report-vault", _fill, tmp, SCOPES)
    return Built(c, c.session("ines"), sha256_hex(_travel_passage()["retrieved_text"].encode("utf-8")))


def _travel_passage() -> dict[str, Any]:
    return passage(revision("travel", "T1", TRAVEL, "2026-01-05T00:00:00Z"), "forty euros")


def _fill(c: Case) -> None:
    ra = revision("returns", "A", REFUND_A, "2026-01-05T00:00:00Z")
    rc = revision("returns", "C", REFUND_C, "2026-05-05T00:00:00Z")
    rt = revision("travel", "T1", TRAVEL, "2026-01-05T00:00:00Z")
    rd = revision("brightwater", "D1", DRAFT, "2026-01-05T00:00:00Z", collection="legal")
    pt = _travel_passage()
    drafts = [
        manifest("ans-stale", "Refunds are accepted for thirty days.", [passage(ra, "thirty days")]),
        manifest("ans-purged", "Staff get forty euros per day abroad.", [pt]),
        manifest("ans-hostile", HOSTILE, [passage(rc, "fourteen days")]),
        manifest("ans-secret", "The amount is confidential.", [passage(rd, SECRET)], collection="legal"),
        manifest(
            "note-1",
            "Refunds take thirty days.",
            [passage(ra, "thirty days", "n1")],
            kind="note",
        ),
        manifest(
            "ans-note",
            "As noted, refunds take thirty days.",
            [passage(ra, "thirty days", derived_from="note-1")],
            lineage=["note-1"],
        ),
        manifest(
            "note-secret",
            "Refunds take thirty days; the settlement is confidential.",
            [passage(ra, "thirty days", "n1"), passage(rd, SECRET, "n2", rank=2)],
            kind="note",
        ),
        manifest(
            "ans-note-secret",
            "As noted, the settlement is confidential.",
            [passage(ra, "thirty days", derived_from="note-secret")],
            lineage=["note-secret"],
        ),
    ]
    report = c.ingest(ra, rc, rt, rd, *(signed(c, d) for d in drafts))
    assert report.ok, report.to_json()
    travel_digest = sha256_hex(pt["retrieved_text"].encode("utf-8"))
    admin.purge(
        c.vault,
        c.custodian,
        travel_digest,
        "retention-90d",
        "expired",
        "dpo@northstar",
        "2026-06-01T00:00:00Z",
    )
    admin.purge(
        c.vault,
        c.custodian,
        sha256_hex(TRAVEL.encode()),
        "retention-90d",
        "expired",
        "dpo@northstar",
        "2026-06-01T00:00:00Z",
    )
    s = c.session("ines")
    try:
        s.add_finding("ans-stale", "p1", FINDING)
    finally:
        s.close()


def export(b: Built, out: Path, ids: list[str] | None = None, formats: set[str] | None = None) -> Path:
    return export_pack(b.session, ids or ALL_IDS, out, formats or {"json", "md", "html"})


def report_of(pack: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((pack / "report.json").read_text("ascii"))
    return value


def answer(report: dict[str, Any], answer_id: str) -> dict[str, Any]:
    return next(a for a in report["answers"] if a["answer_id"] == answer_id)
