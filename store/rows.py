"""The rows the store's tables hand out, by name.

Log entries, stored texts and tombstones are read across the store, the engine and the
CLI; a positional tuple there is an interface nobody wrote down.  Rows a pass reads by
the million (log entries, blob rows) are named tuples: constructed and unpacked as
cheaply as a tuple, read by field name.  The rest are frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["BlobRow", "DataKeyRow", "EntryRow", "StoredBlob", "TombstoneRow"]


class EntryRow(NamedTuple):
    """One row of `log`: its seq, the (unsigned, editable) kind column, the entry's bytes
    and the leaf hash stored beside them; whoever decides reads the bytes."""

    seq: int
    kind: str
    entry: bytes
    leaf_hash: bytes


class BlobRow(NamedTuple):
    """One stored copy of a text: encrypted for `collection` under data key `dk_id`."""

    collection: str
    dk_id: str
    nonce: bytes
    ct: bytes


class StoredBlob(NamedTuple):
    """A `BlobRow` with the digest it is stored under (a pass over the whole store)."""

    digest: str
    collection: str
    dk_id: str
    nonce: bytes
    ct: bytes


@dataclass(frozen=True, slots=True)
class DataKeyRow:
    """A collection's data key wrapped to one recipient (its JSON as stored)."""

    dk_id: str
    collection: str
    generation: int
    wrapped: str


@dataclass(frozen=True, slots=True)
class TombstoneRow:
    """The first tombstone of a digest, as its signed statement says."""

    seq: int
    digest: str
    policy: str
    reason: str
    authorizer: str
    effective_at: str
