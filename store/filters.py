"""What the answers list can be filtered by in SQL: a plain value, importable without DuckDB
(the TUI builds it before the first frame; `store.queries` applies it)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AnswerFilter"]


@dataclass(frozen=True)
class AnswerFilter:
    """Filters that SQL can apply without reading evidence text."""

    text: str = ""
    producer: str = ""
    document: str = ""
    date_from: str = ""
    date_to: str = ""
    answer_ids: tuple[str, ...] | None = None
