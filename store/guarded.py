"""Entries that must never be hidden, and the commitment every checkpoint signs over them.

A revocation, a tombstone or a legal hold protects evidence only while it is seen.  The
log's `kind` column and the derived views are outside the Merkle tree, so someone who
can write the file could relabel such an entry (or rewrite its bytes and keep the stored
leaf hash) and the readers that select it by kind would pass it by.  Every checkpoint
therefore carries one extension line (C2SP tlog-checkpoint allows them; other verifiers
ignore it):

    tracer-guarded <hex SHA-256 over "seq:leafhex\\n" of every guarded entry, in seq order>

A guarded entry is one whose *bytes* say a guarded kind (canonical entries end
`"kind":"K","seq":N}`).  The writer computes the commitment from the rows it verified and
signs it; unlock and every append recompute it and refuse a mismatch, and `verify`
checks it at every checkpoint.  So hiding, adding or rewriting a guarded entry changes
what a signed checkpoint commits to.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from store.entries import HOLD_KINDS, ROSTER_KINDS, EntryKind, entry_kind

__all__ = [
    "EXTENSION",
    "GUARDED_KINDS",
    "commitment",
    "extension_line",
    "guarded_kind",
    "signed_commitment",
]

GUARDED_KINDS = ROSTER_KINDS | HOLD_KINDS | {EntryKind.TOMBSTONE}
EXTENSION = "tracer-guarded"
_TAIL = re.compile(rb'"kind":"([a-z_]+)","seq":[0-9]+\}\Z')


def guarded_kind(data: bytes) -> EntryKind | None:
    """The kind the entry's own (canonical) bytes say, when it is a guarded kind."""
    m = _TAIL.search(data[-96:])
    kind = entry_kind(m.group(1).decode("ascii")) if m else None
    return kind if kind in GUARDED_KINDS else None


def commitment(pairs: Iterable[tuple[int, bytes]]) -> str:
    """SHA-256 over `seq:leafhex\\n` of the guarded entries, in seq order."""
    h = hashlib.sha256()
    for seq, leaf in pairs:
        h.update(b"%d:%s\n" % (seq, leaf.hex().encode("ascii")))
    return h.hexdigest()


def extension_line(pairs: Iterable[tuple[int, bytes]]) -> str:
    return f"{EXTENSION} {commitment(pairs)}"


def extension_value(extensions: Iterable[str], wanted: str) -> str | None:
    """The value of a checkpoint's `wanted NAME VALUE` extension line, if it has one."""
    for ext in extensions:
        name, _, value = ext.partition(" ")
        if name == wanted:
            return value
    return None


def signed_commitment(extensions: Iterable[str]) -> str | None:
    """The commitment a checkpoint's extension lines carry, if any."""
    return extension_value(extensions, EXTENSION)
