"""Fixtures of the store tests: one ingest worker pool shared by a module's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from store.ingestpool import IngestPool


@pytest.fixture(scope="module")
def ingest_pool() -> Iterator[IngestPool]:
    """One spawned ingest worker for a module: a worker's start (an interpreter and
    `store.ingestprep`'s imports) costs far more than the files each test hands it."""
    pool = IngestPool(1)
    try:
        yield pool
    finally:
        pool.close()
