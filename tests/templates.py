"""Vaults built once per process and copied per test.

Building a vault through the real API costs tenths of a second of signing, encrypting
and deriving; copying its files costs milliseconds.  A test still gets its own files
(opening a vault appends access entries, so a shared one would drift): what is shared
is only the finished template, never written after it is built.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["copy_of"]

_built: dict[str, Path] = {}
_root: list[Path] = []


def _templates() -> Path:
    if not _root:
        root = Path(tempfile.mkdtemp(prefix="tracer-test-templates-"))
        atexit.register(shutil.rmtree, root, True)
        _root.append(root)
    return _root[0]


def copy_of(name: str, build: Callable[[Path], object], dest: Path) -> None:
    """Copy the template `name` into `dest` (created if missing), building it with
    `build(directory)` (a directory that does not exist yet) the first time this process
    asks for it.  `build` must not depend on the directory it is given: every copy stands
    in for a build at `dest`."""
    src = _built.get(name)
    if src is None:
        src = _templates() / f"t{len(_built)}"
        shutil.rmtree(src, ignore_errors=True)
        build(src)
        _built[name] = src
    shutil.copytree(src, dest, dirs_exist_ok=True)
