"""Which characters make text misleading on a screen: one rule for the whole product.

Ids are refused at ingest when they hold one (`id_problem`); free text is shown with
each one replaced by a visible marker (`tracer.inert`); JSON output escapes them.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

__all__ = [
    "BIDI",
    "NAME_RULE",
    "ZERO_WIDTH",
    "hidden_pattern",
    "id_problem",
    "is_hidden",
    "name_problem",
    "scope_problem",
]

#: names of people and systems that sign: short, ASCII, valid as a C2SP note key name
#: and as a file name
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_SCOPE_RULE = re.compile(r"\*|[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def name_problem(name: object) -> str | None:
    """Why `name` cannot name a signer (None when it can): see `NAME_RULE`."""
    if not isinstance(name, str):
        return f"a name must be a string, got {type(name).__name__}"
    if not NAME_RULE.fullmatch(name):
        shown = name if len(name) <= 40 else name[:40] + "…"
        return (
            f"name {shown!r} is not 1-64 characters of A-Z a-z 0-9 . _ @ - starting with a letter or "
            "digit (names sign as C2SP signed-note key names and name key files)"
        )
    return None


def scope_problem(scope: object) -> str | None:
    """Why `scope` cannot name a collection in a grant (None when it can)."""
    if not isinstance(scope, str) or not _SCOPE_RULE.fullmatch(scope):
        return f"scope {scope!r} is not '*' or a collection name (A-Z a-z 0-9 . _ -, at most 64)"
    return None


BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}
ZERO_WIDTH = frozenset({0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E, 0x00AD})


def is_hidden(cp: int, keep_newlines: bool = True) -> bool:
    """True for a code point that controls or hides rather than shows: C0/C1 controls
    (tab excepted; newline unless `keep_newlines`), bidi controls, zero-width characters,
    and the format, surrogate, private-use and line/paragraph-separator categories."""
    if cp == 0x0A:
        return not keep_newlines
    if cp == 0x09:
        return False
    if cp < 0x20 or 0x7F <= cp <= 0x9F:
        return True
    if cp in BIDI or cp in ZERO_WIDTH:
        return True
    return unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")


def id_problem(value: str) -> str | None:
    """Why `value` cannot be an identifier (None when it can): an id is shown verbatim
    in lists, logs and reports, so every character must print as itself.  Python's
    `str.isprintable` is that rule (no tab, newline, C0/C1 control, bidi control,
    zero-width, format, private-use, unassigned or separator character other than the
    space) and runs at C speed on the many ids of a large ingest."""
    if value.isprintable():
        return None
    ch = next(c for c in value if not c.isprintable())
    return f"contains the invisible or control character U+{ord(ch):04X}"


@cache
def hidden_pattern() -> re.Pattern[str]:
    """A regex matching every hidden code point at or above U+0080 (built once, on use)."""
    ranges: list[tuple[int, int]] = []
    planes = [(0x80, 0x30000), (0xE0000, 0x110000)]
    for lo, hi in planes:
        for cp in range(lo, hi):
            if 0xD800 <= cp <= 0xDFFF or not is_hidden(cp):
                continue
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    body = "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)
    return re.compile(f"[{body}]")
