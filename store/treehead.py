"""The log's Merkle tree as this process knows it, and the signed checkpoints over it.

Tree integration and checkpoint publishing are kept apart from storage (as transparency
logs such as tessera do): this object owns the running accumulator and the (size, root)
a valid checkpoint was last seen or signed to cover, decides whether the log may be
signed over, and writes checkpoint rows. `Vault.batch` asks it before and after each
append.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store import merkle
from store.crypto import Identity
from store.errors import AccessDeniedError, InputError, SignatureError, VaultDamagedError, VaultError
from store.guarded import commitment, extension_line, signed_commitment
from store.note import Checkpoint, open_note
from store.vaultfile import one
from store.viewcommit import extension_line as views_line

if TYPE_CHECKING:
    from store.vault import Vault

__all__ = ["TreeHead"]


class TreeHead:
    """The accumulator over the stored leaves and what a signed checkpoint covers."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._acc: merkle.RootAccumulator | None = None
        #: the (size, root) a valid checkpoint covers, as this process last checked or
        #: signed it; DuckDB's lock keeps other writers out meanwhile
        self._covered: tuple[int, bytes] | None = None

    def reset(self) -> None:
        """Forget the tree: a batch failed or the recovery cut the log back."""
        self._acc = None
        self._covered = None

    def committed(self, acc: merkle.RootAccumulator) -> None:
        """A batch committed the tree `acc` with a checkpoint this process signed."""
        self._acc = acc
        self._covered = (acc.size, acc.root())

    @property
    def cached(self) -> merkle.RootAccumulator | None:
        """The accumulator, if this process has built or adopted one."""
        return self._acc

    def adopt(self, acc: merkle.RootAccumulator) -> None:
        """Start appends from a tree the caller has just built from this vault's stored
        leaf hashes (`Vault.leaf_hashes`), so the first append does not hash the log again.
        Ignored unless it covers the whole log and the log is dense, which is what
        `accumulator` would check."""
        if self._acc is not None or self._vault.read_only:
            return
        row = self._vault.con.execute("SELECT count(*), coalesce(max(seq), -1) FROM log").fetchall()[0]
        if int(row[0]) == acc.size == int(row[1]) + 1:
            self._acc = acc.copy()

    def covered_head(self) -> tuple[int, bytes] | None:
        """(size, root) of the log as a valid checkpoint covers it, once this process has
        checked that (before its first append) or signed it (after each append)."""
        return self._covered

    def accumulator(self) -> merkle.RootAccumulator:
        """The tree over every stored leaf, built once; refuses a log with holes."""
        if self._acc is None:
            leaves = self._vault.leaf_hashes()
            top = int(self._vault.con.execute("SELECT coalesce(max(seq), -1) FROM log").fetchall()[0][0])
            if top + 1 != len(leaves):
                raise VaultDamagedError(
                    f"{self._vault.path}: the log has {len(leaves)} entries but its last is {top}: "
                    "entries are missing; refusing to append (run `tracer verify`)"
                )
            acc = merkle.RootAccumulator()
            for leaf in leaves:
                acc.append(leaf)
            self._acc = acc
        return self._acc

    def covering_checkpoint(self, size: int, root: bytes) -> Checkpoint | None:
        """A checkpoint row of exactly `size` entries, signed by a (name, key) pair the
        roster allows, whose origin and root are this log's; None when there is none."""
        vault = self._vault
        verifiers = vault.roster().note_verifiers()
        guard = commitment(vault.index.guarded_pairs())
        rows = vault.con.execute("SELECT note FROM checkpoints WHERE size = ? ORDER BY id DESC", [size])
        for (note,) in rows.fetchall():
            try:
                cp = Checkpoint.parse(open_note(str(note), verifiers)[0])
            except (SignatureError, InputError, ValueError):
                continue
            if (
                cp.origin == vault.origin
                and cp.size == size
                and cp.root == root
                and signed_commitment(cp.extensions) == guard
            ):
                return cp
        return None

    def signed_size_above(self, size: int) -> int | None:
        """The size of a validly signed checkpoint of this origin larger than `size`, if any
        (rows nobody could have signed are passed by: they lock nobody out)."""
        vault = self._vault
        verifiers = vault.roster().note_verifiers()
        rows = vault.con.execute(
            "SELECT size, note FROM checkpoints WHERE size > ? ORDER BY size DESC", [size]
        ).fetchall()
        for row_size, note in rows:
            try:
                cp = Checkpoint.parse(open_note(str(note), verifiers)[0])
            except (SignatureError, InputError, ValueError):
                continue
            if cp.origin == vault.origin and cp.size == int(row_size):
                return cp.size
        return None

    def require_covered(self, acc: merkle.RootAccumulator) -> None:
        """Never sign a checkpoint over entries no valid checkpoint covers.

        The entries an honest writer appends are covered by the checkpoint it signs in
        the same transaction, so an uncovered tail was written by someone without a key.
        """
        here = (acc.size, acc.root())
        if self._covered == here:
            return
        path = self._vault.path
        longer = self.signed_size_above(acc.size)
        if longer is not None:
            raise VaultDamagedError(
                f"{path}: log_truncated: a signed checkpoint covers {longer} entries but the log "
                f"holds {acc.size}: entries were removed; refusing to sign over the shorter log"
            )
        if self.covering_checkpoint(*here) is None:
            raise VaultDamagedError(
                f"{path}: entry_not_checkpointed: no valid signed checkpoint covers the log's "
                f"{acc.size} entries, so they were not all appended by a key holder; refusing to sign "
                "over them (run `tracer verify` to pin the uncovered entries)"
            )
        self._covered = here

    def publish(
        self, signer: Identity, name: str, acc: merkle.RootAccumulator, lines: tuple[str, ...]
    ) -> None:
        """Sign a checkpoint over `acc` under `name` and add its row, in the caller's
        transaction."""
        vault = self._vault
        note = Checkpoint(vault.origin, acc.size, acc.root(), lines).sign_as(signer, name)
        cid = one(vault.con.execute("SELECT coalesce(max(id), -1) + 1 FROM checkpoints"))
        vault.con.execute(
            "INSERT INTO checkpoints VALUES (?, ?, ?, ?)",
            [int(cid[0]) if cid else 0, acc.size, signer.key_id, note],
        )

    def cover_checked_tail(self, custodian: Identity, size: int, root: bytes) -> int:
        """Sign, as the custodian, a checkpoint over a log whose tail no checkpoint covers,
        once the caller has checked every entry of it (`tracer checkpoint --cover-checked-tail`
        re-signs only a tail this machine remembers signing). `size` and `root` are the
        tree that was checked: anything appended since is refused.

        For a log whose last checkpoint row was deleted: its newest entries are then
        uncovered although each is a validly signed, correctly placed statement, and
        without this every open is refused for good."""
        vault = self._vault
        if vault.read_only:
            raise VaultError(f"{vault.path}: vault is open read-only")
        if custodian.public.ed25519 != vault.custodian.ed25519:
            raise AccessDeniedError(f"{vault.path}: only the custodian may cover a checked tail")
        acc = self.accumulator()
        if (acc.size, acc.root()) != (size, root):
            raise VaultError(f"{vault.path}: the log changed since it was checked; check it again")
        if self.covering_checkpoint(size, root) is not None:
            raise VaultError(f"{vault.path}: a valid checkpoint already covers all {size} entries")
        # no signed commitment covers the tail's view rows: derive them all from the log
        views = vault.views.before_append(size)
        lines = (extension_line(vault.index.guarded_pairs()), views_line(views))
        vault.con.execute("BEGIN TRANSACTION")
        try:
            self.publish(custodian, vault.custodian.name, acc, lines)
            vault.con.execute("COMMIT")
        except BaseException:
            vault.con.execute("ROLLBACK")
            raise
        self._covered = (size, root)
        return size
