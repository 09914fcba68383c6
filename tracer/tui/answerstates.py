"""The answer list's engine side: rows by keyset, states a few answers per hold of the
engine lock, and the running per-state counts.

Everything here runs on worker threads and touches no widget; `AnswersScreen` owns the
workers (Textual runs them on a DOM node) and draws what they post.  `AnswerStates`
owns the one piece of shared state, how many page fills are running, because the
counts step aside while a visible page is being filled.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tracer.tui.filtering import ListFilter

if TYPE_CHECKING:
    from textual.worker import Worker

    from store.queries import AnswerRow
    from tracer.engine.evidence import TextResult
    from tracer.engine.session import Session
    from tracer.engine.trace import Summary, Tracer
    from tracer.tui.context import Engine

__all__ = ["COUNT_PAGE", "COUNT_STEP", "FILL_STEP", "PAGE", "AnswerStates", "Counting", "Looked", "RowsPage"]

PAGE = 100
#: answers whose states are computed per hold of the engine lock (page fill / counts)
FILL_STEP = 5
COUNT_STEP = 10
COUNT_PAGE = 500
#: seconds a state worker sleeps after each step, so key events never queue behind it
_BREATHE = 0.002


@dataclass(frozen=True)
class Looked:
    """What the engine said about one answer of the list: its states and its question."""

    summary: Summary
    question: TextResult | None  # None: the manifest could not be read (its states say why)


@dataclass
class Counting:
    """How far the counts of one listing got (only its counts worker writes it)."""

    generation: int
    cursor: int = -1
    done: int = 0
    total: int | None = None
    integrity: Counter[str] = field(default_factory=Counter)
    currency: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class RowsPage:
    """One page of the listing: its rows, the states already computed (a `state:`
    filter computes them to keep a row), where the next page starts, whether the log is
    exhausted, and for an id or words that match nothing the closest known ids."""

    rows: list[AnswerRow]
    states: dict[str, Looked]
    cursor: int
    exhausted: bool
    closest: list[str] = field(default_factory=list)


def question_text(looked: Looked) -> str | None:
    q = looked.question
    return q.text if q is not None and q.verified else None


def look(tracer: Tracer, answer_id: str) -> Looked:
    from tracer.engine.trace import DamagedEntryError, UnknownAnswerError

    summary = tracer.summary(answer_id)
    try:
        question: TextResult | None = tracer.question(answer_id)
    except (UnknownAnswerError, DamagedEntryError):
        question = None
    return Looked(summary, question)


class AnswerStates:
    """Rows, states and counts for one answer list; `current()` is the listing's
    generation now (work for an older one stops), and the fill count is this object's."""

    def __init__(self, engine: Callable[[], Engine], current: Callable[[], int]) -> None:
        self._engine = engine
        self._current = current
        # how many page fills are running: the counts worker steps aside while any is
        self._filling = 0
        self._filling_lock = threading.Lock()

    @property
    def filling(self) -> bool:
        with self._filling_lock:
            return self._filling > 0

    def begin_fill(self) -> None:
        with self._filling_lock:
            self._filling += 1

    def end_fill(self) -> None:
        with self._filling_lock:
            self._filling -= 1

    def summaries(self, generation: int, rows: list[AnswerRow], worker: Worker[None]) -> dict[str, Looked]:
        """States and questions of `rows`, FILL_STEP answers per hold of the engine lock."""
        out: dict[str, Looked] = {}
        engine = self._engine()
        for i in range(0, len(rows), FILL_STEP):
            if generation != self._current() or worker.is_cancelled:
                break
            step = rows[i : i + FILL_STEP]
            with engine.use() as s:
                tracer = engine.tracer(s)
                tracer.prime(step)
                out.update((r.answer_id, look(tracer, r.answer_id)) for r in step)
            time.sleep(_BREATHE)  # let the UI thread take the GIL between steps
        return out

    def sql_page(self, f: ListFilter, cursor: int, desc: bool) -> RowsPage:
        """Rows first: pure SQL, shown at once; states follow from the page fill."""
        from store import queries  # DuckDB loads while the first frame is drawn, not before it

        with self._engine().use() as s:
            kept = queries.answer_rows(s.vault, f.where, PAGE, cursor, descending=desc)
            closest = _closest(s, f) if cursor < 0 and not kept else []
        end = kept[-1].seq if kept else cursor
        return RowsPage(kept, {}, end, len(kept) < PAGE, closest)

    def computed_page(
        self, generation: int, f: ListFilter, cursor: int, desc: bool, worker: Worker[None]
    ) -> RowsPage:
        """A filter on computed words: pages of rows, each answer's states computed, until
        a page's worth is kept or the log is exhausted."""
        from store import queries

        kept: list[AnswerRow] = []
        states: dict[str, Looked] = {}
        exhausted = False
        self.begin_fill()
        try:
            while len(kept) < PAGE and not exhausted and generation == self._current():
                with self._engine().use() as s:
                    page = queries.answer_rows(s.vault, f.where, PAGE, cursor, descending=desc)
                exhausted = len(page) < PAGE
                if page:
                    cursor = page[-1].seq
                got = self.summaries(generation, page, worker)
                for r in page:
                    looked = got.get(r.answer_id)
                    if looked is not None and f.keeps(looked.summary, question_text(looked)):
                        kept.append(r)
                        states[r.answer_id] = looked
        finally:
            self.end_fill()
        return RowsPage(kept, states, cursor, exhausted)

    def count_pages(
        self,
        p: Counting,
        f: ListFilter,
        worker: Worker[None],
        turn: Callable[[], bool],
        progress: Callable[[Counting], None],
    ) -> bool:
        """The counts' pages of rows, each in steps after a visible fill and `turn()`;
        `progress` at most every quarter second.  False when `turn()` said stop."""
        from store import queries

        generation, last_post = p.generation, 0.0
        while generation == self._current() and not worker.is_cancelled:
            with self._engine().use() as s:
                rows = queries.answer_rows(s.vault, f.where, COUNT_PAGE, p.cursor)
            if not rows:
                return True
            for i in range(0, len(rows), COUNT_STEP):
                self.wait_for_fill(generation, worker)
                if not turn():
                    return False
                self.count_step(p, f, rows[i : i + COUNT_STEP])
                now = time.monotonic()
                if now - last_post > 0.25:
                    last_post = now
                    progress(p)
        return True

    def wait_for_fill(self, generation: int, worker: Worker[None]) -> None:
        """A visible page being filled goes first, but never starves the counts for more
        than about two seconds a step."""
        waited = 0
        while self._filling and generation == self._current() and not worker.is_cancelled:
            time.sleep(0.005)
            waited += 1
            if waited > 400:
                break

    def count_step(self, p: Counting, f: ListFilter, step: list[AnswerRow]) -> None:
        """Add one small step of answers' states to the counts."""
        engine = self._engine()
        with engine.use() as s:
            tracer = engine.tracer(s)
            tracer.prime(step)
            if f.question:
                got = [look(tracer, r.answer_id) for r in step]
            else:
                got = [Looked(tracer.summary(r.answer_id), None) for r in step]
        p.done += len(step)
        p.cursor = step[-1].seq
        time.sleep(_BREATHE)
        for looked in got:
            if f.keeps(looked.summary, question_text(looked)):
                p.integrity[looked.summary.integrity] += 1
                p.currency[looked.summary.currency] += 1


def _closest(s: Session, f: ListFilter) -> list[str]:
    """Nothing matched an id or words: the closest known answer ids (lookup.py)."""
    from tracer.engine.lookup import closest_answers

    text = f.where.text.strip()
    return closest_answers(s.vault, text) if text and " " not in text else []
