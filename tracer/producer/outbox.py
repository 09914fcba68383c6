"""Where signed ingest files wait for `tracer ingest-outbox`: written whole or not at all.

A file is written under a temporary dot-name in the outbox itself, flushed and fsynced,
then linked to its final name (which fails, rather than replaces, if that name exists)
and the directory is fsynced. A crash at any point leaves either no file or the whole
file under its final name, plus at worst a `.tmp-*` file that readers ignore and that
is removed once it is older than `TEMP_MAX_AGE` (by the next `Outbox` opened on the
directory, and by every `tracer ingest-outbox` pass).

**Batch mode** (`Outbox(directory, batch=N)`) is for services recording many answers a
second: a manifest is written to its `.tmp-*` name without an fsync, and every `N`
manifests (or when the oldest waiting one is `batch_seconds` old, at `flush()`, and at
interpreter exit) one `os.sync()` makes them all durable, each is linked to its final
name, and the directory is fsynced once. Still whole files or none: a name appears only
after the bytes under it are durable. The trade: until its batch is flushed a manifest
is neither visible to ingest nor safe from a crash — a killed process loses the
answers of its unflushed batch (their `.tmp-*` files are removed an hour later).

`tracer ingest-outbox` moves what it ingested to `ingested/` and what the vault refused
to `rejected/`; an answer id found in either is taken, and recording it again is an
error at `start`, not a refusal at ingest.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import math
import os
import re
import secrets
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from store.crypto import sha256_hex
from tracer.producer.errors import RecordError

__all__ = [
    "INGESTED",
    "REJECTED",
    "TEMP_MAX_AGE",
    "TEMP_PREFIX",
    "Outbox",
    "file_stem",
    "remove_stale_temporaries",
    "write_atomically",
]

TEMP_PREFIX = ".tmp-"
#: seconds after which a `.tmp-*` file is a crashed writer's leftover, not a write in progress
TEMP_MAX_AGE = 3600.0
#: where `tracer ingest-outbox` moves the files it ingested, and the ones the vault refused
INGESTED = "ingested"
REJECTED = "rejected"
#: the kinds of record file whose names carry an answer id
RECORD_KINDS = ("answer", "note")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@functools.lru_cache(maxsize=4096)
def file_stem(*parts: str) -> str:
    """A portable file-name stem for ids of any shape: readable part plus a digest
    (memoized: a record's id is named at `start` and again at `close`)."""
    readable = _UNSAFE.sub("_", "-".join(parts)).strip("._-")[:80] or "x"
    return f"{readable}-{sha256_hex(chr(0).join(parts).encode('utf-8'))[:12]}"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temporary(path: Path, data: bytes, *, durable: bool) -> Path:
    """`data` in a fresh `.tmp-*` file beside `path` (fsynced if `durable`)."""
    tmp = path.with_name(f"{TEMP_PREFIX}{secrets.token_hex(8)}-{path.name}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:  # os.write may write less than asked
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return tmp


def write_atomically(path: Path, data: bytes, *, replace: bool = False) -> None:
    """`data` at `path`, durable, never half-written; an existing file raises unless `replace`."""
    tmp = _write_temporary(path, data, durable=True)
    try:
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails with FileExistsError: never replaces a file
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _fsync_dir(path.parent)


def remove_stale_temporaries(directory: Path, max_age: float = TEMP_MAX_AGE) -> list[str]:
    """Remove the `.tmp-*` files in `directory` not written to for `max_age` seconds.

    A write takes well under a second, so such a file is what a writer killed mid-write
    left behind (readers ignore it; this only keeps the outbox from filling up). Returns
    the names removed; a file that vanishes meanwhile is simply skipped.
    """
    removed: list[str] = []
    cutoff = time.time() - max_age
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(TEMP_PREFIX):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue
    return removed


def encode(value: Any) -> bytes:
    """The bytes of an ingest file (the layout `tracer pack` writes)."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


#: an answer's file on one line: json's C encoder (an indent makes json use its
#: pure-Python one); only revision files are compared byte for byte (`write_once`)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode_compact(value: Any) -> bytes:
    """The bytes of an answer's ingest file: the same JSON as `encode`, on one line."""
    return (_COMPACT(value) + "\n").encode("utf-8")


class Outbox:
    """A directory of finished ingest files; `batch` > 1 syncs once per batch (above)."""

    def __init__(
        self, directory: str | os.PathLike[str], *, batch: int = 1, batch_seconds: float = 1.0
    ) -> None:
        if type(batch) is not int or batch < 1:  # a bool is not a size
            raise RecordError(f"batch: expected an integer ≥ 1, got {batch!r}")
        if type(batch_seconds) not in (int, float) or not 0 < batch_seconds < math.inf:
            raise RecordError(f"batch_seconds: expected a number > 0, got {batch_seconds!r}")
        self.directory = Path(directory)
        self.batch = batch
        self.batch_seconds = float(batch_seconds)
        self._pending: list[tuple[Path, Path]] = []
        #: the final names of `_pending`, so a look-up does not walk the batch
        self._pending_names: set[str] = set()
        #: the folders a taken name is looked for in, as strings (no `Path` per look-up)
        self._folders = tuple(
            os.path.join(self.directory, sub) if sub else str(self.directory)
            for sub in ("", INGESTED, REJECTED)
        )
        self._oldest = 0.0
        self._lock = threading.Lock()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordError(f"{self.directory}: cannot create the outbox ({exc.strerror})") from exc
        remove_stale_temporaries(self.directory)
        if batch > 1:
            ref = weakref.ref(self)
            atexit.register(lambda: (box := ref()) is not None and box.flush())

    def __repr__(self) -> str:
        return f"Outbox({str(self.directory)!r})"

    def _taken(self, name: str) -> Path | None:
        """Where a file of this name already is: the outbox (or its unflushed batch),
        `ingested/` or `rejected/`."""
        for folder in self._folders:
            path = os.path.join(folder, name)
            if os.path.exists(path):
                return Path(path)
        with self._lock:
            if name in self._pending_names:
                return self.directory / name
        return None

    def check_answer_id(self, answer_id: str) -> None:
        """Refuse an answer id already recorded here: waiting, ingested or rejected."""
        stem = file_stem(answer_id)
        for kind in RECORD_KINDS:
            found = self._taken(f"{kind}-{stem}.json")
            if found is not None:
                raise RecordError(_used_message(answer_id, found))

    def write(self, stem: str, value: Any) -> Path:
        """Write `stem`.json; a name already taken is an error (an id used twice). In
        batch mode the file is under its name once its batch is flushed."""
        path = self.directory / f"{stem}.json"
        found = self._taken(path.name)
        if found is not None and (found != path or self.batch > 1):
            raise RecordError(f"{path.name}: {_used_message(stem, found)}")
        data = encode_compact(value)
        if self.batch > 1:
            tmp = _write_temporary(path, data, durable=False)
            with self._lock:
                if not self._pending:
                    self._oldest = time.monotonic()
                self._pending.append((tmp, path))
                self._pending_names.add(path.name)
                due = (
                    len(self._pending) >= self.batch or time.monotonic() - self._oldest >= self.batch_seconds
                )
            if due:
                self.flush()
            return path
        try:
            write_atomically(path, data)
        except FileExistsError as exc:
            raise RecordError(f"{path}: already in the outbox (was this id recorded twice?)") from exc
        return path

    def flush(self) -> list[Path]:
        """Make the waiting batch durable and visible: one sync, then each file linked to
        its name, then one directory fsync. Returns the paths made visible."""
        with self._lock:
            pending, self._pending = self._pending, []
            if not pending:
                return []
            self._pending_names = set()
            os.sync()
            done: list[Path] = []
            clash: list[str] = []
            for tmp, final in pending:
                try:
                    os.link(tmp, final)
                    done.append(final)
                except FileExistsError:
                    clash.append(final.name)
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)
            _fsync_dir(self.directory)
        if clash:
            raise RecordError(f"{', '.join(clash)}: already in the outbox (was an id recorded twice?)")
        return done

    def write_once(self, stem: str, value: Any) -> Path:
        """Write `stem`.json once: an identical file already here, in `ingested/` or in
        `rejected/` is not written again (its path is returned); a different one is an
        error that says which member differs."""
        path = self.directory / f"{stem}.json"
        data = encode(value)
        found = self._taken(path.name)
        if found is None:
            try:
                write_atomically(path, data)
                return path
            except FileExistsError:
                found = path
        try:
            old = found.read_bytes()
        except OSError as exc:
            raise RecordError(f"{found}: cannot read the file already written ({exc.strerror})") from exc
        if old != data:
            raise RecordError(f"{found}: {_differs(old, value)}")
        if found.parent.name == REJECTED:
            raise RecordError(
                f"{found}: this file was written before and the vault refused it (reason beside it); "
                "remove it and its .reason.txt to write it again"
            )
        return found


def _differs(old: bytes, new: Any) -> str:
    """Why a file already written is not the one asked for: for a source revision, a
    reused revision id with other text says to bump the revision."""
    try:
        before = json.loads(old)
    except ValueError:
        before = None
    if not isinstance(before, dict) or not isinstance(new, dict):
        return "a different file of this name is already in the outbox"
    if before.get("schema") == new.get("schema") == "tracer.source_revision/v1":
        what = f"revision {new.get('revision')!r} of {new.get('document_id')!r}"
        if before.get("content") != new.get("content"):
            digest = sha256_hex(str(before.get("content")).encode("utf-8"))
            return (
                f"{what} was already written with other content (sha256 {digest[:16]}…); a revision "
                "id names one text: bump the revision (a new revision id) for the changed document"
            )
        members = sorted(k for k in set(before) | set(new) if before.get(k) != new.get(k))
        return f"{what} was already written with other {', '.join(members)}; bump the revision"
    return "a different file of this name is already in the outbox"


def _used_message(what: str, found: Path) -> str:
    folder = found.parent.name
    if folder == INGESTED:
        return f"{what!r} was already recorded and ingested ({found}); an answer id is used once"
    if folder == REJECTED:
        return (
            f"{what!r} was already recorded and the vault refused it ({found}); remove that file "
            "and its .reason.txt to record this id again"
        )
    return f"{what!r} is already in the outbox ({found}); was this id recorded twice?"
