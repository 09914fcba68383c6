"""The unlock of `tracer open` with key and passphrase, in a thread of its own.

The app's first frame is drawn before anything imports DuckDB or pyarrow (the app's
modules import the store only inside the functions that read it); the unlock starts
right after that frame, and its imports and queries then overlap the UI waiting for
rows.  Started earlier, its imports competed with Textual's for the GIL and delayed
both the first frame and the rows (`bench/open.py`; the figures are in
`docs/benchmarks.md`, "Docstring figures").  Nothing is shown from the vault before the
unlock (and so its access entry) has completed: the answers screen asks for rows only
once `Opening.result` has returned a session.

This module must stay light: it is imported before Textual and before the store.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

from tracer.tui.context import LaunchOptions

if TYPE_CHECKING:
    from tracer.engine.session import Session
    from tracer.tui.app import TracerApp

__all__ = ["Opening", "build_app"]

#: one process may not hold a read-only and a read-write DuckDB handle of a vault at once
OPEN_LOCK = threading.Lock()


class Opening:
    """`unlock` running in its own thread; its outcome is a `Future`."""

    def __init__(self, options: LaunchOptions):
        if options.key is None or options.passphrase is None:
            raise ValueError("an opening needs both the key file and the passphrase")
        self.options = options
        self.future: Future[Session] = Future()
        self._thread = threading.Thread(target=self._run, name="tracer-unlock", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        o = self.options
        try:
            from store.crypto import load_identity
            from tracer.engine.session import unlock

            assert o.key is not None and o.passphrase is not None  # noqa: S101 - checked in __init__
            identity = load_identity(o.key, o.passphrase)
            with OPEN_LOCK:
                session = unlock(o.vault, identity, forensic=o.forensic)
        except BaseException as exc:  # handed to whoever waits on the future
            self.future.set_exception(exc)
            return
        self.future.set_result(session)

    def discard(self) -> None:
        """Leaving before the unlock ended: let it finish its append, then close the vault."""
        self._thread.join(timeout=30)
        if self.future.done() and self.future.exception() is None:
            self.future.result().close()


def build_app(options: LaunchOptions) -> TracerApp:
    """The app `tracer open` runs: with key and passphrase, it unlocks after its first frame."""
    _start_resource_tracker()
    from tracer.tui.app import TracerApp  # light: the store and DuckDB load after the first frame

    return TracerApp(options, None)


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker while stderr is still the terminal's.

    Verification of a large log uses worker processes; their first queue starts the
    tracker, which passes on `sys.stderr.fileno()`, and inside the running app stderr is
    Textual's capture, which has no file descriptor (`fork_exec` refuses it).  Started
    here, before the app runs, the tracker is already there when verify needs it.
    Should it fail, verify checks everything in this process instead.
    """
    try:
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    except (OSError, ValueError):
        pass
