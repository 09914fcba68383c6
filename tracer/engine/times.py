"""Times as tracer echoes them: RFC 3339 in UTC, the same instant as recorded."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

__all__ = ["aware", "spell_utc", "utc"]


@functools.lru_cache(maxsize=65536)
def aware(value: str) -> datetime | None:
    """An RFC 3339 time as an aware instant; None when it does not parse or has no offset.

    The one reading of a recorded time that comparisons use (never string order).
    Memoized: a revalidation reads each answer's `generated_at` once per passage.
    """
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return when if when.tzinfo is not None else None


def utc(value: str) -> str:
    """An RFC 3339 time echoed in UTC (``…Z``), whatever offset it was recorded with.

    The same instant, so nothing is lost; a value that does not parse, or has no offset,
    is returned as recorded rather than guessed at.
    """
    when = aware(value)
    return value if when is None else spell_utc(when)


def spell_utc(moment: datetime) -> str:
    """An aware time in tracer's one spelling: UTC, ``Z``, the fraction without trailing zeros.

    Everything tracer writes (CLI flags, producer records, imports, reports) is spelled
    this way, so the same instant never appears as two strings.
    """
    when = moment.astimezone(UTC)
    frac = f".{when.microsecond:06d}".rstrip("0") if when.microsecond else ""
    return when.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"
