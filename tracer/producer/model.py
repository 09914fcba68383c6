"""The facts a producer attests, as frozen values checked when they are made.

Every check that `tracer ingest` would apply to a field (non-empty, at most 512
characters, an RFC 3339 time with an offset, JSON that RFC 8785 can serialize) is
applied here, in the constructor, so a mistake surfaces at the line that made it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from store.canonical import canonical, parse_strict
from store.crypto import sha256_hex
from store.errors import InputError
from tracer.engine.textnorm import CHUNKER_VERSION
from tracer.engine.times import spell_utc
from tracer.producer.errors import RecordError

__all__ = [
    "Authorization",
    "Chunker",
    "Producer",
    "Runtime",
    "SourceRevision",
    "text_sha256",
    "timestamp",
]

#: the manifest schema's limit on identifiers and names
MAX_NAME = 512
#: the manifest schema's pattern for times; the date and time must also exist
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def text_sha256(text: str) -> str:
    """SHA-256 (lowercase hex) of the exact UTF-8 bytes: how every text is named."""
    return sha256_hex(text.encode("utf-8"))


def name(value: object, what: str, *, limit: int | None = MAX_NAME) -> str:
    """A non-empty string of at most `limit` characters (code points), else `RecordError`."""
    if not isinstance(value, str) or not value:
        raise RecordError(f"{what}: expected a non-empty string, got {value!r}")
    if limit is not None and len(value) > limit:
        raise RecordError(f"{what}: {len(value)} characters; at most {limit} are allowed")
    _utf8(value, what)
    return value


def string(value: object, what: str) -> str:
    """Any string (may be empty) that can be written as UTF-8."""
    if not isinstance(value, str):
        raise RecordError(f"{what}: expected a string, got {type(value).__name__}")
    _utf8(value, what)
    return value


def text(value: object, what: str) -> str:
    """A text that will be hashed and stored: non-empty, any length, valid UTF-8."""
    return name(value, what, limit=None)


def _utf8(value: str, what: str) -> None:
    if value.isascii():  # ASCII always encodes; most ids and many texts are
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RecordError(f"{what}: not encodable as UTF-8 ({exc.reason} at {exc.start})") from exc


def timestamp(value: object, what: str) -> str:
    """An RFC 3339 time; a `datetime` must be aware and is written in UTC with `Z`."""
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise RecordError(f"{what}: a datetime needs a time zone (use datetime.now(UTC))")
        return spell_utc(value)
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise RecordError(f"{what}: expected an RFC 3339 time with Z or ±hh:mm, got {value!r}")
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise RecordError(f"{what}: {value!r} is not a real date and time ({exc})") from exc
    return value


def json_object(value: Mapping[str, Any], what: str) -> Mapping[str, Any]:
    """A JSON object that RFC 8785 serializes and strict JSON reads back unchanged."""
    if not isinstance(value, Mapping):
        raise RecordError(f"{what}: expected a mapping, got {type(value).__name__}")
    try:
        data = canonical(dict(value))
        back = parse_strict(data, what)
    except (InputError, TypeError, ValueError) as exc:
        raise RecordError(f"{what}: not interoperable JSON ({exc})") from exc
    if not isinstance(back, dict):  # pragma: no cover - canonical of a dict is an object
        raise RecordError(f"{what}: expected a JSON object")
    return MappingProxyType(back)


#: a number of at most this magnitude reads back from RFC 8785 unchanged (I-JSON's safe
#: integers; a float below it prints with no exponent that could overflow the check)
_SAFE_NUMBER = 2**53 - 1


def score(value: object, what: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(f"{what}: expected a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise RecordError(f"{what}: {value!r} is not a JSON number")
    if type(value) in (int, float) and abs(value) <= _SAFE_NUMBER:
        return value
    json_object({"v": value}, what)
    return value


def non_negative(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RecordError(f"{what}: expected an integer ≥ 0, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Producer:
    """The system that produced the answer and its version (`producer` in the manifest)."""

    system: str
    version: str

    def __post_init__(self) -> None:
        name(self.system, "producer.system")
        name(self.version, "producer.version")

    def to_json(self) -> dict[str, str]:
        return {"system": self.system, "version": self.version}


@dataclass(frozen=True, slots=True)
class Runtime:
    """Model, prompt template and pipeline versions and the generation parameters."""

    model: str
    prompt_template_version: str
    pipeline_version: str
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        name(self.model, "runtime.model")
        name(self.prompt_template_version, "runtime.prompt_template_version")
        name(self.pipeline_version, "runtime.pipeline_version")
        object.__setattr__(self, "parameters", json_object(self.parameters, "runtime.parameters"))

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prompt_template_version": self.prompt_template_version,
            "pipeline_version": self.pipeline_version,
            "parameters": dict(self.parameters),
        }


@dataclass(frozen=True, slots=True)
class Authorization:
    """Who asked, under which access policy version, and what the policy decided."""

    principal: str
    policy_version: str
    decision: str

    def __post_init__(self) -> None:
        name(self.principal, "authorization.principal")
        name(self.policy_version, "authorization.policy_version")
        string(self.decision, "authorization.decision")

    def to_json(self) -> dict[str, str]:
        return {
            "principal": self.principal,
            "policy_version": self.policy_version,
            "decision": self.decision,
        }


@dataclass(frozen=True, slots=True)
class Chunker:
    """The chunker or transform that cut a passage: its version and parameters."""

    version: str = CHUNKER_VERSION
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        name(self.version, "chunk.pipeline_version")
        object.__setattr__(self, "parameters", json_object(self.parameters, "chunk.parameters"))


@dataclass(frozen=True, slots=True)
class SourceRevision:
    """One imported revision of a source document, with its full text.

    `document_id` + `revision` name the vault's `source_revision` record; the source
    system, path and source-system revision say where it came from. The same object
    can be written as a `tracer.source_revision/v1` input file (`to_input`).
    """

    document_id: str
    revision: str
    content: str
    source_system: str
    source_revision: str
    path: str
    uri: str
    backend: str
    collection: str
    committed_at: str
    title: str
    content_sha256: str = field(init=False)

    def __post_init__(self) -> None:
        name(self.document_id, "document.document_id")
        name(self.revision, "document.revision")
        string(self.content, "content")
        name(self.source_system, "source.system")
        name(self.source_revision, "source.revision")
        string(self.path, "source.path")
        string(self.uri, "document.uri")
        name(self.backend, "document.backend")
        name(self.collection, "collection")
        string(self.title, "title")
        object.__setattr__(self, "committed_at", timestamp(self.committed_at, "committed_at"))
        object.__setattr__(self, "content_sha256", text_sha256(self.content))

    def to_input(self) -> dict[str, str]:
        """The `tracer.source_revision/v1` ingest file for this revision."""
        return {
            "schema": "tracer.source_revision/v1",
            "document_id": self.document_id,
            "revision": self.revision,
            "source_system": self.source_system,
            "source_revision": self.source_revision,
            "path": self.path,
            "title": self.title,
            "uri": self.uri,
            "backend": self.backend,
            "collection": self.collection,
            "committed_at": self.committed_at,
            "content": self.content,
        }
