"""Who may sign what, and who may read, folded once from the log.

One value, `Roster`, answers every question about keys: which producer keys could sign
a manifest generated at a given instant, which investigators may open the vault and
read which collections, and which (name, key) pairs may sign a checkpoint.  Ingest,
unlock, the append path and `verify` all fold the same custodian-signed statements
through `Roster.fold`, so there is one rule for each question.

The roster is read from the log's entry bytes, never from the derived views (which
anyone holding the file can edit), and each statement it folds must carry a valid
custodian signature, hash to its stored leaf, and be bound to its own place in the
log (`store.entries.place_of`).  A revocation is final: a revoked key id is never
added or granted again; a returning person gets a new key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from store import merkle
from store.crypto import PublicIdentity, b64d, key_id_of
from store.dsse import Envelope, verify_envelope
from store.entries import (
    CUSTODIAN_KINDS,
    HOLD_KINDS,
    INVESTIGATOR_KINDS,
    ROSTER_KINDS,
    STATEMENT_TYPE,
    EntryKind,
    LogEntry,
    place_of,
)
from store.errors import InputError, SignatureError
from store.textrules import NAME_RULE, name_problem, scope_problem
from store.timeutil import instant
from store.words import FindingKind

if TYPE_CHECKING:
    from store.statements import (
        InvestigatorGrantStatement,
        InvestigatorRevokeStatement,
        KeyAddStatement,
        KeyRevokeStatement,
        VaultInitStatement,
    )
    from store.vault import Vault

__all__ = [
    "ALL_SCOPES",
    "HOLD_RIGHT",
    "NAME_RULE",
    "RIGHTS",
    "Investigator",
    "ProducerKey",
    "Roster",
    "RosterProblem",
    "check_entry",
    "investigators",
    "load_roster",
    "name_problem",
    "producer_keys",
    "scope_problem",
]

ALL_SCOPES = "*"
#: the right to place and release legal holds (the custodian always has it)
HOLD_RIGHT = "hold"
#: rights a grant may carry, besides its scopes
RIGHTS = frozenset({HOLD_RIGHT})


def _problem_at(when: str, bounds: Sequence[tuple[str, str | None]]) -> str | None:
    """Why an instant falls outside [valid_from, min(valid_until, revoked_at)), or None.

    Times compare as instants; an unreadable time (the instant or a bound) fails closed.
    """
    try:
        t = instant(when)
    except ValueError:
        return f"has no readable time to check against ({when!r})"
    for name, text in bounds:
        problem = _bound_problem(t, name, text) if text else None
        if problem is not None:
            return problem
    return None


def _bound_problem(t: datetime, name: str, text: str) -> str | None:
    """Why instant `t` is on the wrong side of the bound `name` at `text` (unreadable: refused)."""
    try:
        bound = instant(text)
    except ValueError:
        return f"has an unreadable {name} {text!r}"
    if name == "valid_from" and t < bound:
        return f"not valid before {text}"
    if name == "valid_until" and t >= bound:
        return f"outside its validity window (valid until {text})"
    if name == "revoked_at" and t >= bound:
        return f"revoked at {text}"
    return None


@dataclass(frozen=True, slots=True)
class ProducerKey:
    key_id: str
    name: str
    ed25519: bytes
    valid_from: str | None
    valid_until: str | None
    revoked_at: str | None
    added_seq: int
    revoked_seq: int | None = None

    def problem_at(self, when: str) -> str | None:
        """Why this key could not sign at `when`, or None.  A manifest signed before a
        revocation stays valid after it; one claiming a later time does not."""
        return _problem_at(
            when,
            (
                ("valid_from", self.valid_from),
                ("valid_until", self.valid_until),
                ("revoked_at", self.revoked_at),
            ),
        )

    def valid_at(self, when: str) -> bool:
        return self.problem_at(when) is None


@dataclass(frozen=True, slots=True)
class Investigator:
    key_id: str
    name: str
    scopes: tuple[str, ...]
    ed25519: bytes
    x25519: bytes
    granted_at: str
    revoked_at: str | None
    granted_seq: int = -1
    revoked_seq: int | None = None
    #: rights granted besides reading (`RIGHTS`); fixed at grant, like the key
    rights: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class RosterProblem:
    """A roster statement that was not folded in, and why (a `verify` finding)."""

    seq: int
    kind: str
    code: FindingKind
    detail: str


@dataclass
class Roster:
    """Keys and people as the log says at one point of it; `fold` moves that point on.

    `version` counts the folds that changed it, so a verification run checked in a
    worker against an older roster is checked again.
    """

    custodian: PublicIdentity | None = None
    producers: dict[str, ProducerKey] = field(default_factory=dict)
    investigators: dict[str, Investigator] = field(default_factory=dict)
    version: int = 0

    def copy(self) -> Roster:
        return Roster(self.custodian, dict(self.producers), dict(self.investigators), self.version)

    # -- folding -----------------------------------------------------------------------

    def refusal(self, kind: EntryKind, stmt: Mapping[str, object]) -> str | None:
        """Why the statement may not change the roster now (None: it may).

        The same rules refuse a command before it is signed (`store.admin`) and a
        statement in the log that breaks them (`verify`, unlock).
        """
        if kind == EntryKind.VAULT_INIT:
            if self.custodian is not None:
                return "the vault is already initialised"
            return _custodian_problem(stmt)
        if self.custodian is None:
            return "no vault_init statement precedes it"
        key_id = stmt.get("key_id")
        if not isinstance(key_id, str):
            return "key_id is not a string"
        if kind == EntryKind.KEY_ADD:
            return self._key_add_refusal(key_id, stmt)
        if kind == EntryKind.KEY_REVOKE:
            return self._key_revoke_refusal(key_id, stmt)
        if kind == EntryKind.INVESTIGATOR_GRANT:
            return self._grant_refusal(key_id, stmt)
        if kind == EntryKind.INVESTIGATOR_REVOKE:
            return self._investigator_revoke_refusal(key_id, stmt)
        return f"{kind!r} does not change the roster"

    def _key_revoke_refusal(self, key_id: str, stmt: Mapping[str, object]) -> str | None:
        k = self.producers.get(key_id)
        if k is None:
            return f"no producer key {key_id[:16]} in the keyring"
        return _revoke_refusal(k.revoked_at, f"producer key {key_id[:16]}", stmt)

    def _investigator_revoke_refusal(self, key_id: str, stmt: Mapping[str, object]) -> str | None:
        inv = self.investigators.get(key_id)
        if inv is None:
            return f"no investigator {key_id[:16]} was granted"
        return _revoke_refusal(inv.revoked_at, f"{inv.name} ({key_id[:16]})", stmt)

    def _new_key_refusal(
        self,
        key_id: str,
        stmt: Mapping[str, object],
        old: ProducerKey | Investigator | None,
        who: str,
        present: str,
    ) -> str | None:
        """The rules every key entering the roster obeys: a revocation is final, a key is
        added once, its id is its own, its name is a signer name, it is not the custodian's."""
        if old is not None:
            if old.revoked_at is not None:
                return f"{who} was revoked at {old.revoked_at}: a revocation is final, use a new key instead"
            return f"{who} {present}"
        problem = _key_problem(key_id, stmt) or name_problem(stmt.get("name"))
        if problem:
            return problem
        if self.custodian is not None and key_id == self.custodian.key_id:
            return "the custodian's own key cannot also be a producer key or an investigator's"
        return None

    def _name_taken_by_a_person(self, name: object) -> str | None:
        """A name shown as a signer names one party: the custodian's name and an active
        investigator's are theirs alone (a producer key called 'custodian' would read as
        the custodian's signature wherever names are shown)."""
        if self.custodian is not None and name == self.custodian.name:
            return f"name {name!r} is the custodian's"
        for inv in self.investigators.values():
            if inv.active and inv.name == name:
                return f"name {name!r} is already taken by investigator {inv.key_id[:16]}"
        return None

    def _key_add_refusal(self, key_id: str, stmt: Mapping[str, object]) -> str | None:
        old = self.producers.get(key_id)
        who = f"producer key {key_id[:16]}"
        problem = self._new_key_refusal(key_id, stmt, old, who, "is already in the keyring")
        if problem:
            return problem
        if stmt.get("role") != "producer":
            return f"role {stmt.get('role')!r} is not 'producer'"
        taken = self._name_taken_by_a_person(stmt["name"])
        if taken:
            return taken
        for name in ("valid_from", "valid_until"):
            if stmt.get(name) is not None and _time_problem(stmt, name):
                return _time_problem(stmt, name)
        return _time_problem(stmt, "at")

    def _grant_refusal(self, key_id: str, stmt: Mapping[str, object]) -> str | None:
        old = self.investigators.get(key_id)
        who = f"{old.name} ({key_id[:16]})" if old is not None else ""
        problem = self._new_key_refusal(key_id, stmt, old, who, "is already granted")
        if problem:
            return problem
        x25519 = stmt.get("x25519")
        if not isinstance(x25519, str) or _b64_len(x25519) != 32:
            return "x25519 is not a base64 32-byte key"
        problem = (
            self._investigator_name_refusal(stmt["name"])
            or _scopes_problem(stmt.get("scopes"))
            or _rights_problem(stmt.get("rights", []))
        )
        if problem:
            return problem
        return _time_problem(stmt, "at")

    def _investigator_name_refusal(self, name: object) -> str | None:
        """An investigator's name is no other person's, nor an active producer key's."""
        taken = self._name_taken_by_a_person(name)
        if taken:
            return taken
        for k in self.producers.values():
            if k.revoked_at is None and k.name == name:
                return f"name {name!r} is already taken by producer key {k.key_id[:16]}"
        return None

    def fold(self, seq: int, kind: EntryKind, stmt: Mapping[str, object]) -> RosterProblem | None:
        """Apply one custodian statement of `ROSTER_KINDS` (already signature-checked)."""
        refused = self.refusal(kind, stmt)
        if refused is not None:
            return RosterProblem(seq, kind, FindingKind.ROSTER_CHANGE_REFUSED, refused)
        # refusal checked every member the kind's statement type names
        if kind == EntryKind.VAULT_INIT:
            c = cast("VaultInitStatement", stmt)["custodian"]
            self.custodian = PublicIdentity(str(c["name"]), b64d(c["ed25519"]), b64d(c["x25519"]))
        elif kind == EntryKind.KEY_ADD:
            add = cast("KeyAddStatement", stmt)
            self.producers[add["key_id"]] = ProducerKey(
                add["key_id"],
                add["name"],
                b64d(add["ed25519"]),
                add.get("valid_from"),
                add.get("valid_until"),
                None,
                seq,
            )
        elif kind == EntryKind.KEY_REVOKE:
            revoke = cast("KeyRevokeStatement", stmt)
            k = self.producers[revoke["key_id"]]
            self.producers[k.key_id] = replace(k, revoked_at=revoke["at"], revoked_seq=seq)
        elif kind == EntryKind.INVESTIGATOR_GRANT:
            grant = cast("InvestigatorGrantStatement", stmt)
            self.investigators[grant["key_id"]] = Investigator(
                grant["key_id"],
                grant["name"],
                tuple(grant["scopes"]),
                b64d(grant["ed25519"]),
                b64d(grant["x25519"]),
                grant["at"],
                None,
                seq,
                rights=tuple(grant.get("rights", [])),
            )
        elif kind == EntryKind.INVESTIGATOR_REVOKE:
            gone = cast("InvestigatorRevokeStatement", stmt)
            i = self.investigators[gone["key_id"]]
            self.investigators[i.key_id] = replace(i, revoked_at=gone["at"], revoked_seq=seq)
        self.version += 1
        return None

    # -- questions ---------------------------------------------------------------------

    def producer_keys_at(self, when: str) -> dict[str, bytes]:
        return {k.key_id: k.ed25519 for k in self.producers.values() if k.valid_at(when)}

    def statement_signers(self, kind: EntryKind) -> dict[str, bytes]:
        """Key id -> Ed25519 key of who may sign a statement of `kind` now."""
        out: dict[str, bytes] = {}
        if self.custodian is not None and (kind in CUSTODIAN_KINDS or kind in INVESTIGATOR_KINDS):
            out[self.custodian.key_id] = self.custodian.ed25519
        if kind in HOLD_KINDS:
            out.update({i.key_id: i.ed25519 for i in self.investigators.values() if self.may_hold(i)})
        elif kind in INVESTIGATOR_KINDS:
            out.update({i.key_id: i.ed25519 for i in self.investigators.values() if i.active})
        return out

    @staticmethod
    def may_hold(inv: Investigator) -> bool:
        """An active investigator granted the hold right may place and release holds."""
        return inv.active and HOLD_RIGHT in inv.rights

    def note_verifiers(self) -> list[tuple[str, bytes]]:
        """(name, Ed25519 key) pairs that may sign a checkpoint now: the custodian and
        every active investigator.  A signature is routed by name AND key id, so two
        people with one name, or one name with two keys, can never shadow each other."""
        out = [(self.custodian.name, self.custodian.ed25519)] if self.custodian else []
        out.extend((i.name, i.ed25519) for i in self.investigators.values() if i.active)
        return out

    def signer_name(self, key_id: str) -> str | None:
        """The name a key signs checkpoints under: the roster's, never a key file's name."""
        if self.custodian is not None and key_id == self.custodian.key_id:
            return self.custodian.name
        inv = self.investigators.get(key_id)
        return inv.name if inv is not None and inv.active else None

    def recipients(self, collection: str) -> dict[str, bytes]:
        """Key ids and X25519 keys of active investigators allowed to read `collection`."""
        return {
            i.key_id: i.x25519
            for i in self.investigators.values()
            if i.active and (ALL_SCOPES in i.scopes or collection in i.scopes)
        }


def _b64_len(text: str) -> int:
    try:
        return len(b64d(text))
    except ValueError:
        return -1


def _custodian_problem(stmt: Mapping[str, object]) -> str | None:
    """A vault_init names its custodian whole: a name and both 32-byte public keys."""
    c = stmt.get("custodian")
    if not isinstance(c, dict):
        return "vault_init names no custodian"
    if not isinstance(c.get("name"), str) or not c["name"]:
        return "the custodian has no name"
    for member in ("ed25519", "x25519"):
        value = c.get(member)
        if not isinstance(value, str) or _b64_len(value) != 32:
            return f"the custodian's {member} is not a base64 32-byte key"
    return None


def _key_problem(key_id: str, stmt: Mapping[str, object]) -> str | None:
    ed = stmt.get("ed25519")
    if not isinstance(ed, str) or _b64_len(ed) != 32:
        return "ed25519 is not a base64 32-byte key"
    if key_id_of(b64d(ed)) != key_id:
        return f"key_id {key_id[:16]} is not the SHA-256 of the ed25519 key"
    return None


def _time_problem(stmt: Mapping[str, object], name: str) -> str | None:
    value = stmt.get(name)
    try:
        instant(value if isinstance(value, str) else "")
    except ValueError:
        return f"{name} {value!r} is not an RFC 3339 date-time with offset"
    return None


# -- reading the roster from the log ------------------------------------------------------


def statement_problem(
    entry: LogEntry, seq: int, origin: str, root_before: bytes | None, signers: dict[str, bytes]
) -> tuple[FindingKind, str] | None:
    """(finding kind, detail) when a statement entry is not validly signed for its place.

    Shared by the roster reader here and `verify`'s log pass: a statement must be a
    DSSE envelope of `STATEMENT_TYPE` whose declared type is the entry's kind, signed
    by a key in `signers`, and bound to `origin`, `seq` and the root of the log before
    it (`root_before`; None when unknown, which fails).
    """
    try:
        env, payload, full = _unwrapped(entry)
    except (InputError, ValueError, AttributeError, TypeError) as exc:
        return FindingKind.ENTRY_MALFORMED, f"envelope unreadable: {exc}"
    if env.payload_type != STATEMENT_TYPE or not isinstance(full, dict) or full.get("type") != entry.kind:
        return FindingKind.ENTRY_KIND_MISMATCH, _kind_mismatch(entry.kind, env.payload_type, full)
    if not isinstance(payload, dict):
        return FindingKind.ENTRY_MALFORMED, "the signed statement is not a JSON object"
    try:
        verify_envelope(env, signers)
    except SignatureError as exc:
        return FindingKind.SIGNATURE_INVALID, str(exc)
    expected = None if root_before is None else place_of(origin, seq, root_before)
    if expected is None or full.get("log") != expected:
        return FindingKind.STATEMENT_OUT_OF_PLACE, _out_of_place(full.get("log"), seq, origin)
    return None


def _unwrapped(entry: LogEntry) -> tuple[Envelope, Any, Any]:
    """The entry's envelope, its statement and the whole signed payload; raises when unreadable."""
    env = entry.envelope
    if env is None:
        raise InputError("log", "$.envelope", "missing")
    payload = entry.payload_json()  # the statement, unwrapped
    full = entry.parsed_payload
    if full is None:
        full = json.loads(env.payload)
    return env, payload, full


def _kind_mismatch(kind: str, payload_type: str, full: object) -> str:
    declared = full.get("type") if isinstance(full, dict) else None
    return (
        f"entry kind {kind!r} carries a signed {payload_type!r} payload of type {declared!r}: "
        "a signed statement reused under another kind"
    )


def _out_of_place(claimed: object, seq: int, origin: str) -> str:
    if not isinstance(claimed, dict):
        return (
            f"the statement at entry {seq} names no place in the log: a signed statement must say "
            "where it belongs"
        )
    where = f"entry {claimed.get('seq')!r} of {claimed.get('origin')!r}"
    if claimed.get("origin") == origin and claimed.get("seq") == seq:
        where += " with a different history before it"
    return (
        f"the statement stored at entry {seq} was signed for {where}: "
        "a copy of a statement made elsewhere (replayed)"
    )


def load_roster(vault: Vault, leaves: Sequence[bytes] | None = None) -> tuple[Roster, list[RosterProblem]]:
    """The roster as of the whole log, and the roster entries that could not be folded.

    Only entries whose bytes hash to their stored leaf, whose custodian signature
    verifies and whose place binding matches are folded; every other roster entry is a
    problem the caller must refuse on (unlock, append) or report (verify).
    """
    rows = vault.index.roster_rows()
    if leaves is None:
        leaves = vault.leaf_hashes(rows[-1][0] if rows else 0)
    roster = Roster()
    problems: list[RosterProblem] = []
    acc = merkle.RootAccumulator()
    origin = vault.origin
    for seq, row_kind, data, stored_leaf in rows:
        while acc.size < seq and acc.size < len(leaves):
            acc.append(leaves[acc.size])
        problem = check_entry(roster, seq, row_kind, data, stored_leaf, origin, acc)
        if problem is not None:
            problems.append(problem)
    return roster, problems


def check_entry(
    roster: Roster,
    seq: int,
    row_kind: str,
    data: bytes,
    stored_leaf: bytes,
    origin: str,
    acc: merkle.RootAccumulator,
) -> RosterProblem | None:
    """Check one statement row as `load_roster` checks roster rows (leaf, kind and seq,
    signature by who may sign its kind at this point, place), folding roster kinds in.

    For readers of other statements (`store.casefile`) that must apply the roster as it
    stood at each entry: `acc` holds exactly the leaves before `seq`.
    """
    entry = _entry_of_row(seq, row_kind, data, stored_leaf)
    if isinstance(entry, RosterProblem):
        return entry
    kind = entry.entry_kind
    if seq == 0 and kind == EntryKind.VAULT_INIT:
        signers = _self_signer(entry.payload_json())
    else:  # nobody may sign a kind nobody registered
        signers = roster.statement_signers(kind) if kind is not None else {}
    root_before = acc.root() if acc.size == seq else None
    bad = statement_problem(entry, seq, origin, root_before, signers)
    if bad is not None:
        return RosterProblem(seq, entry.kind, bad[0], bad[1])
    if kind is None or kind not in ROSTER_KINDS:
        return None
    stmt = entry.payload_json()
    assert isinstance(stmt, dict)  # noqa: S101 - statement_problem checked it
    return roster.fold(seq, kind, stmt)


def _entry_of_row(seq: int, row_kind: str, data: bytes, stored_leaf: bytes) -> LogEntry | RosterProblem:
    """The entry a row holds, or why it is not the entry its row says (bytes, parse, kind, seq)."""
    if merkle.leaf_hash(data) != stored_leaf:
        return RosterProblem(seq, row_kind, FindingKind.LEAF_HASH_MISMATCH, "the entry's bytes were changed")
    try:
        entry = LogEntry.from_bytes(data)
    except ValueError as exc:
        return RosterProblem(seq, row_kind, FindingKind.ENTRY_MALFORMED, str(exc))
    if entry.kind != row_kind or entry.seq != seq:
        return RosterProblem(
            seq, row_kind, FindingKind.ENTRY_OUT_OF_PLACE, "entry kind or seq disagrees with its row"
        )
    return entry


def producer_keys(vault: Vault) -> dict[str, ProducerKey]:
    """The producer keyring as the (checked) log says."""
    return vault.rosters.folded()[0].producers


def investigators(vault: Vault) -> dict[str, Investigator]:
    """Every investigator ever granted, as the (checked) log says."""
    return vault.rosters.folded()[0].investigators


def _scopes_problem(scopes: object) -> str | None:
    """A grant names at least one scope, each a collection name or '*'."""
    if not isinstance(scopes, list) or not scopes:
        return "an investigator needs at least one scope (a collection name, or '*')"
    for scope in scopes:
        if scope_problem(scope):
            return scope_problem(scope)
    return None


def _rights_problem(rights: object) -> str | None:
    """A grant's rights are distinct and each one known."""
    if not isinstance(rights, list) or len(set(map(str, rights))) != len(rights):
        return "rights must be a list of distinct rights"
    for right in rights:
        if right not in RIGHTS:
            return f"unknown right {right!r} (known: {', '.join(sorted(RIGHTS))})"
    return None


def _revoke_refusal(revoked_at: str | None, who: str, stmt: Mapping[str, object]) -> str | None:
    """A revocation is final: a second one is refused, whoever signs it."""
    if revoked_at is not None:
        return f"{who} was already revoked at {revoked_at}"
    return _time_problem(stmt, "at")


def _self_signer(stmt: object) -> dict[str, bytes]:
    """Entry 0 is signed by the custodian key it names (none, if it names none usably)."""
    cust = stmt.get("custodian") if isinstance(stmt, dict) else None
    if not isinstance(cust, dict):
        return {}
    try:
        key = b64d(str(cust["ed25519"]))
    except (KeyError, ValueError):
        return {}
    return {key_id_of(key): key}
