"""What the producer SDK raises: at the call that made the mistake, never at ingest."""

from __future__ import annotations

from store.errors import StoreError

__all__ = [
    "CitationError",
    "LocateError",
    "ModelInputError",
    "ProducerError",
    "RecordError",
]


class ProducerError(StoreError, ValueError):
    """Base of every error the SDK raises on purpose; `diagnostics()` says what to fix."""


class LocateError(ProducerError):
    """A passage that does not occur (or occurs more than once) in the revision it cites."""

    hint = "pass the revision the chunk was cut from; for a repeated text, say which occurrence"


class ModelInputError(ProducerError):
    """A model-input text that is not an exact substring of the prompt that was sent."""

    hint = "record the text exactly as it appears in the prompt, or the prompt it appears in"


class CitationError(ProducerError):
    """A citation range outside the answer, or naming a passage of another record."""


class RecordError(ProducerError):
    """A field missing, malformed or given twice, or a record used after it was closed."""
