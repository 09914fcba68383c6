"""Report export, available only once `tracer.report.export` exists.

The report package is written separately; until it lands the export key is simply
absent (not a stub that pretends to work).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from tracer.engine.session import Session

__all__ = ["available", "export_answer"]


def _module() -> ModuleType | None:
    try:
        return importlib.import_module("tracer.report.export")
    except ModuleNotFoundError as exc:
        if exc.name in ("tracer.report", "tracer.report.export"):
            return None
        raise


_EXPORT = _module()


def available() -> bool:
    return _EXPORT is not None and hasattr(_EXPORT, "export_pack")


FORMATS = frozenset({"md", "html", "json"})


def export_answer(session: Session, answer_id: str, out_dir: Path) -> Path:
    """The signed evidence pack for one answer; the report records its own access entry."""
    if _EXPORT is None:
        raise RuntimeError("tracer.report is not installed")
    return Path(_EXPORT.export_pack(session, [answer_id], out_dir, set(FORMATS)))
