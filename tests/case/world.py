"""A small vault for the case-file tests: public and restricted answers, and people.

ines reads everything and may place holds; omar reads `support` only; pat reads
everything but was granted no hold right.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from store import admin
from store.crypto import Identity, sha256_hex
from tests.helpers import T0, Case, manifest, new_case, passage, revision, signed
from tests.templates import copy_of
from tracer.engine.session import Session

RUNBOOK = (
    "# Restart runbook\n\n## Payments\n\nDo not restart the payments service in production during "
    "settlement.\n"
)
DRAFT = (
    "# Brightwater settlement\n\n## Terms\n\nThe confidential settlement amount is nine hundred thousand.\n"
)
SECRET_WORDS = ("brightwater", "Brightwater", "nine hundred", "ans-secret", "legal")
HOSTILE = "dropped \x1b]52;c;ZXZpbA==\x07 condition [bold]x[/bold] \u202eevil\u202c"


@dataclass
class World:
    case: Case
    runbook_digest: str
    passage_digest: str

    def session(self, who: str = "ines") -> Session:
        return self.case.session(who)


def build_world(tmp: Path) -> World:
    """The vault at `tmp / 'vault'`: a copy of the one this process built first."""
    copy_of("case-world", lambda d: _build(d).close(), tmp)
    c = Case(tmp / "vault", None, *_IDENTITIES)
    c.investigators = {n: Identity.from_seed(n, n.encode()) for n in ("omar", "pat", "ines")}
    c.counter = len(list(c.inputs.glob("input-*.json")))
    pr = passage(revision("runbook", "R1", RUNBOOK, "2026-01-05T00:00:00Z"), "Do not restart")
    return World(c, sha256_hex(RUNBOOK.encode()), sha256_hex(pr["retrieved_text"].encode()))


_IDENTITIES = (Identity.from_seed("custodian", b"custodian"), Identity.from_seed("producer", b"producer"))


def _build(tmp: Path) -> Case:
    c = new_case(tmp / "vault", {"omar": ["support"], "pat": ["*"]})
    ines = Identity.from_seed("ines", b"ines")
    admin.grant_investigator(c.vault, c.custodian, ines.public, ["*"], T0, rights=["hold"])
    c.investigators["ines"] = ines
    rb = revision("runbook", "R1", RUNBOOK, "2026-01-05T00:00:00Z", title="Restart runbook")
    rd = revision("brightwater", "D1", DRAFT, "2026-01-05T00:00:00Z", collection="legal", title="Brightwater")
    pr = passage(rb, "Do not restart")
    drafts = [
        manifest("ans-restart", "Restart the payments service now.", [pr]),
        manifest("ans-other", "Restarts are fine outside settlement.", [passage(rb, "Do not restart")]),
        manifest(
            "ans-secret", "The amount is confidential.", [passage(rd, "nine hundred")], collection="legal"
        ),
    ]
    report = c.ingest(rb, rd, *(signed(c, d) for d in drafts))
    assert report.ok, report.to_json()
    return c
