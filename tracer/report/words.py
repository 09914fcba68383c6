"""Plain-English names for the codes in report.json, shared by the HTML and Markdown views."""

from __future__ import annotations

from typing import Any

from tracer.engine.answertime import ANSWER_TIME_REASONS, lag_words

__all__ = [
    "PACK_CHECK_CODE",
    "answer_time_text",
    "candidates_intro",
    "checkpoint_headline",
    "finding_record",
    "heading_path",
    "hold_case",
    "hold_reason",
    "is_revision_tombstone",
    "locator_text",
    "normalizer_words",
    "reason_text",
    "record_kind_text",
    "role_text",
    "subject_label",
]

_SUBJECTS = {
    "question": "question text",
    "answer": "answer text",
    "retrieved": "retrieved text",
    "model_input": "model input text",
    "cited_revision": "text of cited revision",
    "current_revision": "text of current revision",
}


def subject_label(tb: dict[str, Any]) -> str:
    """What a tombstone stands in for, e.g. "text of cited revision A"."""
    subject = str(tb.get("subject", ""))
    base = _SUBJECTS.get(subject, subject)
    return f"{base} {tb['revision']}" if tb.get("revision") else base


def is_revision_tombstone(tb: dict[str, Any], passage_id: str) -> bool:
    """A purged source revision behind this passage (its own texts have their own slots)."""
    return tb.get("passage_id") == passage_id and bool(tb.get("revision"))


def heading_path(headings: list[str]) -> str:
    """A heading path as one line; the caller escapes the result."""
    return " › ".join(headings) if headings else "(no heading)"


def locator_text(loc: dict[str, Any]) -> str:
    """A locator as one line, e.g. "Warranty › Coverage, paragraph 0, characters 25–124"."""
    return (
        f"{heading_path(loc.get('heading_path', []))}, paragraph {loc.get('paragraph')}, "
        f"characters {loc.get('char_start')}–{loc.get('char_end')}"
    )


def candidates_intro(n: int, revision: str | None) -> str:
    """The sentence before an ambiguous quote's candidate places; the caller escapes it."""
    where = f"current revision {revision}" if revision else "the current revision"
    places = "1 place" if n == 1 else f"{n} places"
    return f"Candidate places in {where} ({places}); the document structure does not confirm any:"


def reason_text(currency: dict[str, Any]) -> str:
    """A currency reason code with its detail and the normalizer whose verdict it is, e.g.
    "quote_changed, under tracer-norm/2" or "source_deleted: deleted at 2026-09-14"."""
    reason, detail = str(currency.get("reason", "")), str(currency.get("detail", ""))
    text = f"{reason}: {detail}" if reason and detail else reason or detail
    normalizer = currency.get("normalizer")
    return f"{text}, under {normalizer}" if normalizer and text else text


def answer_time_text(at: dict[str, Any]) -> str:
    """A passage's answer-time fact in words, from report.json (no source text in it)."""
    state, why = str(at.get("state", "unknown")), str(at.get("reason", ""))
    head = f"At answer time: {state} ({why})"
    cited = (at.get("cited_revision") or {}).get("revision", "?")
    changed, in_force = at.get("changed_in"), at.get("in_force")
    if why == "changed_before_answer" and changed:
        return _changed_before_text(head, cited, changed, in_force)
    if why == "latest_at_answer" and at.get("cited_revision"):
        rev = at["cited_revision"]
        return (
            f"{head}: revision {rev.get('revision', '?')} was the latest revision at the answer time "
            f"{at.get('generated_at', '?')} (committed {rev.get('committed_at', '?')})."
        )
    if state == "superseded" and in_force:
        then = f"revision {in_force['revision']} ({in_force['committed_at']})"
        return f"{head}: {then} was in force instead of {cited}."
    return f"{head}: {ANSWER_TIME_REASONS.get(why, why)}."


def _changed_before_text(head: str, cited: Any, changed: dict[str, Any], in_force: Any) -> str:
    """The cited revision was already replaced when the answer was made: by which, how long before."""
    lag = changed.get("seconds_before_answer")
    when = f"{lag_words(int(lag))} before this answer" if isinstance(lag, int) else "before this answer"
    out = (
        f"{head}: the answer cites revision {cited}, but revision {changed['revision']}, "
        f"committed {changed['committed_at']} ({when}), already said otherwise"
    )
    if in_force and in_force.get("revision") != changed.get("revision"):
        out += f"; revision {in_force['revision']} was in force"
    return out + "."


#: said in place of a hold's reason or case the exporter may not read (tracer.engine.case.WITHHELD)
WITHHELD_TEXT = "withheld: written by someone who may read collections the exporter cannot"


def hold_reason(h: dict[str, Any], prefix: str = "") -> str:
    """A hold's reason (`prefix` "release." for its release's), or that it is withheld."""
    if f"{prefix}reason" in (h.get("withheld") or []):
        return f"reason {WITHHELD_TEXT}"
    item = (h.get("release") or {}) if prefix else h
    return f"reason {item.get('reason')}"


def hold_case(h: dict[str, Any]) -> str:
    """ "; under case C", "; the case … is withheld", or "" for a hold placed outside any case."""
    if "case_id" in (h.get("withheld") or []):
        return "; the case it was placed under is withheld"
    return f"; under case {h['case_id']}" if h.get("case_id") else ""


#: the check a reader runs without tracer (report.md and report.html print it verbatim;
#: tests/report/test_pack_steps.py runs it)
PACK_CHECK_CODE = """import hashlib, json
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

keys = json.load(open("keys.json"))
exporter = keys["exporter"]
key = SSlibKey.from_dict(exporter["key_id"], dict(exporter["sslib_key"]))
env = Envelope.from_dict(json.load(open("report.dsse.json")))
env.verify([key], 1)  # raises unless the exporter's key signed it
assert env.payload == open("report.json", "rb").read()
report = json.loads(env.payload)
for name, digest in report["files"].items():  # every other file of the pack
    assert hashlib.sha256(open(name, "rb").read()).hexdigest() == digest, name
assert open("checkpoint.note", "rb").read().decode() == report["checkpoint"]["note"]
print("signature and files OK")"""


def checkpoint_headline(r: dict[str, Any]) -> str:
    """Which checkpoint a pack's states are as of, in words (the caller escapes it).

    With `head`, the exporter signed a checkpoint over its own export entry before the
    states were computed: that is the one they are computed against (and the one the
    TUI's status bar showed after the export).  Otherwise the custodian's."""
    cp, head, ca = r["checkpoint"], r.get("head"), r.get("computed_against") or {}
    if head:
        return (
            f"against checkpoint size {head['size']}, root {head['root']}, which the exporter "
            f"{head['signer']['name']} signed over its own entries; a consistency proof ties it to the "
            f"custodian's checkpoint size {cp['size']}"
        )
    out = f"against the custodian's checkpoint size {cp['size']}, root {cp['root']}"
    if ca.get("size") not in (None, cp["size"]):
        out += (
            f" (the log held {ca['size']} entries when the states were computed; nothing was signed "
            "over the later ones)"
        )
    return out


def normalizer_words(r: dict[str, Any]) -> str:
    """How the pack's currency was checked, e.g. "checked under tracer-norm/2 (…)"."""
    chosen = r.get("normalizer") or "recorded"
    if chosen == "recorded":
        return (
            "checked under the normalizer each citation was recorded with (named beside each verdict; "
            "`tracer export --normalizer` chooses another)"
        )
    return (
        f"checked under {chosen}: citations recorded under tracer-norm/1 carried over to it (named "
        "beside each verdict)"
    )


#: log kinds and citing roles whose code word would mislead a reader: an investigator's
#: signed note is log kind `finding`, but a finding is what `verify` raises
_KIND_WORDS = {"finding": "investigator note (log kind finding)"}
_ROLE_WORDS = {"finding": "investigator note", "case_finding": "investigator note in the case"}


def record_kind_text(kind: str) -> str:
    """A log entry's kind as the records table shows it."""
    return _KIND_WORDS.get(kind, kind)


def role_text(role: str) -> str:
    """Why a record is cited (`records[].cited_by[].role`), in words where the code misleads."""
    return _ROLE_WORDS.get(role, role)


def finding_record(f: dict[str, Any]) -> str:
    """A verification finding's record in words, e.g. "answer A, passage P"; "" if none."""
    rec = f.get("record") or {}
    names = {"answer_id": "answer", "passage_id": "passage", "document_id": "document"}
    parts = [f"{word} {rec[key]}" for key, word in names.items() if rec.get(key)]
    return ", ".join(parts)
