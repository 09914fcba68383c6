"""Who a case viewer is and what they may see: the scope half of the case desk.

`CaseDesk` (tracer.engine.case) reads and writes the case file; this module holds the two
visibility rules its module doc states, apart, so reading, the holds and writing ask one
object and the answer-visibility cache has one owner:

* a subject (an answer, a document, a digest) is visible when the engine says so or
  the viewer may read every collection holding it;
* an item is shown when the viewer covers its author (`CaseScope.covers`), and a hold
  whose author they do not cover is shown with its free texts withheld (`HoldView`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from store import queries
from store.casefile import CaseFile, Hold, digest_collections, document_collections
from store.errors import StoreError
from store.keyring import ALL_SCOPES
from store.roster import Roster
from tracer.engine.jsonshapes import HoldJSON, PersonJSON
from tracer.engine.session import Session
from tracer.engine.trace import Tracer

__all__ = ["WITHHELD", "CaseError", "CaseScope", "HoldView", "Person"]


class CaseError(StoreError):
    """A case action that cannot be done (no such case, nothing visible, read-only vault)."""

    hint = "nothing was appended; fix the cause and try again"


@dataclass(frozen=True, slots=True)
class Person:
    """Someone who signed: the roster's name and the key fingerprint beside it."""

    name: str
    key_id: str
    role: str

    def label(self) -> str:
        return f"{self.name} ({self.key_id[:16]})"

    def to_json(self) -> PersonJSON:
        return {"name": self.name, "key_id": self.key_id, "role": self.role}


#: what stands in place of a withheld field, in words
WITHHELD = "withheld: written by someone who may read collections you cannot"


@dataclass(frozen=True, slots=True)
class HoldView:
    """A hold as one viewer may see it.

    Whoever sees a hold's subject sees that the hold is in force on it: its log entry,
    subject, since when, whether it is in force, and who placed (and released) it.  The
    free texts its author wrote — the reason, and the case it was placed under — are
    withheld when the viewer does not cover that author (`CaseScope.covers`): `hold` then
    carries them blank and `withheld` names them (`reason`, `case_id`, `release.reason`).
    Show `reason_text`, never `hold.reason` alone.
    """

    hold: Hold
    signer: Person
    released_by: Person | None
    withheld: tuple[str, ...] = ()

    @property
    def reason_text(self) -> str:
        return f"reason {WITHHELD}" if "reason" in self.withheld else self.hold.reason

    @property
    def release_reason_text(self) -> str:
        r = self.hold.release
        if r is None:
            return ""
        return f"reason {WITHHELD}" if "release.reason" in self.withheld else r.reason

    def to_json(self) -> HoldJSON:
        h, r = self.hold, self.hold.release
        return {
            "seq": h.seq,
            "case_id": None if "case_id" in self.withheld else h.case_id,
            "subject": {"kind": h.subject_kind, "id": h.subject},
            "reason": None if "reason" in self.withheld else h.reason,
            "at": h.at,
            "signer": self.signer.to_json(),
            "in_force": h.in_force,
            "release": (
                None
                if r is None or self.released_by is None
                else {
                    "seq": r.seq,
                    "reason": None if "release.reason" in self.withheld else r.reason,
                    "at": r.at,
                    "signer": self.released_by.to_json(),
                }
            ),
            "withheld": list(self.withheld),
        }


class CaseScope:
    """The viewer's scope over the case file: names, cover, and what is visible.

    Owns the answer-visibility memo (an answer's visibility follows its lineage and the
    viewer's scopes, neither of which a case statement changes, so it lives as long as
    the desk); `file` is the desk's case file, read when a hold names a case.
    """

    def __init__(self, session: Session, tracer: Tracer, file: Callable[[], CaseFile]):
        self.s = session
        self.tracer = tracer
        self._file = file
        self._visible: dict[str, bool] = {}

    def _roster(self) -> Roster:
        return self.s.vault.roster()

    def person(self, key_id: str) -> Person:
        vault = self.s.vault
        if key_id == vault.custodian.key_id:
            return Person(vault.custodian.name, key_id, "custodian")
        inv = self._roster().investigators.get(key_id)
        if inv is None:
            return Person(key_id[:16], key_id, "unknown")
        return Person(inv.name, key_id, "investigator" if inv.active else "revoked investigator")

    def covers(self, author: str) -> bool:
        """True when the viewer may read everything `author` could (see the module doc)."""
        if ALL_SCOPES in self.s.scopes:
            return True
        if author == self.s.identity.key_id:
            return True
        if author == self.s.vault.custodian.key_id:
            return False
        inv = self._roster().investigators.get(author)
        return inv is not None and ALL_SCOPES not in inv.scopes and set(inv.scopes) <= set(self.s.scopes)

    def answer_visible(self, answer_id: str) -> bool:
        if answer_id not in self._visible:
            row = queries.answer_entry(self.s.vault, answer_id)
            self._visible[answer_id] = row is not None and self.tracer.summary(answer_id).visible
        return self._visible[answer_id]

    def prime(self, holds: list[Hold]) -> None:
        """Read ahead the answers `holds` are on whose visibility is not yet known."""
        self.tracer.prime_ids(
            [h.subject for h in holds if h.subject_kind == "answer" and h.subject not in self._visible]
        )

    def collections_visible(self, collections: set[str]) -> bool:
        return bool(collections) and all(self.s.can_read(c) for c in collections)

    def hold_visible(self, h: Hold) -> bool:
        """A hold is visible to whoever sees its subject; what its authors wrote is cut
        in `hold_view`."""
        if h.subject_kind == "answer":
            return self.answer_visible(h.subject)
        if h.subject_kind == "document":
            return self.collections_visible(document_collections(self.s.vault, h.subject))
        return self.collections_visible(digest_collections(self.s.vault, h.subject))

    def _case_visible(self, case_id: str) -> bool:
        record = self._file().cases.get(case_id)
        return record is not None and self.covers(record.opened_by)

    def hold_view(self, h: Hold) -> HoldView:
        """`h` cut to the viewer (see `HoldView`): a case id they can see anyway is kept."""
        withheld: list[str] = []
        shown = h
        if not self.covers(h.signer):
            withheld.append("reason")
            shown = replace(shown, reason="")
            if h.case_id is not None and not self._case_visible(h.case_id):
                withheld.append("case_id")
                shown = replace(shown, case_id=None)
        rel = h.release
        if rel is not None and not self.covers(rel.signer):
            withheld.append("release.reason")
            shown = replace(shown, release=replace(rel, reason=""))
        by = self.person(rel.signer) if rel is not None else None
        return HoldView(shown, self.person(h.signer), by, tuple(withheld))
