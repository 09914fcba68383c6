"""Wall-clock time as evidence timestamps (RFC 3339, UTC, second precision).

`TRACER_CLOCK` pins the clock for reproducible builds of the sample vault and for
tests; it is never needed in real use.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime


def now_iso() -> str:
    fixed = os.environ.get("TRACER_CLOCK")
    if fixed:
        return fixed
    return datetime.now(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def valid_iso(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
