"""App-level messages: workers post these back to the UI thread (toolong style)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

__all__ = ["Failed", "Recorded", "reload_failed"]


@dataclass
class Failed(Message):
    """An engine call raised; the screen shows it instead of the app crashing."""

    what: str
    error: str


def reload_failed(what: str, exc: Exception, said: str) -> Failed:
    """A reload after a signature failed: the message still says what was signed."""
    return Failed(what, f"{said}; {exc}" if said else str(exc))


@dataclass
class Recorded(Message):
    """Something was appended (access entry, investigator note): the checkpoint in the bar moved."""
