"""The roster folded from this vault's log, kept for as long as nothing changes it.

Only this process can append while it holds the file (DuckDB's lock), so the roster it
folded stays true until one of its own batches appends a roster entry, fails, or a
recovery cuts the log back; `Vault` tells this object which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.errors import VaultDamagedError
from store.roster import Roster, RosterProblem, load_roster

if TYPE_CHECKING:
    from store.vault import Vault

__all__ = ["RosterCache"]


class RosterCache:
    """`load_roster` of one open vault, folded once."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._folded: tuple[Roster, list[RosterProblem]] | None = None

    def reset(self) -> None:
        self._folded = None

    def adopt(self, roster: Roster) -> None:
        """Use a roster the caller just folded from this vault's log without problems
        (unlock), so the first append does not read the roster entries again."""
        if self._folded is None:
            self._folded = (roster.copy(), [])

    def folded(self) -> tuple[Roster, list[RosterProblem]]:
        """The roster and the roster entries that could not be folded: readers that only
        name keys (traces, reports) need not re-read the log."""
        if self._folded is None:
            self._folded = load_roster(self._vault)
        return self._folded

    def roster(self) -> Roster:
        """The folded roster; refuses a damaged one."""
        roster, problems = self.folded()
        if problems:
            p = problems[0]
            raise VaultDamagedError(
                f"{self._vault.path}: log entry {p.seq} ({p.kind}) does not hold: {p.code}: {p.detail}; "
                "the roster of keys and investigators cannot be trusted (run `tracer verify`)"
            )
        return roster
