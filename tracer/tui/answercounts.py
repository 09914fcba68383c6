"""The answers list's per-state counts: one worker walks every answer of the listing in
small steps, posts how far it got at most every quarter second, and stops where it is
when another screen comes on top, to go on from there when the list is back.

`AnswerCounts` owns whether this listing's counts were started and where they paused;
the worker runs on the screen (Textual runs workers on a DOM node) and the screen draws
what it posts.  Its steps are `AnswerStates.count_pages`, which step aside for a page
being filled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from tracer.tui.answerstates import AnswerStates, Counting
from tracer.tui.filtering import ListFilter

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.worker import Worker

    from tracer.tui.context import Engine

__all__ = ["AnswerCounts", "Tally"]


@dataclass(frozen=True)
class Tally:
    """The counts of one listing so far (`done` of `total` answers counted)."""

    generation: int
    total: int
    done: int
    integrity: Counter[str]
    currency: Counter[str]


class AnswerCounts:
    """The counts of the listing whose generation `current()` is.  `turn(generation,
    worker)` is background work's turn (False: stop here); `post` takes a tally to draw,
    `failed` an error to show."""

    def __init__(
        self,
        node: DOMNode,
        states: AnswerStates,
        engine: Callable[[], Engine],
        current: Callable[[], int],
        turn: Callable[[int, Worker[None]], bool],
        post: Callable[[Tally], object],
        failed: Callable[[str], object],
    ) -> None:
        self._node = node
        self._states = states
        self._engine = engine
        self._current = current
        self._turn = turn
        self._post = post
        self._failed = failed
        self._started = False
        #: where the counts stopped when another screen came on top
        self._paused: Counting | None = None

    def reset(self) -> None:
        """A new listing: not started (it starts with the first page), nothing paused."""
        self._started, self._paused = False, None

    def begin(self) -> bool:
        """True once per listing: the caller starts the counts then."""
        if self._started:
            return False
        self._started = True
        return True

    def start(self, p: Counting, f: ListFilter) -> None:
        self._node.run_worker(lambda: self._count(p, f), thread=True, exclusive=True, group="answers-counts")

    def resume(self, f: ListFilter) -> None:
        """Back on top: go on from where the counts stopped, if this listing's."""
        p, self._paused = self._paused, None
        if p is not None and p.generation == self._current():
            self.start(p, f)

    def _count(self, p: Counting, f: ListFilter) -> None:
        """Count every answer's states in small steps; stopped while another screen is on
        top, with where it was kept in `p` for `resume`."""
        from store import queries

        generation = p.generation
        worker = get_current_worker()
        try:
            if p.total is None:
                with self._engine().use() as s:
                    p.total = queries.answer_count(s.vault, f.where)
            finished = self._count_pages(p, f, worker)
        except Exception as exc:  # shown to the investigator instead of crashing the app
            self._failed(str(exc))
            return
        if finished and generation == self._current() and not worker.is_cancelled:
            self._post(Tally(generation, p.total, p.total, p.integrity, p.currency))

    def _count_pages(self, p: Counting, f: ListFilter, worker: Worker[None]) -> bool:
        """The counts' pages of rows, each in steps; False when it stopped on the way
        (another screen on top: where it was is kept for `resume`)."""
        generation = p.generation

        def progress(c: Counting) -> None:
            self._post(Tally(generation, c.total or 0, c.done, c.integrity.copy(), c.currency.copy()))

        finished = self._states.count_pages(p, f, worker, lambda: self._turn(generation, worker), progress)
        if not finished and generation == self._current() and not worker.is_cancelled:
            self._paused = p
        return finished
