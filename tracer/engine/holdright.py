"""Who may place and release legal holds, in words a refused investigator can act on.

The store decides (`store.casefile.append_case_statement` refuses a hold signed by
anyone the roster does not allow); this module only lets the TUI say so before the
investigator types a reason: whether this session's key may sign a hold, and who may
(the custodian, and every active investigator granted the `hold` right), by roster
name and fingerprint.  The roster it reads is the one the store checks against.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.entries import EntryKind
from tracer.engine.case import CaseDesk, Person

__all__ = ["HoldRight", "hold_request_text", "hold_right"]


@dataclass(frozen=True, slots=True)
class HoldRight:
    """`allowed`: this session's key may sign a hold; `who`: everyone who may, custodian first."""

    allowed: bool
    who: tuple[Person, ...]

    def refusal(self, me: str) -> str:
        """Why `me` may not, and whom to ask, in one paragraph."""
        names = ", ".join(p.label() + ("" if p.role != "custodian" else " — the custodian") for p in self.who)
        return (
            f"{me} may not place or release a legal hold: only the custodian or an investigator "
            f"granted the 'hold' right may. Who can: {names or 'nobody in the roster'}. "
            "You can record a hold request as a case note for them (docs/cases.md, 'The hold right')."
        )


def hold_right(desk: CaseDesk) -> HoldRight:
    """Whether the session behind `desk` may sign a hold, and who may."""
    s = desk.s
    signers = s.vault.roster().statement_signers(EntryKind.HOLD)  # the same signers as a release
    people = sorted(
        (desk.person(k) for k in signers),
        key=lambda p: (p.role != "custodian", p.name, p.key_id),
    )
    return HoldRight(s.identity.key_id in signers, tuple(people))


def hold_request_text(kind: str, subject: str, reason: str) -> str:
    """The case note a refused investigator records instead of a hold."""
    return f"HOLD REQUEST: please place a legal hold on {kind} {subject}. Reason: {reason}"
