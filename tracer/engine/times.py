"""Times as tracer echoes them: RFC 3339 in UTC, the same instant as recorded."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["spell_utc", "utc"]


def utc(value: str) -> str:
    """An RFC 3339 time echoed in UTC (``…Z``), whatever offset it was recorded with.

    The same instant, so nothing is lost; a value that does not parse, or has no offset,
    is returned as recorded rather than guessed at.
    """
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return value
    if when.tzinfo is None:
        return value
    return spell_utc(when)


def spell_utc(moment: datetime) -> str:
    """An aware time in tracer's one spelling: UTC, ``Z``, the fraction without trailing zeros.

    Everything tracer writes (CLI flags, producer records, imports, reports) is spelled
    this way, so the same instant never appears as two strings.
    """
    when = moment.astimezone(UTC)
    frac = f".{when.microsecond:06d}".rstrip("0") if when.microsecond else ""
    return when.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"
