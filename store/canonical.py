"""Strict JSON in, RFC 8785 canonical JSON out.

Evidence JSON is hashed and signed, so ambiguity is refused at the door: duplicate
keys, NaN/Infinity, lone surrogates and integers beyond 2^53 all make two honest
parsers disagree about what was signed.
"""

from __future__ import annotations

import json
from typing import Any

import rfc8785

from store.errors import InputError

__all__ = ["canonical", "parse_strict"]

_MAX_SAFE_INT = 2**53


class _RejectError(ValueError):
    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RejectError("$", f"duplicate key {key!r}")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise _RejectError("$", f"{name} is not JSON")


def _check(value: Any, path: str) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if abs(value) > _MAX_SAFE_INT:
            raise _RejectError(path, "integer beyond 2^53 (not interoperable, RFC 8785 §3.2.2.3)")
    elif isinstance(value, str):
        _check_text(value, path)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, path)
            _check(item, f"{path}.{key}")


def _check_text(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _RejectError(path, "lone surrogate in string") from exc


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
        value = json.loads(text, object_pairs_hook=_pairs_hook, parse_constant=_constant)
        _check(value, "$")
    except _RejectError as exc:
        raise InputError(file, exc.path, str(exc)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(file, "$", f"not JSON: {exc.msg} at line {exc.lineno}") from exc
    return value


def canonical(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of `value`; the only serialization we ever hash or sign."""
    return bytes(rfc8785.dumps(value))
