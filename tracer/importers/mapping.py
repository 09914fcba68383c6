"""Spans → imported answers: OpenInference and OpenTelemetry GenAI attributes, every field attested.

One answer per root span (a span whose parent is not in the export) whose subtree holds a
model call: an OpenInference `LLM` span or a GenAI `chat` / `text_completion` /
`generate_content` span.  The mapping table (attribute → field → attestation) is
docs/import.md; this module is its implementation.  Nothing here reads the vault.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from hashlib import sha256
from typing import Any

from store.attest import REDACTION_MARKERS, Attestation, FieldFact, is_redacted
from store.canonical import canonical, parse_strict
from store.errors import InputError
from store.textrules import id_problem
from tracer.importers.otlp import ExportFormatError, Span, span_time

__all__ = [
    "PLACEHOLDERS",
    "Document",
    "ImportedAnswer",
    "LlmCall",
    "ReadOptions",
    "Skipped",
    "TextField",
    "answers_of",
    "check_id",
    "ends_early",
    "identifier",
    "inferred_limit",
    "trace_digest",
]

A = Attestation
_LLM_OPS = frozenset({"chat", "text_completion", "generate_content"})
_TEXT_MIME = frozenset({"", "text/plain"})
#: OpenLLMetry (Traceloop): a retrieval span's operation, and its JSON input and output
_OLL_RETRIEVE = "vector_db_retrieve"
_OLL_IN, _OLL_OUT = "traceloop.entity.input", "traceloop.entity.output"
#: what instrumentations write when they do not know a value: "not captured", never a value
PLACEHOLDERS = frozenset({"unknown", "none", "null", "n/a", "na", "undefined", "<unknown>"})


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What the reader knows about how the export was produced."""

    #: the exporter's attribute value length limit (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT), if
    #: known: a text of exactly this length (or more) is taken as cut, never as whole
    value_length_limit: int | None = None
    redaction_markers: tuple[str, ...] = REDACTION_MARKERS
    #: how the limit is known: given (`--value-length-limit`), or inferred from the file
    limit_source: str = "given"


@dataclass(frozen=True, slots=True)
class TextField:
    """A text of the export: the value only when it is whole (attested or importer-computed)."""

    value: str | None
    fact: FieldFact

    @classmethod
    def missing(cls, state: Attestation, source: str = "", detail: str = "") -> TextField:
        return cls(None, FieldFact(state, source, detail))


@dataclass(frozen=True, slots=True)
class Value:
    """A non-text value (an id, a score, a name) and its attestation."""

    value: Any
    fact: FieldFact


@dataclass(frozen=True, slots=True)
class Document:
    span_id: str
    index: int
    rank: int
    content: TextField
    ref: Value
    score: Value
    metadata: Value
    query: TextField
    retrieved_at: str
    source: str
    #: GenAI `gen_ai.data_source.id` of the retrieval span: the store the text came from
    data_source: Value
    #: where the metadata is (`file:line`, JSON path), to name it when a mapped id is refused
    line: int = 0
    metadata_path: str = "$"


@dataclass(frozen=True, slots=True)
class LlmCall:
    span_id: str
    end_ns: int
    model: Value
    prompts: tuple[TextField, ...]
    output: TextField


@dataclass(frozen=True, slots=True)
class ImportedAnswer:
    trace_id: str
    root_span_id: str
    span_ids: tuple[str, ...]
    file: str
    lines: tuple[int, int]
    question: TextField
    answer: TextField
    generated_at: Value
    service: Value
    service_version: Value
    session_id: Value
    model: Value
    documents: tuple[Document, ...]
    calls: tuple[LlmCall, ...]
    #: SHA-256 of the trace's content: RFC 8785 of its spans' (span id, SHA-256 of the
    #: span object, SHA-256 of its resource and scope), by span id
    trace_sha256: str = ""

    @property
    def answer_id(self) -> str:
        """Stable across imports of the same export: a second import is refused, not doubled."""
        return "imp-" + sha256(f"{self.trace_id}:{self.root_span_id}".encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Skipped:
    file: str
    trace_id: str
    root_span_id: str
    reason: str


@dataclass
class _Reader:
    opts: ReadOptions
    spans: list[Span] = field(default_factory=list)

    def text(self, span: Span, key: str, what: str) -> TextField:
        value = span.attributes.get(key)
        where = span.where(key)
        if value is None:
            if span.dropped_attributes > 0:
                return TextField.missing(
                    A.TRUNCATED,
                    f"line {span.line} {span.path}.droppedAttributesCount",
                    f"{what}: not in span {span.span_id}, which dropped {span.dropped_attributes} "
                    "attribute(s) at its count limit",
                )
            return TextField.missing(A.ABSENT, "", f"{what}: no {key} on span {span.span_id}")
        if not isinstance(value, str):
            return TextField.missing(A.ABSENT, where, f"{what}: {key} is not a string")
        return self.classify(value, where, what)

    def content(self, span: Span, key: str, what: str) -> TextField:
        """A retrieved text: an empty one holds nothing (it is in every prompt, so it proves none)."""
        if span.attributes.get(key) == "":
            return TextField.missing(A.ABSENT, span.where(key), f"{what}: {key} is an empty text")
        return self.text(span, key, what)

    def classify(self, value: str, where: str, what: str) -> TextField:
        if is_redacted(value, self.opts.redaction_markers):
            return TextField.missing(
                A.REDACTED, where, f"{what}: holds a redaction marker ({len(value)} characters)"
            )
        limit = self.opts.value_length_limit
        if limit is not None and len(value) >= limit:
            how = "" if self.opts.limit_source == "given" else f" ({self.opts.limit_source})"
            size = (
                f"{len(value)} characters, at the exporter's value length limit {limit}{how}"
                if len(value) == limit
                else f"{len(value)} characters, over the value length limit {limit} given: taken as cut "
                "(is that the exporter's limit?)"
            )
            return TextField.missing(A.TRUNCATED, where, f"{what}: {size}")
        return TextField(value, FieldFact(A.IMPORTER_COMPUTED, where))


def _kind(span: Span) -> str:
    kind = span.text("openinference.span.kind")
    if kind:
        return kind.upper()
    op = span.text("gen_ai.operation.name") or ""
    if op in _LLM_OPS:
        return "LLM"
    if op in ("retrieval", _OLL_RETRIEVE):
        return "RETRIEVER"
    return ""


def _indexed(span: Span, prefix: str) -> list[int]:
    """The indices i of `prefix.{i}.…` attributes, in order."""
    found: set[int] = set()
    for key in span.attributes:
        if key.startswith(prefix):
            head = key[len(prefix) :].split(".", 1)[0]
            if head.isdigit():
                found.add(int(head))
    return sorted(found)


def check_id(file: str, line: int, path: str, what: str, value: str) -> str:
    """`value` if it may stand as an identifier (the producer's rule, `store.textrules.id_problem`).

    Ids, names and versions are shown verbatim on one line in every output, so one holding
    a newline, an escape or a bidi control could forge a line of a report: it refuses the
    file, naming the line and the JSON path, as a producer's manifest is refused at ingest.
    """
    problem = id_problem(value)
    if problem is not None:
        raise ExportFormatError(file, line, path, f"{what} is no identifier: it {problem}")
    return value


def identifier(span: Span, key: str, value: str, what: str) -> str:
    """`check_id` of the string attribute `key` of `span`."""
    path = span.attribute_paths.get(key, span.path) + ".stringValue"
    return check_id(span.file, span.line, path, f"{what} ({key})", value)


def _json_attr(r: _Reader, span: Span, key: str, what: str) -> Value:
    """A JSON-string attribute parsed strictly; a cut one is `truncated`, a bad one refuses the file."""
    raw = span.attributes.get(key)
    if raw is None:
        t = r.text(span, key, what)
        return Value(None, t.fact)
    where = span.where(key)
    if isinstance(raw, dict):
        return Value(raw, FieldFact(A.IMPORTER_COMPUTED, where))
    if not isinstance(raw, str):
        return Value(None, FieldFact(A.ABSENT, where, f"{what}: not a JSON string"))
    t = r.classify(raw, where, what)
    if t.value is None:
        return Value(None, t.fact)
    early = ends_early(t.value)
    if early is not None:
        return Value(
            None,
            FieldFact(
                A.TRUNCATED,
                where,
                f"{what}: the JSON ends early at {len(t.value)} characters ({early}): cut by the "
                "exporter's value length limit?",
            ),
        )
    try:
        parsed = parse_strict(t.value, span.file)
    except InputError as exc:
        path = span.attribute_paths.get(key, span.path)
        raise ExportFormatError(
            span.file,
            span.line,
            f"{path}.stringValue",
            f"{key} is not strict JSON ({exc.path}: {exc.message})",
        ) from exc
    return Value(parsed, FieldFact(A.IMPORTER_COMPUTED, where))


#: what json reports when a text stops inside a value, rather than going wrong in it
_EARLY = (
    "Unterminated string",
    "Expecting value",
    "Expecting ',' delimiter",
    "Expecting ':' delimiter",
    "Expecting property name enclosed in double quotes",
)


def ends_early(text: str) -> str | None:
    """Why `text` is the start of a JSON text that stops before its end (a cut value), or
    None: it parses, or it goes wrong before its last character (really malformed, and
    refused).  A cut is the only failure whose place is the very end of the text (or an
    unterminated string that runs to it)."""
    if not text.strip():
        return None
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return _cut_reason(text, exc)
    return None


def _cut_reason(text: str, exc: json.JSONDecodeError) -> str | None:
    """Why the failure `exc` is a cut at the end of `text`, or None when it is malformed."""
    if exc.msg.startswith("Unterminated string") or (
        exc.msg.startswith(_EARLY) and exc.pos >= len(text.rstrip())
    ):
        return exc.msg.lower()
    if exc.msg.startswith("Invalid \\uXXXX escape") and exc.pos >= len(text) - 6:
        return "an escape cut inside"
    if exc.msg.startswith("Invalid \\escape") or exc.msg.startswith("Invalid control"):
        return None
    return _cut_scalar(text, exc.pos)


def _cut_scalar(text: str, pos: int) -> str | None:
    """A number, escape or literal cut at the end of `text`, failing at `pos`, or None."""
    if pos >= len(text.rstrip()) - 1 and text.rstrip()[-1:] in ("\\", "-", ".", "e", "E", "+"):
        return "a value cut inside"  # "0.", "1e", a lone backslash of an escape
    if pos >= len(text) - 5 and _cut_literal(text):
        return "a literal cut inside"
    return None


def _cut_literal(text: str) -> bool:
    tail = text.rstrip()
    for word in ("true", "false", "null"):
        for n in range(1, len(word)):
            if tail.endswith(word[:n]) and not tail.endswith(word):
                return True
    return False


def _string_lengths(spans: Sequence[Span]) -> tuple[dict[int, int], dict[int, set[str]]]:
    """How many string attribute values of 16 characters or more have each length, and up
    to 64 distinct values of each length."""
    lengths: dict[int, int] = {}
    at: dict[int, set[str]] = {}
    for s in spans:
        for v in s.attributes.values():
            if type(v) is str and len(v) >= 16:
                n = len(v)
                lengths[n] = lengths.get(n, 0) + 1
                if len(at.setdefault(n, set())) < 64:
                    at[n].add(v)
    return lengths, at


def inferred_limit(spans: Sequence[Span]) -> tuple[int, int] | None:
    """(length, count) when the file's longest string attribute values stop at one common
    length L (at least 32 characters), as a collector's OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT
    leaves them: two or more different values of exactly L, and either one of them is JSON
    that ends early, or they are a spike — at least 3, and 3 times as many as at any length
    in the 16 below L (templated texts of similar lengths make no spike; cut ones pile up
    at L).  Values that long are then taken as cut (`truncated`), never as whole."""
    lengths, at = _string_lengths(spans)
    if not lengths:
        return None
    longest = max(lengths)
    count, values = lengths[longest], at[longest]
    if longest < 32 or len(values) < 2:
        return None
    cut_json = any(v.lstrip()[:1] in ("{", "[") and ends_early(v) is not None for v in values)
    near = max((lengths.get(n, 0) for n in range(longest - 16, longest)), default=0)
    if cut_json or (count >= 3 and count >= 3 * near):
        return longest, count
    return None


def _number(value: Any, where: str, what: str) -> Value:
    """A score: a number is kept; anything else is described, never read as a number."""
    if value is None:
        return Value(None, FieldFact(A.ABSENT, "", f"no {what} recorded"))
    if isinstance(value, bool) or not isinstance(value, int | float):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        return Value(
            None,
            FieldFact(
                A.ABSENT, where, f"the {what} is not a number ({type(value).__name__} {shown}): not kept"
            ),
        )
    return Value(float(value), FieldFact(A.IMPORTER_COMPUTED, where))


def _score(span: Span, key: str) -> Value:
    return _number(span.attributes.get(key), span.where(key), "score")


def _data_source(span: Span) -> Value:
    """GenAI `gen_ai.data_source.id`: the data source (store, index) a retrieval read from."""
    key = "gen_ai.data_source.id"
    value = span.attributes.get(key)
    if isinstance(value, str) and value:
        identifier(span, key, value, "the data source")
        return Value(value, FieldFact(A.IMPORTER_COMPUTED, span.where(key), f"{key} of span {span.span_id}"))
    if value is not None and value != "":
        return Value(None, FieldFact(A.ABSENT, span.where(key), f"{key} is not a string"))
    return Value(None, FieldFact(A.ABSENT, "", f"no {key} on span {span.span_id}"))


def _documents(r: _Reader, span: Span, prefix: str, query: TextField) -> list[Document]:
    out: list[Document] = []
    for rank, i in enumerate(_indexed(span, prefix), start=1):
        base = f"{prefix}{i}.document."
        ref = span.text(base + "id")
        if ref:
            identifier(span, base + "id", ref, f"document {i} id")
        out.append(
            Document(
                span_id=span.span_id,
                index=i,
                rank=rank,
                content=r.content(span, base + "content", f"document {i} content"),
                ref=Value(ref, FieldFact(A.IMPORTER_COMPUTED, span.where(base + "id")))
                if ref
                else Value(None, FieldFact(A.ABSENT, "", f"no {base}id on span {span.span_id}")),
                score=_score(span, base + "score"),
                metadata=_json_attr(r, span, base + "metadata", f"document {i} metadata"),
                query=query,
                retrieved_at=span_time(span.end_ns),
                source=f"line {span.line} {span.path}",
                data_source=_data_source(span),
                line=span.line,
                metadata_path=span.attribute_paths.get(base + "metadata", span.path) + ".stringValue",
            )
        )
    return out


def _genai_documents(r: _Reader, span: Span, query: TextField) -> list[Document]:
    """`gen_ai.retrieval.documents`: ids and scores only (the convention records no content)."""
    docs = _json_attr(r, span, "gen_ai.retrieval.documents", "retrieved documents")
    if not isinstance(docs.value, list):
        return []
    out: list[Document] = []
    where = span.where("gen_ai.retrieval.documents")
    for i, d in enumerate(docs.value):
        if not isinstance(d, dict):
            continue
        ref, score = d.get("id"), d.get("score")
        if isinstance(ref, str):
            path = span.attribute_paths.get("gen_ai.retrieval.documents", span.path)
            check_id(span.file, span.line, f"{path}.stringValue", f"document {i} id ($[{i}].id)", ref)
        content = d.get("content")
        if content == "":
            text = TextField.missing(A.ABSENT, f"{where}[{i}].content", f"document {i} content: empty text")
        elif isinstance(content, str):
            text = r.classify(content, f"{where}[{i}].content", f"document {i} content")
        else:
            text = TextField.missing(
                A.ABSENT, "", "the GenAI retrieval convention records no document content"
            )
        out.append(
            Document(
                span_id=span.span_id,
                index=i,
                rank=i + 1,
                content=text,
                ref=Value(str(ref), FieldFact(A.IMPORTER_COMPUTED, f"{where}[{i}].id"))
                if isinstance(ref, str | int) and not isinstance(ref, bool) and ref != ""
                else Value(None, FieldFact(A.ABSENT, "", f"document {i} has no id")),
                score=_number(score, f"{where}[{i}].score", "score"),
                metadata=Value(
                    None, FieldFact(A.ABSENT, "", "the GenAI retrieval convention records no metadata")
                ),
                query=query,
                retrieved_at=span_time(span.end_ns),
                source=f"line {span.line} {span.path}",
                data_source=_data_source(span),
            )
        )
    return out


def _entity_member(r: _Reader, span: Span, key: str, member: str, what: str) -> TextField:
    """A text member (`inputs`, `outputs`, `query`) of an OpenLLMetry entity JSON attribute."""
    parsed = _json_attr(r, span, key, what)
    if parsed.value is None:
        return TextField(None, parsed.fact)
    where = f"{parsed.fact.source} $.{member}"
    value = parsed.value.get(member) if isinstance(parsed.value, dict) else None
    if isinstance(value, dict):  # {"inputs": {"question": ...}}: one named text
        texts = [value[k] for k in ("question", "input", "query") if isinstance(value.get(k), str)]
        value = texts[0] if texts else None
    if not isinstance(value, str):
        return TextField.missing(A.ABSENT, where, f"{what}: {key} holds no text {member!r}")
    return r.classify(value, where, what)


def _traceloop_documents(r: _Reader, span: Span) -> list[Document]:
    """OpenLLMetry's `vector_db_retrieve` span: `traceloop.entity.output` is
    `{"documents": [{"page_content", "metadata"}, ...]}`, the query is in its input."""
    query = _entity_member(r, span, _OLL_IN, "query", "query")
    parsed = _json_attr(r, span, _OLL_OUT, "retrieved documents")
    base = Document(
        span_id=span.span_id,
        index=0,
        rank=1,
        content=TextField(None, parsed.fact),
        ref=Value(None, FieldFact(A.ABSENT, "", "OpenLLMetry records no document id")),
        score=Value(None, FieldFact(A.ABSENT, "", "OpenLLMetry records no score")),
        metadata=Value(None, parsed.fact),
        query=query,
        retrieved_at=span_time(span.end_ns),
        source=f"line {span.line} {span.path}",
        data_source=_data_source(span),
    )
    if parsed.value is None:
        if parsed.fact.state == A.ABSENT:
            return []
        # cut or redacted: how many documents there were is unknown; say so once
        detail = f"{parsed.fact.detail}; the retrieved documents cannot be read, nor counted"
        fact = FieldFact(parsed.fact.state, parsed.fact.source, detail)
        return [replace(base, content=TextField(None, fact), metadata=Value(None, fact))]
    docs = parsed.value.get("documents") if isinstance(parsed.value, dict) else None
    where = span.where(_OLL_OUT)
    return [
        _traceloop_document(r, span, base, f"{where} $.documents[{i}]", i, d)
        for i, d in enumerate(docs if isinstance(docs, list) else [])
        if isinstance(d, dict)
    ]


def _traceloop_document(
    r: _Reader, span: Span, base: Document, at: str, i: int, d: dict[str, Any]
) -> Document:
    """Document `i` of an OpenLLMetry retrieval, `d` found at `at`; its id is checked as an id."""
    text = d.get("page_content")
    if text == "" or not isinstance(text, str):
        content = TextField.missing(A.ABSENT, at, f"document {i} content: no page_content text")
    else:
        content = r.classify(text, f"{at}.page_content", f"document {i} content")
    meta = d.get("metadata")
    ref = d.get("id")
    ref_value = base.ref
    if isinstance(ref, str) and ref:
        check_id(
            span.file, span.line, span.attribute_paths[_OLL_OUT] + ".stringValue", f"document {i} id", ref
        )
        ref_value = Value(ref, FieldFact(A.IMPORTER_COMPUTED, f"{at}.id"))
    return replace(
        base,
        index=i,
        rank=i + 1,
        content=content,
        ref=ref_value,
        metadata=Value(meta, FieldFact(A.IMPORTER_COMPUTED, f"{at}.metadata"))
        if isinstance(meta, dict)
        else Value(None, FieldFact(A.ABSENT, "", f"document {i} has no metadata")),
        line=span.line,
        metadata_path=span.attribute_paths[_OLL_OUT] + ".stringValue",
    )


def _genai_messages(r: _Reader, span: Span, key: str, what: str, role: str | None = None) -> list[TextField]:
    """The text parts of `gen_ai.input.messages` / `.output.messages` /
    `.system_instructions` (of messages of `role`, if given); external parts are absent."""
    parsed = _json_attr(r, span, key, what)
    if parsed.value is None:
        return [TextField(None, parsed.fact)] if parsed.fact.state != A.ABSENT else []
    where = parsed.fact.source
    out: list[TextField] = []
    messages = parsed.value if isinstance(parsed.value, list) else []
    if key == "gen_ai.system_instructions":  # a list of parts, not of messages
        messages = [{"parts": messages}]
    for i, m in enumerate(messages):
        for j, part in enumerate(_parts_of(m, role)):
            text = _genai_part(r, part, f"{where}[{i}].parts[{j}]", f"{what} {i}")
            if text is not None:
                out.append(text)
    return out


def _parts_of(message: object, role: str | None) -> list[object]:
    """A GenAI message's parts (none when it is not of `role`, if given, or has no part list)."""
    if role is not None and (not isinstance(message, dict) or message.get("role") != role):
        return []
    parts = message.get("parts", []) if isinstance(message, dict) else []
    return parts if isinstance(parts, list) else []


def _genai_part(r: _Reader, part: object, at: str, what: str) -> TextField | None:
    """A message part's text, an absent field for external content, None for other parts."""
    if not isinstance(part, dict):
        return None
    ptype = part.get("type")
    if ptype == "text" and isinstance(part.get("content"), str):
        return r.classify(part["content"], at, what)
    if ptype in ("uri", "file", "blob"):
        ref = part.get("uri") or part.get("file_id") or ptype
        return TextField.missing(A.ABSENT, at, f"{what}: content stored externally ({ref})")
    return None


def _input_messages(r: _Reader, span: Span) -> list[TextField]:
    """OpenInference `llm.input_messages`: each message's content, or its content parts."""
    out: list[TextField] = []
    for i in _indexed(span, "llm.input_messages."):
        base = f"llm.input_messages.{i}.message."
        if base + "content" in span.attributes:
            out.append(r.text(span, base + "content", f"prompt message {i}"))
        for j in _indexed(span, base + "contents."):
            key = f"{base}contents.{j}.message_content.text"
            if key in span.attributes:
                out.append(r.text(span, key, f"prompt message {i} part {j}"))
    return out


def _prompts(r: _Reader, span: Span) -> list[TextField]:
    out = _input_messages(r, span)
    prompts = span.attributes.get("llm.prompts")
    if isinstance(prompts, tuple):
        where = span.where("llm.prompts")
        out += [
            r.classify(p, f"{where}.arrayValue.values[{k}]", f"prompt {k}")
            for k, p in enumerate(prompts)
            if isinstance(p, str)
        ]
    for i in _indexed(span, "llm.prompts."):
        out.append(r.text(span, f"llm.prompts.{i}.prompt.text", f"prompt {i}"))
    out += _genai_messages(r, span, "gen_ai.system_instructions", "system instructions")
    out += _genai_messages(r, span, "gen_ai.input.messages", "prompt message")
    if not out and span.dropped_attributes > 0:
        out.append(r.text(span, "llm.input_messages.0.message.content", "prompt"))
    return out


def _output(r: _Reader, span: Span) -> TextField:
    outs = _indexed(span, "llm.output_messages.")
    if outs:
        return r.text(span, f"llm.output_messages.{outs[-1]}.message.content", "model output")
    genai = _genai_messages(r, span, "gen_ai.output.messages", "model output")
    if genai:
        return genai[-1]
    if (span.text("output.mime_type") or "") in _TEXT_MIME and "output.value" in span.attributes:
        return r.text(span, "output.value", "model output")
    return r.text(span, "llm.output_messages.0.message.content", "model output")


def _model(span: Span) -> Value:
    placeholder: tuple[str, str] | None = None
    for key in ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model"):
        name = span.text(key)
        if name and name.strip().lower() in PLACEHOLDERS:
            placeholder = placeholder or (key, name)
        elif name:
            identifier(span, key, name, "the model name")
            return Value(name, FieldFact(A.IMPORTER_COMPUTED, span.where(key)))
    if placeholder is not None:
        key, name = placeholder
        return Value(
            None,
            FieldFact(A.ABSENT, span.where(key), f"not captured: {key} is the placeholder {name!r}, no name"),
        )
    return Value(None, FieldFact(A.ABSENT, "", "no model name recorded"))


def _session(spans: Sequence[Span]) -> Value:
    """OpenInference `session.id`, else GenAI `gen_ai.conversation.id`, else OpenLLMetry's
    `traceloop.association.properties.session_id`."""
    for key in ("session.id", "gen_ai.conversation.id", "traceloop.association.properties.session_id"):
        v = _attr_value(spans, key, "the session id")
        if v.value is not None:
            return v
    return Value(None, FieldFact(A.ABSENT, "", "no session id recorded"))


def _attr_value(spans: Iterable[Span], key: str, what: str, resource: bool = False) -> Value:
    """An identifier-like attribute (service name, version, session id) of the first span
    holding it, checked as an identifier; a placeholder ("unknown") is no value."""
    for s in spans:
        value = (s.resource if resource else s.attributes).get(key)
        if isinstance(value, str) and value and value.strip().lower() not in PLACEHOLDERS:
            if resource:
                path = s.resource_paths[key]
                check_id(s.file, s.line, f"{path}.stringValue", f"{what} ({key})", value)
                where = f"line {s.line} {path}"
            else:
                identifier(s, key, value, what)
                where = s.where(key)
            return Value(value, FieldFact(A.IMPORTER_COMPUTED, where))
    return Value(None, FieldFact(A.ABSENT, "", f"no {key} recorded"))


def _question(r: _Reader, root: Span, calls: Sequence[tuple[Span, LlmCall]]) -> TextField:
    if (root.text("input.mime_type") or "") in _TEXT_MIME and "input.value" in root.attributes:
        return r.text(root, "input.value", "question")
    if _OLL_IN in root.attributes:
        return _entity_member(r, root, _OLL_IN, "inputs", "question")
    return _user_question(r, calls)


def _user_question(r: _Reader, calls: Sequence[tuple[Span, LlmCall]]) -> TextField:
    """The question as the model calls' last user message: OpenInference's first, then GenAI's."""
    for span, _call in calls:
        users = [
            i
            for i in _indexed(span, "llm.input_messages.")
            if span.text(f"llm.input_messages.{i}.message.role") == "user"
        ]
        if users:
            return r.text(span, f"llm.input_messages.{users[-1]}.message.content", "question")
    for span, _call in reversed(calls):
        said = _genai_messages(r, span, "gen_ai.input.messages", "question", role="user")
        if said:
            return said[-1]
    return TextField.missing(A.ABSENT, "", "no question: the root span has no plain-text input.value")


def _answer(r: _Reader, root: Span, calls: Sequence[tuple[Span, LlmCall]]) -> TextField:
    if (root.text("output.mime_type") or "") in _TEXT_MIME and "output.value" in root.attributes and calls:
        if root.span_id != calls[-1][0].span_id:
            return r.text(root, "output.value", "answer")
    if _OLL_OUT in root.attributes and calls and root.span_id != calls[-1][0].span_id:
        return _entity_member(r, root, _OLL_OUT, "outputs", "answer")
    if calls:
        return calls[-1][1].output
    return TextField.missing(A.ABSENT, "", "no answer recorded")


def answers_of(spans: Sequence[Span], opts: ReadOptions) -> tuple[list[ImportedAnswer], list[Skipped]]:
    """The answers an export holds (one per root span with a model call), and what was skipped."""
    r = _Reader(opts)
    # a span is (trace id, span id): span ids are unique only within their trace, and a
    # parent is always in the child's own trace (the reader refuses a span written twice)
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    children: dict[tuple[str, str], list[Span]] = {}
    roots: list[Span] = []
    for s in spans:
        if s.parent_id and (s.trace_id, s.parent_id) in by_id:
            children.setdefault((s.trace_id, s.parent_id), []).append(s)
        else:
            roots.append(s)
    answers: list[ImportedAnswer] = []
    reached: set[tuple[str, str]] = set()
    trees = [
        (root, _tree_of(root, children, reached))
        for root in sorted(roots, key=lambda s: (s.start_ns, s.line, s.trace_id, s.span_id))
    ]
    skipped = _cycles(spans, by_id, reached)
    for root, tree in trees:
        tree.sort(key=lambda s: (s.start_ns, s.end_ns, s.span_id))
        answer = _answer_of_tree(r, root, tree)
        if answer is None:
            skipped.append(
                Skipped(root.file, root.trace_id, root.span_id, "no model call (LLM span) in this trace")
            )
        else:
            answers.append(answer)
    return answers, skipped


def _tree_of(
    root: Span, children: dict[tuple[str, str], list[Span]], reached: set[tuple[str, str]]
) -> list[Span]:
    """`root` and every span below it, each added to `reached`."""
    tree: list[Span] = []
    todo = [root]
    while todo:
        s = todo.pop()
        tree.append(s)
        reached.add((s.trace_id, s.span_id))
        todo.extend(children.get((s.trace_id, s.span_id), ()))
    return tree


def _calls_of(r: _Reader, tree: list[Span]) -> list[tuple[Span, LlmCall]]:
    """The model calls (LLM spans) of a span tree, in the order they ended."""
    llm_spans = [s for s in tree if _kind(s) == "LLM"]
    return [
        (s, LlmCall(s.span_id, s.end_ns, _model(s), tuple(_prompts(r, s)), _output(r, s)))
        for s in sorted(llm_spans, key=lambda s: (s.end_ns, s.span_id))
    ]


def _answer_of_tree(r: _Reader, root: Span, tree: list[Span]) -> ImportedAnswer | None:
    """The answer one span tree (in start order) holds, or None when it has no model call."""
    calls = _calls_of(r, tree)
    if not calls:
        return None
    docs = [d for s in tree for d in _span_documents(r, s)]
    last = calls[-1][0]
    return ImportedAnswer(
        trace_id=root.trace_id,
        root_span_id=root.span_id,
        span_ids=tuple(s.span_id for s in tree),
        file=root.file,
        lines=(min(s.line for s in tree), max(s.line for s in tree)),
        question=_question(r, root, calls),
        answer=_answer(r, root, calls),
        generated_at=Value(
            span_time(last.end_ns),
            FieldFact(A.IMPORTER_COMPUTED, f"line {last.line} {last.path}.endTimeUnixNano"),
        ),
        service=_attr_value(tree, "service.name", "the service name", resource=True),
        service_version=_attr_value(tree, "service.version", "the service version", resource=True),
        session_id=_session(tree),
        model=calls[-1][1].model,
        documents=tuple(docs),
        calls=tuple(c for _s, c in calls),
        trace_sha256=trace_digest(tree),
    )


def _span_documents(r: _Reader, s: Span) -> list[Document]:
    """The documents a retriever returned or a reranker kept (none for other spans), read
    by the convention the span follows: OpenLLMetry, OpenTelemetry GenAI or OpenInference."""
    kind = _kind(s)
    if kind == "RERANKER":
        return _documents(r, s, "reranker.output_documents.", r.text(s, "reranker.query", "rerank query"))
    if kind != "RETRIEVER":
        return []
    operation = s.text("gen_ai.operation.name")
    if operation == _OLL_RETRIEVE and not _indexed(s, "retrieval.documents."):
        return _traceloop_documents(r, s)
    if operation == "retrieval" and not _indexed(s, "retrieval.documents."):
        return _genai_documents(r, s, r.text(s, "gen_ai.retrieval.query.text", "query"))
    query = (
        r.text(s, "input.value", "query")
        if (s.text("input.mime_type") or "") in _TEXT_MIME
        else TextField.missing(A.ABSENT, "", "the query is not plain text")
    )
    return _documents(r, s, "retrieval.documents.", query)


def _walk_to_loop(
    s: Span, by_id: dict[tuple[str, str], Span], loop_of: dict[tuple[str, str], tuple[Span, ...]]
) -> tuple[list[Span], tuple[Span, ...]]:
    """The parent chain from `s` up to the loop it runs into (a known one from `loop_of`, or
    a new one, rotated to start at its least span id), and that loop."""
    path: list[Span] = []
    index: dict[tuple[str, str], int] = {}
    cur = s
    while True:  # every unreached span's parent is in the export and unreached
        k = (cur.trace_id, cur.span_id)
        if k in loop_of:
            return path, loop_of[k]
        if k in index:
            ring = path[index[k] :]
            at = ring.index(min(ring, key=lambda p: p.span_id))
            return path, tuple(ring[at:] + ring[:at])
        index[k] = len(path)
        path.append(cur)
        cur = by_id[(cur.trace_id, cur.parent_id)]


def _cycles(
    spans: Sequence[Span], by_id: dict[tuple[str, str], Span], reached: set[tuple[str, str]]
) -> list[Skipped]:
    """Spans no root reaches: each one's parent chain runs into a loop (a span that is its
    own parent, or its descendant's child).  Such a tree has no root to answer from, so it
    is listed as skipped, with its loop named, never dropped in silence."""
    loop_of: dict[tuple[str, str], tuple[Span, ...]] = {}
    members: dict[tuple[str, ...], tuple[tuple[Span, ...], int]] = {}
    for s in spans:
        if (s.trace_id, s.span_id) in reached or (s.trace_id, s.span_id) in loop_of:
            continue
        path, loop = _walk_to_loop(s, by_id, loop_of)
        for p in path:
            loop_of[(p.trace_id, p.span_id)] = loop
        name = (loop[0].trace_id, *(p.span_id for p in loop))
        members[name] = (loop, members.get(name, (loop, 0))[1] + len(path))
    out: list[Skipped] = []
    for loop, count in members.values():
        first = loop[0]
        chain = " -> ".join(p.span_id for p in (*loop, first))
        out.append(
            Skipped(
                first.file,
                first.trace_id,
                first.span_id,
                f"cyclic span tree: the parent chain loops ({chain} by parentSpanId, line {first.line} "
                f"{first.path}); {count} span(s) with no root, so no answer to import",
            )
        )
    return out


def trace_digest(tree: Iterable[Span]) -> str:
    """What makes two copies of a trace the same: every span, byte for byte in RFC 8785
    form (so whitespace and member order do not count), with its resource and scope."""
    parts = sorted([s.span_id, s.content_sha256, s.context_sha256] for s in tree)
    return sha256(canonical(parts)).hexdigest()


def metadata_text(value: Any) -> str:
    """Metadata as one line of JSON (for display and for the record)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
