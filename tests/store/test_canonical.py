"""RFC 8785 canonical JSON out, strict I-JSON in.

Vectors: cyberphone/json-canonicalization `testdata/` (the RFC author's reference
suite) and the ES6 number samples listed in that suite's README / RFC 8785 Appendix B.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.canonical import MAX_SAFE_INT, canonical, member_path, parse_strict
from store.entries import EntryKind
from store.errors import InputError

# (input JSON text, expected canonical text) from cyberphone/json-canonicalization testdata.
VECTORS: dict[str, tuple[str, str]] = {
    "arrays": (
        '[\n  56,\n  {\n    "d": true,\n    "10": null,\n    "1": [ ]\n  }\n]',
        '[56,{"1":[],"10":null,"d":true}]',
    ),
    "french": (
        '{\n  "peach": "This sorting order",\n  "péché": "is wrong according to French",\n'
        '  "pêche": "but canonicalization MUST",\n  "sin":   "ingnore locale"\n}\n',
        '{"peach":"This sorting order","péché":"is wrong according to French",'
        '"pêche":"but canonicalization MUST","sin":"ingnore locale"}',
    ),
    "structures": (
        '{\n  "1": {"f": {"f": "hi","F": 5} ,"\\n": 56.0},\n  "10": { },\n  "": "empty",\n'
        '  "a": { },\n  "111": [ { } ],\n  "A": { }\n}',
        '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}',
    ),
    "unicode": (
        '{\n  "Unnormalized Unicode":"\\u1e0d\\u0307"\n}\n',
        '{"Unnormalized Unicode":"\u1e0d\u0307"}',
    ),
    "values": (
        '{\n  "numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001],\n'
        '  "escaping": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n'
        '  "literals": [null, true, false]\n}',
        '{"escaping":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/","literals":[null,true,false],'
        '"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}',
    ),
    "weird": (
        '{\n  "\\u20ac": "Euro Sign",\n  "1": "One",\n  "\\u0080": "Control\\u007f",\n'
        '  "\\ud83d\\ude02": "Smiley",\n  "\\u00f6": "Latin Small Letter O With Diaeresis",\n'
        '  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "</script>": "Browser Challenge"\n}\n',
        '{"1":"One","</script>":"Browser Challenge","\x80":"Control\x7f",'
        '"ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","\U0001f602":"Smiley",'
        '"\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    ),
    "simpleString": ('    "this is a test string 1235"', '"this is a test string 1235"'),
}

# IEEE-754 bit patterns and their ES6 serialization (RFC 8785 Appendix B and the
# sample lines of the cyberphone es6testfile).
NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4340000000000001", "9007199254740994"),
    ("4340000000000002", "9007199254740996"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_cyberphone_vectors(name: str) -> None:
    source, expected = VECTORS[name]
    assert canonical(parse_strict(source, f"{name}.json")) == expected.encode("utf-8")


def test_simple_string_hex_vector() -> None:
    out = canonical(parse_strict('    "this is a test string 1235"', "simpleString.json"))
    assert out.hex(" ").upper() == (
        "22 74 68 69 73 20 69 73 20 61 20 74 65 73 74 20 73 74 72 69 6E 67 20 31 32 33 35 22"
    )


def test_readme_sample_bytes() -> None:
    source = (
        '{"numbers": [1E30,4.50,6,2e-3,0.000000000000000000000000001],'
        '"escaping": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        '"other":  [null, true, false]}'
    )
    expected = bytes.fromhex(
        "7b 22 65 73 63 61 70 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30 30 66 5c 6e 41 27 42 5c 22 5c 5c"
        "5c 5c 5c 22 2f 22 2c 22 6e 75 6d 62 65 72 73 22 3a 5b 31 65 2b 33 30 2c 34 2e 35 2c 36 2c 30 2e"
        "30 30 32 2c 31 65 2d 32 37 5d 2c 22 6f 74 68 65 72 22 3a 5b 6e 75 6c 6c 2c 74 72 75 65 2c 66 61"
        "6c 73 65 5d 7d"
    )
    assert canonical(parse_strict(source, "sample.json")) == expected


@pytest.mark.parametrize(("bits", "expected"), NUMBERS)
def test_es6_number_serialization(bits: str, expected: str) -> None:
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert canonical(value) == expected.encode("ascii")


# -- refusals: each names the file and the JSON path -------------------------------------


def _refused(text: str | bytes) -> InputError:
    with pytest.raises(InputError) as info:
        parse_strict(text, "input.json")
    assert info.value.file == "input.json"
    assert str(info.value).startswith(f"input.json: {info.value.path}: ")
    return info.value


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"a": 1, "a": 2}', "$.a"),
        ('{"x": {"y": [1, {"k": 1, "k": 1}]}}', "$.x.y[1].k"),
        ('[{"ok": 1}, {"dup key": 1, "dup key": 2}]', "$[1]['dup key']"),
    ],
)
def test_duplicate_keys_refused_with_path(text: str, path: str) -> None:
    err = _refused(text)
    assert err.path == path
    assert "duplicate key" in err.message


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('"\\ud800"', "$"),
        ('{"a": ["ok", "x\\udc00y"]}', "$.a[1]"),
        ('{"b": {"\\ud83d": 1}}', "$.b['\\\\ud83d']"),
    ],
)
def test_lone_surrogates_refused_with_path(text: str, path: str) -> None:
    err = _refused(text)
    assert err.path == path
    assert "lone surrogate" in err.message


def test_paired_surrogates_are_fine() -> None:
    assert parse_strict('"\\ud83d\\ude02"', "f") == "\U0001f602"


@pytest.mark.parametrize(
    ("text", "path", "word"),
    [
        ("NaN", "$", "NaN"),
        ('{"score": Infinity}', "$.score", "Infinity"),
        ('{"s": [1, -Infinity]}', "$.s[1]", "Infinity"),
        ('{"big": 1e400}', "$.big", "out of range"),
        ('{"small": [-1e999]}', "$.small[0]", "out of range"),
    ],
)
def test_nan_and_infinity_refused_with_path(text: str, path: str, word: str) -> None:
    err = _refused(text)
    assert err.path == path
    assert word in err.message


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (str(2**53), "$"),
        (str(-(2**53)), "$"),
        ('{"n": 9007199254740993}', "$.n"),
        ('{"p": {"q": [0, 123456789012345678901234567890]}}', "$.p.q[1]"),
        ('{"huge": ' + "9" * 5000 + "}", "$.huge"),
    ],
)
def test_integers_beyond_2_53_refused_with_path(text: str, path: str) -> None:
    err = _refused(text)
    assert err.path == path
    assert "2^53" in err.message


def test_safe_integer_bounds_accepted_and_match_rfc8785() -> None:
    for n in (MAX_SAFE_INT, -MAX_SAFE_INT, 0):
        assert parse_strict(str(n), "f") == n
        assert canonical(n) == str(n).encode()


def test_large_integral_double_is_refused_on_reparse() -> None:
    # 2^68 as a double prints as an integer literal whose exact value is not 2^68:
    # a Python and a JavaScript reader would disagree, so the strict parser refuses it.
    data = canonical(2.0**68)
    assert data == b"295147905179352830000"
    assert _refused(data).path == "$"
    assert parse_strict("2.9514790517935283e20", "f") == 2.0**68


@pytest.mark.parametrize(
    ("data", "expect"),
    [
        (b'{"a": 1', "not JSON"),
        (b"", "not JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_not_json(data: str | bytes, expect: str) -> None:
    err = _refused(data)
    assert err.path == "$"
    assert expect in err.message


def test_member_path_matches_jsonschema_style() -> None:
    assert member_path("$", "abc_1") == "$.abc_1"
    assert member_path("$.x", "0abc") == "$.x['0abc']"
    assert member_path("$", "it's") == "$['it\\'s']"


# -- hypothesis: what we accept canonicalizes, and canonical bytes round-trip -------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-MAX_SAFE_INT, max_value=MAX_SAFE_INT)
    # RFC 8785 prints integral doubles in (2^53, 1e21) as integer literals, which the
    # strict parser refuses (see test_large_integral_double_is_refused_on_reparse).
    | st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda f: not (f.is_integer() and MAX_SAFE_INT < abs(f) < 1e21)
    )
    | st.text()
)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


def _same(a: Any, b: Any) -> bool:
    """Equality where an integral float may come back as an int (RFC 8785 writes 5.0 as 5)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(b, int | float) and isinstance(a, int | float) and math.isclose(a, b, rel_tol=0)
    if isinstance(a, list):
        return (
            isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(_json)
def test_roundtrip_property(value: Any) -> None:
    data = canonical(value)
    back = parse_strict(data, "roundtrip.json")
    assert _same(value, back)
    # canonical form is a fixed point, and independent of how the input was spelled
    assert canonical(back) == data
    assert canonical(parse_strict(json.dumps(value, indent=1, ensure_ascii=True), "f")) == data


# -- the fast paths give the same answers as the plain ones -------------------------------

_tricky_text = st.sampled_from(
    [
        '{"a":1,"a":2}',
        '{"a":[1,{"b":NaN}]}',
        '{"x":"\\ud800"}',
        '{"\\udc00":1}',
        '{"x":"\\ud83d\\ude00"}',
        '{"x":"\\\\ud800"}',
        '{"n":9007199254740992}',
        '{"n":-9007199254740991}',
        '{"n":12345678901234567890}',
        '{"f":1e400}',
        "[Infinity]",
        '{"ok":[1,2.5,"s",null,true]}',
    ]
)


def _slow_parse(text: str | bytes) -> Any:
    """The reference: hooks plus a full `_check` walk, as parse_strict did before its fast path."""
    from store import canonical as c

    try:
        value = json.loads(
            text,
            object_pairs_hook=c._pairs_hook,
            parse_constant=c._constant,
            parse_float=c._float,
            parse_int=c._int,
        )
        c._check(value, "$")
    except c._RejectError as exc:
        return ("refused", exc.path, str(exc))
    return ("ok", value)


def _fast_parse(text: str | bytes) -> Any:
    try:
        value = parse_strict(text, "f.json")
    except InputError as exc:
        return ("refused", exc.path, exc.message)
    return ("ok", value)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_tricky_text, _json.map(lambda v: json.dumps(v, ensure_ascii=True))), st.booleans())
def test_parse_strict_fast_path_matches_full_walk(text: str, as_bytes: bool) -> None:
    data: str | bytes = text.encode("utf-8") if as_bytes else text
    assert repr(_fast_parse(data)) == repr(_slow_parse(data))


_entry_keys = st.text(min_size=1, max_size=6).filter(lambda k: k != "seq")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_entry_keys, _json, max_size=5), st.integers(min_value=0, max_value=MAX_SAFE_INT))
def test_stamping_seq_equals_canonicalizing_with_seq(body: dict[str, Any], seq: int) -> None:
    from store.entries import LogEntry
    from store.merkle import leaf_hash

    data = canonical(body)
    entry = LogEntry(data, json.loads(data), leaf_hash(data), True)
    stamped = entry.at(seq)
    expected = canonical({**body, "seq": seq})
    assert stamped.data == expected
    assert stamped.leaf == leaf_hash(expected)
    assert stamped.body == json.loads(expected)
    assert list(stamped.body) == list(json.loads(expected))
    # and a stamp on bytes that were read back (not known canonical) still re-canonicalizes
    assert LogEntry.from_bytes(data).at(seq).data == expected


_any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()))
_any_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats()
    | _any_text
    | st.sampled_from(["\ue000", "\U0001f600", "\ud800", "\x7f", "\u2028", '\x00\x1f\b\f\n\r\t"\\']),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(
            _any_text | st.sampled_from(["\ue000", "\U0001f600", "a", "\ud800"]), children, max_size=4
        )
    ),
    max_leaves=25,
)


def _rfc8785(value: Any) -> Any:
    import rfc8785

    try:
        return bytes(rfc8785.dumps(value))
    except Exception as exc:
        return (type(exc), str(exc))


def _ours(value: Any) -> Any:
    try:
        return canonical(value)
    except Exception as exc:
        return (type(exc), str(exc))


@settings(max_examples=1000, deadline=None)
@given(_any_json)
def test_canonical_fast_path_is_byte_equal_to_rfc8785(value: Any) -> None:
    assert _ours(value) == _rfc8785(value)


@settings(max_examples=3000, deadline=None)
@given(
    st.floats(min_value=1e-5, max_value=1e17, allow_nan=False)
    | st.floats(min_value=-1e17, max_value=-1e-5, allow_nan=False)
    | st.sampled_from([1e-4, 0.00010000000000000002, 1e16, 9999999999999998.0, 0.1, 0.5, 123.456])
)
def test_canonical_fast_path_floats_near_its_bounds_match_rfc8785(x: float) -> None:
    assert _ours({"score": x, "list": [x, "a"]}) == _rfc8785({"score": x, "list": [x, "a"]})


def test_canonical_fast_path_key_order_is_utf16() -> None:
    value = {"\ue000": 1, "\U0001f600": 2, "a": [True, None, "x"]}
    assert canonical(value) == _rfc8785(value)
    assert _ours({"n": 2**53}) == _rfc8785({"n": 2**53})
    assert _ours({"s": "\ud800"}) == _rfc8785({"s": "\ud800"})
    assert _ours({1: "x"}) == _rfc8785({1: "x"})


@settings(max_examples=500, deadline=None)
@given(
    kind=st.sampled_from(list(EntryKind)),
    payload_b64=st.one_of(
        st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()),
        st.binary(max_size=64).map(lambda b: base64.urlsafe_b64encode(b).decode()),
        _any_text,
    ),
    payload_type=st.text(max_size=8),
    keyid=st.text(max_size=8),
    annotations=st.dictionaries(
        st.sampled_from(["a", "faults", "ingested_at", "seq", "zz", "\ue000", "\U0001f600"]),
        _json,
        max_size=3,
    ),
)
def test_make_entry_equals_canonical_of_the_whole_entry(
    kind: EntryKind, payload_b64: str, payload_type: str, keyid: str, annotations: dict[str, Any]
) -> None:
    from store.dsse import Envelope, Signature
    from store.entries import make_entry
    from store.merkle import leaf_hash

    env = Envelope(payload_type, payload_b64, (Signature(keyid, b"\x01\x02"),))
    body = {"kind": kind, "envelope": env.to_json(), **annotations}
    expected = _ours(body)
    try:
        entry = make_entry(kind, env, **annotations)
    except Exception as exc:
        assert (type(exc), str(exc)) == expected
        return
    assert entry.data == expected
    assert entry.body == json.loads(expected)
    assert entry.leaf == leaf_hash(expected)
