"""A tile file is read once: the bytes compared with the tree are the bytes hashed
against the signed manifest, and the files' findings still come before the tiles'."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.dataset.conftest import Exported
from tracer.engine.dataset_verify import verify_dataset


def test_an_edited_tile_is_a_file_and_a_tile_finding_in_that_order(
    exported: Exported, tmp_path: Path
) -> None:
    root = tmp_path / "ds"
    shutil.copytree(exported.dataset, root)
    for name in ("tile/0/000", "tile/entries/000"):
        path = root / name
        data = path.read_bytes()
        path.write_bytes(data[:10] + bytes([data[10] ^ 1]) + data[11:])
    found = [(str(f.kind), f.record.get("file")) for f in verify_dataset(root).findings]
    files = [found.index(("dataset_file_mismatch", n)) for n in ("tile/0/000", "tile/entries/000")]
    tiles = [found.index(("dataset_tile_mismatch", n)) for n in ("tile/0/000", "tile/entries/000")]
    assert max(files) < min(tiles), found
