"""When background work (the answers list's states and counts) may take the GIL.

The engine's work is Python: a thread computing states holds the GIL, and the UI thread
then waits for it at every turn of its event loop (each message hop, each frame), so a
key's effect waited behind a list filling up (figures in docs/benchmarks.md).  DuckDB cannot be
shared with another process while this one holds the vault open for writing, so the
work stays in threads; instead it steps aside.  A background worker calls `wait_turn`
before each small step, and it returns only while
  * no key or mouse action came in the last `QUIET` seconds,
  * the UI thread is keeping up: its heartbeat (a timer every `BEAT` seconds) is fresh,
    so a frame being drawn or a screen being built is never shared with a worker, and
  * the worker's own screen is the one on top; otherwise the worker stops, and its
    screen starts it again where it stopped when it is back on top (the counts of a
    list nobody is looking at never compete with the answer just opened).
Work the investigator asked for (an answer's trace, a timeline, verification) never
waits here: it is the response to the key.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["AWAY", "BEAT", "QUIET", "Background"]

#: seconds after an input action during which background work waits
QUIET = 0.25
#: seconds between the UI thread's heartbeats; it is behind when a beat is 3 late
BEAT = 0.02
#: a busy UI thread holds background work back at most this long per step
MAX_HOLD = 1.0
#: seconds without input after which the investigator is away from the keyboard (the
#: collector's long pass over everything, `tracer/tuning.py`)
AWAY = 30.0


class Background:
    """The gate background workers pass before each step (see the module's docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.input_at = -QUIET
        self.beat_at = clock()

    def input(self) -> None:
        """A key or mouse action arrived (called on the UI thread)."""
        self.input_at = self._clock()

    def beat(self) -> None:
        """The UI thread's heartbeat (a timer on the UI thread)."""
        self.beat_at = self._clock()

    def away(self) -> bool:
        """No key or mouse action for `AWAY` seconds."""
        return self._clock() - self.input_at >= AWAY

    def clear(self, now: float | None = None) -> bool:
        """True when no input is recent and the UI thread is keeping up."""
        t = self._clock() if now is None else now
        return t - self.input_at >= QUIET and t - self.beat_at <= 3 * BEAT

    def wait_turn(self, may_run: Callable[[], bool], stop: Callable[[], bool]) -> bool:
        """Block until background work may take a step.  False: stop here, because
        `stop()` holds or the worker's screen is not on top (`may_run()` is false); the
        screen starts it again from where it stopped once it is back on top, so no
        thread waits behind a screen nobody is looking at.

        A UI thread that stays busy holds a step back at most `MAX_HOLD` seconds, so the
        counts still finish on a screen kept busy."""
        held_since = self._clock()
        while not stop() and may_run():
            now = self._clock()
            if self.clear(now) or (now - held_since >= MAX_HOLD and now - self.input_at >= QUIET):
                return True
            time.sleep(0.01)
        return False

    def wait_for_ui(self, stop: Callable[[], bool]) -> bool:
        """For work that leaves the GIL free while it runs (a DuckDB query): wait only
        while the UI thread is behind its heartbeat (a frame or a screen being built), at
        most `MAX_HOLD`; keys do not hold it back.  False: `stop()` holds."""
        held_since = self._clock()
        while not stop():
            now = self._clock()
            if now - self.beat_at <= 3 * BEAT or now - held_since >= MAX_HOLD:
                return True
            time.sleep(0.01)
        return False
