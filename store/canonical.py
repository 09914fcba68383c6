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
    elif isinstance(value, list | dict):
        _check_members(value, path)


def _check_members(value: list[Any] | dict[str, Any], path: str) -> None:
    """`_check` each item of an array, each member name and value of an object."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]")
        return
    for key, item in value.items():
        _check_text(key, member_path(path, key), "member name")
        _check(item, member_path(path, key))


def _check_text(text: str, path: str, what: str = "string") -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _RejectError(path, f"lone surrogate in {what} (\\u{ord(text[exc.start]):04x})") from exc


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
        suspect = False

        def pairs(items: list[tuple[str, Any]]) -> Any:
            nonlocal suspect
            out = dict(items)
            if len(out) == len(items):
                return out
            suspect = True
            return _pairs_hook(items)

        def constant(name: str) -> Any:
            nonlocal suspect
            suspect = True
            return _constant(name)

        def number(text: str) -> Any:
            nonlocal suspect
            value = _float(text)
            if type(value) is not float:
                suspect = True
            return value

        def integer(text: str) -> Any:
            nonlocal suspect
            if len(text) >= _MAX_INT_DIGITS:  # maybe beyond ±(2^53 - 1): let _check decide
                suspect = True
                return _int(text)
            return int(text)

        value = json.loads(
            text, object_pairs_hook=pairs, parse_constant=constant, parse_float=number, parse_int=integer
        )
        # One walk over the value finds the path of whatever the hooks refused.  It is
        # skipped when nothing can be wrong: no hook objected, no integer literal has
        # 16 digits or more (shorter ones are within ±(2^53 - 1)), and no string can
        # hold a lone surrogate (from UTF-8 bytes only a \uD800-\uDFFF escape makes one).
        if suspect or _SURROGATE_ESCAPE.search(text) or (not isinstance(data, bytes) and not _utf8(text)):
            _check(value, "$")
    except _RejectError as exc:
        raise InputError(file, exc.path, str(exc)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(file, "$", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise InputError(file, "$", "not accepted: JSON nested too deeply") from exc
    return value


#: json's C encoder writes RFC 8785's bytes for a value with no floats whose member
#: names sort the same by code point as by UTF-16 unit: same escapes (\b \f \n \r \t,
#: \" \\, other controls as lowercase \u00xx, nothing else), same literals.
_PLAIN_ENCODE = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode


def _plain(value: Any) -> bool:
    """Only dicts (str member names without astral characters), lists, str, bool, None,
    safe ints and plain-range floats: then `_PLAIN_ENCODE` is exact.  `value` must be
    acyclic (it was encoded)."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str:
            continue
        if t is list:
            stack.extend(v)
        elif t is dict:
            if not _plain_names(v):
                return False
            stack.extend(v.values())
        elif not _plain_scalar(v):
            return False
    return True


def _plain_scalar(v: Any) -> bool:
    """A bool, None, a safe int, or a float both encoders write alike."""
    t = type(v)
    if t is bool or v is None:
        return True
    if t is int:
        return bool(-MAX_SAFE_INT <= v <= MAX_SAFE_INT)
    if t is float:
        # here Python's repr and ECMAScript's Number::toString agree (shortest round
        # trip, no exponent); integral floats (5.0 against 5) and the rest go to rfc8785
        return bool(1e-4 <= abs(v) < 1e16 and not v.is_integer())
    return False


def _plain_names(d: dict[Any, Any]) -> bool:
    """Member names that are str without astral characters (they sort alike in both encoders)."""
    return all(type(key) is str and (key.isascii() or max(key) <= "\uffff") for key in d)


def canonical(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of `value`; the only serialization we ever hash or sign.

    Values without floats, or whose floats are non-integral with 1e-4 <= |x| < 1e16, take
    json's C encoder (tested byte-equal against `rfc8785`); anything else, and every
    error, is left to `rfc8785`.
    """
    try:
        data = _PLAIN_ENCODE(value).encode("utf-8")
    except (ValueError, TypeError, RecursionError):  # UnicodeEncodeError is a ValueError
        data = None
    if data is not None and _plain(value):
        return data
    return bytes(rfc8785.dumps(value))
