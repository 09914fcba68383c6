"""Strict JSON in, RFC 8785 canonical JSON out.

Evidence JSON is hashed and signed, so ambiguity is refused at the door: duplicate
keys, NaN/Infinity (including numbers too large for a double), lone surrogates and
integers outside I-JSON's safe range ±(2^53 - 1) all make two honest parsers disagree
about what was signed.  Every refusal names the file and the JSON path of the value.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import rfc8785

from store.errors import InputError

__all__ = ["MAX_SAFE_INT", "canonical", "member_path", "parse_strict"]

#: I-JSON (RFC 7493 §2.2) and RFC 8785 §3.2.2.3: integers must lie in ±(2^53 - 1)
MAX_SAFE_INT = 2**53 - 1
_MAX_INT_DIGITS = len(str(MAX_SAFE_INT))
_BEYOND = "is beyond ±(2^53 - 1) (not interoperable, RFC 8785 §3.2.2.3)"
_PLAIN_MEMBER = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*")


def member_path(path: str, key: str) -> str:
    """JSONPath of member `key` under `path`, written the way jsonschema writes it."""
    if _PLAIN_MEMBER.fullmatch(key):
        return f"{path}.{key}"
    shown = key.encode("utf-8", "backslashreplace").decode("utf-8")
    return path + "['" + shown.replace("\\", "\\\\").replace("'", "\\'") + "']"


class _Refused:
    """Placeholder the decoder hooks leave where a refused value was, so `_check` can
    report it with its JSON path (the hooks themselves do not know where they are)."""

    __slots__ = ("key", "message")

    def __init__(self, message: str, key: str | None = None):
        self.message = message
        self.key = key


class _RejectError(ValueError):
    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path


def _pairs_hook(pairs: list[tuple[str, Any]]) -> Any:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            return _Refused("duplicate key (a second member with this name)", key)
        out[key] = value
    return out


def _constant(name: str) -> Any:
    return _Refused(f"{name} is not JSON (RFC 8785 has no NaN or Infinity)")


def _float(text: str) -> Any:
    value = float(text)
    if not math.isfinite(value):
        return _Refused(f"number {text} is out of range for an IEEE 754 double")
    return value


def _int(text: str) -> Any:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        return _Refused(f"integer {text[:24]}… {_BEYOND}")
    return int(text)


def _check(value: Any, path: str) -> None:
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return
    if isinstance(value, _Refused):
        raise _RejectError(member_path(path, value.key) if value.key is not None else path, value.message)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INT:
            raise _RejectError(path, f"integer {value} {_BEYOND}")
    elif isinstance(value, str):
        _check_text(value, path)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, member_path(path, key), "member name")
            _check(item, member_path(path, key))


def _check_text(text: str, path: str, what: str = "string") -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _RejectError(path, f"lone surrogate in {what} (\\u{ord(text[exc.start]):04x})") from exc


def parse_strict(data: bytes | str, file: str) -> Any:
    """Parse JSON, refusing what RFC 8785 / I-JSON refuse; errors name the file and path."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(file, "$", f"not UTF-8 (byte {exc.start})") from exc
    else:
        text = data
    try:
        value = json.loads(
            text,
            object_pairs_hook=_pairs_hook,
            parse_constant=_constant,
            parse_float=_float,
            parse_int=_int,
        )
        _check(value, "$")
    except _RejectError as exc:
        raise InputError(file, exc.path, str(exc)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(file, "$", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise InputError(file, "$", "not accepted: JSON nested too deeply") from exc
    return value


def canonical(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of `value`; the only serialization we ever hash or sign."""
    return bytes(rfc8785.dumps(value))
