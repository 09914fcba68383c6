"""The header of an answer: ids, both states in words, when and against what.

It stays above the scrolling body (so it never scrolls away at 80×24); the meanings of
the two states are spelled out in the body below, where there is room to wrap.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from tracer.engine.case import HoldView
from tracer.engine.times import utc
from tracer.engine.trace import AnswerTrace, PassageTrace
from tracer.engine.vocabulary import CURRENCY_MEANING, INTEGRITY_MEANING, Integrity
from tracer.tui.text import plain, safe_line, short, state_word
from tracer.tui.widgets.imported import imported_answer_line, imported_head
from tracer.tui.words import reason

__all__ = ["alerts", "answer_head", "answer_texts", "passage_texts", "state_meanings"]

#: text states that are an alarm, not an absence explained by a tombstone
_ALARMS = frozenset({Integrity.MISSING, Integrity.CHECKSUM_MISMATCH, Integrity.SIGNATURE_INVALID})


def passage_texts(passages: Sequence[PassageTrace]) -> list[tuple[str, Integrity]]:
    """(what, state) of the retained texts of `passages` the viewer may see."""
    out: list[tuple[str, Integrity]] = []
    for p in passages:
        if p.visible:
            out += [(f"passage {p.passage_id} retrieved", p.retrieved.state)]
            out += [(f"passage {p.passage_id} model input", p.model_input.state)]
    return out


def answer_texts(t: AnswerTrace) -> list[tuple[str, Integrity]]:
    """(what, state) of every historical text of the answer: question, answer, passages."""
    if not t.visible:
        return []
    return [("question", t.question.state), ("answer", t.answer.state), *passage_texts(t.passages)]


def _hold_line(holds: Sequence[HoldView]) -> Text:
    seqs = ", ".join(str(h.hold.seq) for h in holds)
    subjects = ", ".join(dict.fromkeys(f"{h.hold.subject_kind} {h.hold.subject}" for h in holds))
    return Text.assemble(
        plain("LEGAL HOLD in force", "bold reverse"),
        plain(f" ×{len(holds)} (log entry {seqs}) on "),
        safe_line(subjects),
        plain(": a purge is refused; details below, U releases"),
    )


def _text_lines(texts: Sequence[tuple[str, Integrity]]) -> list[Text]:
    """A tombstone line for purged texts, an alarm line for texts missing or altered."""
    out: list[Text] = []
    purged = [what for what, state in texts if state == Integrity.PURGED]
    if purged:
        out.append(
            Text.assemble(
                plain("TOMBSTONE", "bold reverse"),
                plain(f" {len(purged)} text(s) purged by retention, a tombstone in place: "),
                safe_line(", ".join(purged)),
            )
        )
    broken = [f"{what} {state}" for what, state in texts if state in _ALARMS]
    if broken:
        out.append(Text.assemble(plain("ALARM", "bold reverse"), plain(" "), safe_line(", ".join(broken))))
    return out


def alerts(texts: Sequence[tuple[str, Integrity]], holds: Sequence[HoldView] = ()) -> Text | None:
    """What must be on the first screen whatever the size: holds in force, tombstones
    in place of texts, texts missing or not matching their digest."""
    lines = ([_hold_line(holds)] if holds else []) + _text_lines(texts)
    return Text("\n").join(lines) if lines else None


def _states_line(t: AnswerTrace) -> Text:
    """Both states, the answer-level reasons in words, and a transform failure."""
    out = Text.assemble(
        plain("integrity "), state_word(t.integrity), plain("  ·  currency "), state_word(t.currency)
    )
    for i, code in enumerate(t.reasons):
        out.append_text(plain("  because " if i == 0 else ", "))
        out.append_text(reason(code))
    if t.visible and t.transform is not None:
        out.append_text(plain("  ·  transform "))
        out.append_text(state_word(t.transform))
        out.append_text(plain(" ("))
        out.append_text(safe_line(", ".join(p.passage_id for p in t.transform_failures)))
        out.append_text(plain(")"))
    return out


def _computed_line(t: AnswerTrace, log_now: int | None) -> Text:
    out = plain(
        f"\nstates computed {t.computed_at} against checkpoint {t.checkpoint_size} "
        f"{short(t.checkpoint_root, 12)}"
    )
    if log_now is not None and log_now != t.checkpoint_size:
        # only this session appends while it holds the vault: its own access entries and notes
        out.append_text(plain(f"; checkpoint now {log_now} (your access entries, notes and holds since)"))
    return out


def answer_head(
    t: AnswerTrace, log_now: int | None = None, tags: Sequence[str] = (), holds: Sequence[HoldView] = ()
) -> Text:
    """`log_now`: the session's checkpoint size now, when appends came after the states;
    `tags`: the case-file tags on the whole answer (those on claims are in the claims table);
    `holds`: the legal holds in force over it, named first so they are never scrolled away."""
    out = Text.assemble(plain("answer "), safe_line(t.answer_id, "bold"))
    if t.visible:
        out.append_text(Text.assemble(plain("  run "), safe_line(t.run_id), plain(f"  ({t.kind})")))
    out.append(f"  log entry {t.seq}\n")
    found = alerts(answer_texts(t), holds)
    if found is not None:
        out.append_text(found)
        out.append("\n")
    if t.visible and t.imported is not None:  # never scrolls away: the header stays put
        out.append_text(imported_head(t))
        out.append_text(plain("\n"))
    out.append_text(_states_line(t))
    if tags:
        out.append_text(plain("\ntags on the answer "))
        out.append_text(safe_line(", ".join(dict.fromkeys(tags))))
    out.append_text(_computed_line(t, log_now))
    return out


def state_meanings(t: AnswerTrace) -> Text:
    """Both states in plain words, then who produced the answer and its signature."""
    out = Text.assemble(
        state_word(t.integrity),
        plain(f": {INTEGRITY_MEANING.get(t.integrity, '')}\n"),
        state_word(t.currency),
        plain(f": {CURRENCY_MEANING.get(t.currency, '')}"),
    )
    if t.visible and t.imported is not None:
        out.append_text(plain("\n"))
        out.append_text(imported_answer_line(t))
        return out
    if t.visible:
        out.append_text(plain(f"\ngenerated {utc(t.generated_at)} by "))
        out.append_text(safe_line(f"{t.producer.system} {t.producer.version}"))
        out.append_text(plain(f"; producer signature {t.signature} (key {short(t.signer)})"))
    return out
