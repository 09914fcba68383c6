"""JSON Schema validation of input files: a compiled fast path, jsonschema for the errors.

Inputs are validated against Draft 2020-12 schemas (`store/schemas/`).  Most files are
valid, so a predicate compiled from the schema decides first; only a file it refuses is
re-checked by jsonschema, which names the exact JSON path of the first problem.  Patterns
are matched as ECMA-262 matches them (`$` is the end of the text), in both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, TypedDict, cast

from store.errors import InputError

if TYPE_CHECKING:
    import jsonschema

__all__ = ["SchemaJSON", "ecma_pattern", "load_schema", "validate", "validators"]

#: a Draft 2020-12 schema as `store/schemas/` writes them: the keywords the compiler
#: knows (`_KNOWN`) and the annotations; a subschema may also be `true` or `false`
SchemaJSON = TypedDict(
    "SchemaJSON",
    {
        "$schema": str,
        "$id": str,
        "title": str,
        "description": str,
        "type": str,
        # any JSON value: the compiler handles strings and leaves the rest to jsonschema
        "const": object,
        "enum": object,
        "pattern": str,
        "minLength": int,
        "maxLength": int,
        "minItems": int,
        "maxItems": int,
        "minimum": float,
        "items": "SchemaJSON | bool",
        "properties": "dict[str, SchemaJSON | bool]",
        "required": list[str],
        "additionalProperties": "SchemaJSON | bool",
        "propertyNames": "SchemaJSON | bool",
    },
    total=False,
)


@cache
def load_schema(name: str) -> SchemaJSON:
    text = resources.files("store").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")
    schema: SchemaJSON = json.loads(text)
    return schema


_Check = Callable[[Any], bool]
_HEX_PATTERN = re.compile(r"\^\[0-9a-f\]\{(\d+)\}\$")
_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description"})
_KNOWN = frozenset(
    {
        "type", "const", "enum", "pattern", "minLength", "maxLength", "minItems", "maxItems",
        "minimum", "items", "properties", "required", "additionalProperties", "propertyNames",
    }
)  # fmt: skip
#: Draft 2020-12 types as expressions over `{v}`; "integer" admits integral floats
_TYPE_EXPR = {
    "object": "type({v}) is dict",
    "array": "type({v}) is list",
    "string": "type({v}) is str",
    "integer": "(type({v}) is int or (type({v}) is float and {v}.is_integer()))",
    "number": "(type({v}) is int or type({v}) is float)",
    "boolean": "type({v}) is bool",
    "null": "{v} is None",
}


class _UnsupportedError(Exception):
    """A schema the fast checker does not handle: jsonschema checks it instead."""


def _checked_type(schema: object) -> str | None:
    """The schema's `type`, once every keyword in it is one the generator compiles."""
    if not isinstance(schema, dict):
        raise _UnsupportedError(repr(schema))
    unknown = set(schema) - _KNOWN - _ANNOTATIONS
    if unknown:
        raise _UnsupportedError(", ".join(sorted(unknown)))
    t = schema.get("type")
    if t is not None and (not isinstance(t, str) or t not in _TYPE_EXPR):
        raise _UnsupportedError(f"type {t!r}")
    return t


class _Gen:
    """Python source for a predicate equivalent to Draft 2020-12 `is_valid` (our keywords).

    Only a fast path: a value it accepts is accepted by jsonschema too (a hypothesis test
    compares the two on mutated documents), anything it refuses is re-checked by
    jsonschema, which also writes the error.  Unknown keywords raise `_UnsupportedError`.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        #: the values the generated source names (frozensets, compiled patterns)
        self.consts: dict[str, object] = {}
        self.n = 0

    def name(self, prefix: str, value: object = None) -> str:
        self.n += 1
        name = f"{prefix}{self.n}"
        if value is not None:
            self.consts[name] = value
        return name

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("    " * ind + line)

    def node(self, schema: SchemaJSON | bool, v: str, ind: int) -> None:
        if schema is True:
            return
        if schema is False:
            self.emit(ind, "return False")
            return
        t = _checked_type(schema)
        # Each condition must hold; for a string they are joined into one test (the
        # common case: fewer steps), otherwise each is emitted as before.
        conds: list[str] = [] if t is None else [_TYPE_EXPR[t].format(v=v)]
        conds += self.value_conds(schema, v)
        conds += self.string_conds(schema, v, t)
        if t == "string":
            self.emit(ind, f"if not ({' and '.join(conds)}): return False")
        else:
            for cond in conds:
                self.emit(ind, f"if not {cond}: return False")
        if "minimum" in schema:
            bound = schema["minimum"]
            if type(bound) not in (int, float):
                raise _UnsupportedError("minimum")
            gn = "" if t in ("integer", "number") else f"(type({v}) is int or type({v}) is float) and "
            self.emit(ind, f"if {gn}{v} < {bound!r}: return False")
        self.array(schema, v, ind, t)
        self.object(schema, v, ind, t)

    def value_conds(self, schema: SchemaJSON, v: str) -> list[str]:
        """`const` and `enum` (strings only) as membership tests."""
        conds = []
        for key in ("const", "enum"):
            if key in schema:
                values = [schema[key]] if key == "const" else schema[key]
                if not isinstance(values, list) or not all(isinstance(x, str) for x in values):
                    raise _UnsupportedError(f"non-string {key}")
                allowed = self.name("E", frozenset(values))
                conds.append(f"(type({v}) is str and {v} in {allowed})")
        return conds

    def string_conds(self, schema: SchemaJSON, v: str, t: str | None) -> list[str]:
        """`minLength`, `maxLength` and `pattern`, guarded by a type test unless the
        schema's type is already string."""
        conds = []
        g = "" if t == "string" else f"type({v}) is not str or "
        if "minLength" in schema:
            conds.append(f"({g}len({v}) >= {int(schema['minLength'])})")
        if "maxLength" in schema:
            conds.append(f"({g}len({v}) <= {int(schema['maxLength'])})")
        if "pattern" in schema:
            pattern = schema["pattern"]
            rx = self.name("P", ecma_pattern(pattern))
            match = f"{rx}.search({v}) is not None"
            hex_len = _HEX_PATTERN.fullmatch(pattern)
            if hex_len:
                # what the regex accepts, without running it (anything else still does)
                match = f"(len({v}) == {int(hex_len.group(1))} and not {v}.strip(HEX)) or {match}"
            conds.append(f"({g}{match})")
        return conds

    def array(self, schema: SchemaJSON, v: str, ind: int, t: str | None) -> None:
        keys = [k for k in ("minItems", "maxItems", "items") if k in schema]
        if not keys:
            return
        if t != "array":
            self.emit(ind, f"if type({v}) is list:")
            ind += 1
            self.emit(ind, "pass")
        if "minItems" in schema:
            self.emit(ind, f"if len({v}) < {int(schema['minItems'])}: return False")
        if "maxItems" in schema:
            self.emit(ind, f"if len({v}) > {int(schema['maxItems'])}: return False")
        if "items" in schema:
            x = self.name("x")
            self.emit(ind, f"for {x} in {v}:")
            self.emit(ind + 1, "pass")
            self.node(schema["items"], x, ind + 1)

    def object(self, schema: SchemaJSON, v: str, ind: int, t: str | None) -> None:
        keys = [k for k in ("properties", "required", "additionalProperties", "propertyNames") if k in schema]
        if not keys:
            return
        if t != "object":
            self.emit(ind, f"if type({v}) is dict:")
            ind += 1
            self.emit(ind, "pass")
        props = schema.get("properties", {})
        if "required" in schema:
            req = self.name("R", frozenset(schema["required"]))
            self.emit(ind, f"if not {req} <= {v}.keys(): return False")
        self.additional(schema.get("additionalProperties", True), props, v, ind)
        if "propertyNames" in schema:
            k = self.name("k")
            self.emit(ind, f"for {k} in {v}:")
            self.emit(ind + 1, "pass")
            self.node(schema["propertyNames"], k, ind + 1)
        required = frozenset(schema.get("required", ()))
        for prop, sub in props.items():
            self.member(prop, sub, prop in required, v, ind)

    def additional(
        self, extra: SchemaJSON | bool, props: dict[str, SchemaJSON | bool], v: str, ind: int
    ) -> None:
        """`additionalProperties`: false refuses unknown members, a schema checks each one."""
        known = self.name("K", frozenset(props))
        if extra is False:
            self.emit(ind, f"if not {v}.keys() <= {known}: return False")
        elif extra is not True:
            k, x = self.name("k"), self.name("x")
            self.emit(ind, f"for {k}, {x} in {v}.items():")
            self.emit(ind + 1, f"if {k} not in {known}:")
            self.emit(ind + 2, "pass")
            self.node(extra, x, ind + 2)

    def member(self, prop: str, sub: SchemaJSON | bool, required: bool, v: str, ind: int) -> None:
        """One member's check: a required one is present (checked above), another only if there."""
        x = self.name("x")
        if required:
            self.emit(ind, f"{x} = {v}[{prop!r}]")
            self.node(sub, x, ind)
            return
        self.emit(ind, f"{x} = {v}.get({prop!r}, MISSING)")
        self.emit(ind, f"if {x} is not MISSING:")
        self.emit(ind + 1, "pass")
        self.node(sub, x, ind + 1)


def _compile(schema: SchemaJSON) -> _Check:
    gen = _Gen()
    gen.node(schema, "v", 1)
    source = "\n".join(["def check(v):", *gen.lines, "    return True", ""])
    namespace: dict[str, object] = {**gen.consts, "MISSING": object(), "HEX": "0123456789abcdef"}
    exec(compile(source, "<schema check>", "exec"), namespace)  # noqa: S102 - our own schema files
    return cast("_Check", namespace["check"])


def ecma_pattern(pattern: str) -> re.Pattern[str]:
    """`pattern` as JSON Schema (ECMA-262) means it: `$` is the end of the text.

    In Python `$` also matches before a final newline, so "<64 hex>\\n" would pass
    `^[0-9a-f]{64}$`; an unescaped `$` outside a class becomes `\\Z`.
    """
    out: list[str] = []
    escaped = in_class = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "$" and not in_class:
            out.append("\\Z")
            continue
        out.append(ch)
    return re.compile("".join(out))


def _ecma_pattern_keyword(
    validator: Any, pattern: str, instance: Any, schema: SchemaJSON
) -> Iterator[jsonschema.ValidationError]:
    import jsonschema

    if isinstance(instance, str) and not ecma_pattern(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validator_class() -> Any:
    """Draft 2020-12 with ECMA-262 patterns. jsonschema is imported only here: the
    compiled check decides valid files alone, so an ingest worker (and a `tracer ingest`
    of valid files) never pays its import (docs/benchmarks.md, issue 23 item 2)."""
    import jsonschema

    return jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        jsonschema.Draft202012Validator, {"pattern": _ecma_pattern_keyword}
    )


@cache
def _fast(schema: str) -> _Check:
    """The compiled predicate of `schema`, or jsonschema's own where it cannot be compiled."""
    try:
        return _compile(load_schema(schema))
    except _UnsupportedError:
        return cast("_Check", _validator_class()(load_schema(schema)).is_valid)


@cache
def validators(schema: str) -> tuple[Any, _Check]:
    """jsonschema's validator of `schema` (which names a problem's path) and the compiled
    predicate `validate` decides with first."""
    return _validator_class()(load_schema(schema)), _fast(schema)


def validate(value: Any, schema: str, file: str, prefix: str = "$") -> None:
    """Raise InputError naming `file` and the JSON path unless `value` is valid."""
    if _fast(schema)(value):
        return
    import jsonschema

    validator, _ = validators(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        path = prefix + error.json_path[1:]
        raise InputError(file, path, f"{error.message} (schema {schema})")
