"""RFC 3339 times compared as instants, never as strings.

"10:00+05:00" is before "06:00Z", and "06:00:00.5Z" is after "06:00:00Z"; string
comparison gets both wrong, and key validity windows depend on getting them right.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["instant"]


def instant(text: str) -> datetime:
    """Aware UTC datetime; raises ValueError for impossible dates or a missing offset."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"date-time without a time zone offset: {text!r}")
    return moment.astimezone(UTC)
