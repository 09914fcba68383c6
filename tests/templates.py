"""Vaults built once per process and copied per test.

Building a vault through the real API costs tenths of a second of signing, encrypting
and deriving; copying its files costs milliseconds.  A test still gets its own files
(opening a vault appends access entries, so a shared one would drift): what is shared
is only the finished template, never written after it is built.
"""

from __future__ import annotations

import atexit
import itertools
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["copy_of", "scratch"]

_built: dict[str, Path] = {}
_root: list[Path] = []
_numbers = itertools.count()


def _templates() -> Path:
    if not _root:
        root = Path(tempfile.mkdtemp(prefix="tracer-test-templates-"))
        atexit.register(shutil.rmtree, root, True)
        _root.append(root)
    return _root[0]


def copy_of(name: str, build: Callable[[Path], object], dest: Path) -> Path:
    """Copy the template `name` into `dest` (created if missing), building it with
    `build(directory)` (a directory that does not exist yet) the first time this process
    asks for it.  `build` must not depend on the directory it is given: every copy stands
    in for a build at `dest`.  Returns where the template is (never to be written)."""
    src = _built.get(name)
    if src is None:
        # a build may itself copy another template (a pack is exported from a vault): the
        # name is unique before `build` runs, whatever it adds to `_built`
        src = _templates() / f"t{next(_numbers)}"
        shutil.rmtree(src, ignore_errors=True)
        build(src)
        _built[name] = src
    shutil.copytree(src, dest, dirs_exist_ok=True)
    return src


def scratch() -> Path:
    """A new, empty directory beside the templates, removed with them: where a build puts
    what it needs on the way (a vault a template pack is exported from, a home)."""
    return Path(tempfile.mkdtemp(dir=_templates()))
