"""The log's entries read in place: the same bytes and leaves as one `bytes` an entry."""

from __future__ import annotations

import pyarrow as pa
import pytest

from store.dataset import EntryChunk
from store.merkle import leaf_hash

VALUES = [b"first", None, b"", b"\x00\xffthird", b"x" * 300]


@pytest.mark.parametrize("kind", [pa.binary(), pa.large_binary(), pa.binary_view()])
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_entries_in_place_are_the_copies(kind: pa.DataType, offset: int) -> None:
    chunk = pa.array(VALUES, pa.binary()).cast(kind).slice(offset)
    views = EntryChunk.of(chunk).views()
    want = [bytes(e or b"") for e in chunk.to_pylist()]
    assert [bytes(v) for v in views] == want
    assert [leaf_hash(v) for v in views] == [leaf_hash(e) for e in want]


def test_a_null_with_bytes_behind_it_is_empty() -> None:
    """Arrow lets a null slot span bytes; the entry is empty all the same."""
    base = pa.array([b"abc", b"def"], pa.binary())
    validity = pa.py_buffer(bytes([0b01]))
    chunk = pa.Array.from_buffers(pa.binary(), 2, [validity, *base.buffers()[1:]])
    assert chunk.to_pylist() == [b"abc", None]
    assert [bytes(v) for v in EntryChunk.of(chunk).views()] == [b"abc", b""]
