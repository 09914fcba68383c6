"""Where signed ingest files wait for `tracer ingest-outbox`: written whole or not at all.

A file is written under a temporary dot-name in the outbox itself, flushed and fsynced,
then linked to its final name (which fails, rather than replaces, if that name exists)
and the directory is fsynced. A crash at any point leaves either no file or the whole
file under its final name, plus at worst a `.tmp-*` file that readers ignore.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from store.crypto import sha256_hex
from tracer.producer.errors import RecordError

__all__ = ["TEMP_PREFIX", "Outbox", "file_stem", "write_atomically"]

TEMP_PREFIX = ".tmp-"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(*parts: str) -> str:
    """A portable file-name stem for ids of any shape: readable part plus a digest."""
    readable = _UNSAFE.sub("_", "-".join(parts)).strip("._-")[:80] or "x"
    return f"{readable}-{sha256_hex(chr(0).join(parts).encode('utf-8'))[:12]}"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes, *, replace: bool = False) -> None:
    """`data` at `path`, durable, never half-written; an existing file raises unless `replace`."""
    tmp = path.with_name(f"{TEMP_PREFIX}{secrets.token_hex(8)}-{path.name}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails with FileExistsError: never replaces a file
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _fsync_dir(path.parent)


def encode(value: Any) -> bytes:
    """The bytes of an ingest file (the layout `tracer pack` writes)."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class Outbox:
    """A directory of finished ingest files."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordError(f"{self.directory}: cannot create the outbox ({exc.strerror})") from exc

    def __repr__(self) -> str:
        return f"Outbox({str(self.directory)!r})"

    def write(self, stem: str, value: Any) -> Path:
        """Write `stem`.json; a name already taken is an error (an id used twice)."""
        path = self.directory / f"{stem}.json"
        try:
            write_atomically(path, encode(value))
        except FileExistsError as exc:
            raise RecordError(f"{path}: already in the outbox (was this id recorded twice?)") from exc
        return path

    def write_once(self, stem: str, value: Any) -> Path:
        """Like `write`, but an identical file already there is fine (idempotent)."""
        path = self.directory / f"{stem}.json"
        data = encode(value)
        try:
            write_atomically(path, data)
        except FileExistsError as exc:
            if path.read_bytes() != data:
                raise RecordError(f"{path}: a different file of this name is already in the outbox") from exc
        return path
