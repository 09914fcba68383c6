"""What the app is launched with, and the one gate to the engine.

DuckDB connections must not be used by two threads at once.  Workers of different
groups (a page of answers, the state counts, verification) can run together, so every
engine call takes `Engine.use()`, which serialises them on one lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracer.engine.session import Session

__all__ = ["Engine", "LaunchOptions"]


@dataclass(frozen=True)
class LaunchOptions:
    """Pre-fills the unlock screen; with key and passphrase both given it unlocks at once."""

    vault: Path
    key: Path | None = None
    passphrase: bytes | None = None
    forensic: bool = False
    theme: str = "default"


class Engine:
    def __init__(self, session: Session):
        self.session = session
        self._lock = threading.RLock()
        #: "recorded", or the normalizer tracer-norm/1 citations are carried over to
        self.normalizer = "recorded"

    @contextmanager
    def use(self) -> Iterator[Session]:
        with self._lock:
            yield self.session

    def close(self) -> None:
        with self._lock:
            self.session.close()
