"""What the app is launched with, and the one gate to the engine.

DuckDB connections must not be used by two threads at once.  Workers of different
groups (a page of answers, the state counts, verification) can run together, so every
engine call takes `Engine.use()`, which serialises them on one lock.

One `Tracer` serves the session (`Engine.tracer`): what the list computed for a page
(manifests read and checked, texts decrypted, revisions normalized) is what opening one
of its answers needs, and a second open of the same answer finds it all cached.  Within
a session the only appends are this app's own (access entries, notes, tags, holds,
cases), none of which a trace's states depend on; notes are read afresh by every trace.
"Recompute states now" and a change of normalizer start a new one (`Engine.fresh`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracer.engine.session import Session
    from tracer.engine.trace import Tracer

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
        self._tracer: Tracer | None = None
        self._tracer_under = ""
        #: how many times `fresh` was called: a worker's listing knows its own tracer
        self.generation = 0
        #: held while `check_views_aside` hashes on a cursor of its own (outside `_lock`)
        self._aside = threading.Lock()
        self._closing = False

    def tracer(self, session: Session) -> Tracer:
        """The session's Tracer under the normalizer in use; call with `use()` held."""
        t = self._tracer
        if t is None or self._tracer_under != self.normalizer:
            from tracer.engine.trace import Tracer

            t = self._tracer = Tracer(session, self.normalizer)
            self._tracer_under = self.normalizer
        return t

    def fresh(self) -> None:
        """Drop what was computed: the next `tracer()` starts from the vault again."""
        with self._lock:
            self._tracer = None
            self.generation += 1

    @contextmanager
    def use(self) -> Iterator[Session]:
        with self._lock:
            yield self.session

    def check_views_aside(self, between: Callable[[], bool]) -> list[str]:
        """Check the per-answer derived tables against the signed commitment now, in the
        calling (background) thread, hashing outside the lock and calling `between()`
        before each group, so the first timeline or impact does not pay for it
        (`ViewGuard.check_aside`); what this leaves unchecked `require` checks when read."""
        from store.viewcommit import ON_FIRST_USE

        with self._aside:
            if self._closing:
                return []
            return self.session.vault.views.check_aside(
                ON_FIRST_USE, self.use, lambda: not self._closing and between()
            )

    def close(self) -> None:
        self._closing = True
        with self._aside:  # its cursor's query ends before the connection closes
            pass
        with self._lock:
            self.session.close()
