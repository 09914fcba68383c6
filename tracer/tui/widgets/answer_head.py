"""The header of an answer: ids, both states with their meanings, when and against what."""

from __future__ import annotations

from rich.text import Text

from tracer.engine.states import CURRENCY_MEANING, INTEGRITY_MEANING
from tracer.engine.trace import AnswerTrace
from tracer.tui.text import plain, safe_line, short, state_word

__all__ = ["answer_head"]


def answer_head(t: AnswerTrace) -> Text:
    out = Text.assemble(
        plain("answer "),
        safe_line(t.answer_id, "bold"),
        plain("  run "),
        safe_line(t.run_id),
        plain(f"  ({t.kind})  log entry {t.seq}  generated {t.generated_at}\n"),
    )
    out.append_text(plain("integrity "))
    out.append_text(state_word(t.integrity))
    out.append(f" ({INTEGRITY_MEANING.get(t.integrity, '')})\ncurrency  ")
    out.append_text(state_word(t.currency))
    out.append(f" ({CURRENCY_MEANING.get(t.currency, '')})\n")
    out.append(f"computed {t.computed_at} against checkpoint {t.checkpoint_size} {short(t.checkpoint_root)}")
    if t.visible:
        out.append("\nproducer ")
        out.append_text(safe_line(f"{t.producer.get('system')} {t.producer.get('version')}"))
        out.append(f"  signature {t.signature} ({short(t.signer)})")
    return out
