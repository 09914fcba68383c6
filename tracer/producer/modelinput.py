"""What the model was given of each passage: the rule a model-input text must meet, the
search for it in a prompt, and one record's ledger of what was sent.

The SDK never signs a model input it did not see: a text is accepted only as an exact
substring of the prompt it went in that also carries the retrieved text (`derivable`),
and a passage is marked `not_sent` only when no part of any prompt carries it.  One rule,
applied by `AnswerRecord.model_input`, `sent`, `not_sent` and the framework adapters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from store.words import ModelInput
from tracer.engine.textnorm import fold_whitespace
from tracer.producer.errors import ModelInputError

if TYPE_CHECKING:
    from tracer.producer.passages import Passage

__all__ = ["MIN_CUT_SHARE", "ModelInputs", "derivable", "find_model_input", "prompt_parts"]


#: a cut-down passage carries it only when at least this share of its text (whitespace
#: folded) survives: a shorter common run is as likely a phrase two passages share (a
#: chunk overlap, boilerplate) as the passage itself
MIN_CUT_SHARE = 0.5
_WORD = re.compile(r"\S+")


def derivable(model_input: str, retrieved: str) -> bool:
    """Whether a model-input text carries its retrieved text, the one rule `model_input`,
    `sent`, `not_sent` and the adapters apply: in NFC, with whitespace folded
    (`fold_whitespace`), it contains the retrieved text (a label, a metadata header, a
    re-wrap) or is a part of it keeping at least `MIN_CUT_SHARE` of it (a cut-down passage)."""
    sent = fold_whitespace(unicodedata.normalize("NFC", model_input))
    got = fold_whitespace(unicodedata.normalize("NFC", retrieved))
    if not sent or not got:
        return False
    return got in sent or (sent in got and len(sent) >= MIN_CUT_SHARE * len(got))


def find_model_input(parts: Sequence[str], retrieved: str, forms: Sequence[str] = ()) -> str | None:
    """The exact text of `parts` that carried `retrieved`, as `model_input` accepts it.

    Tried in order: each of `forms` (a framework's own rendering, such as a metadata
    header) and the retrieved text verbatim; the retrieved text re-wrapped (its words in
    order with any whitespace between, so the prompt's span contains it once folded);
    then the longest run of the prompt that is part of the retrieved text (a passage cut
    to fit the context, possibly mid-word), if it keeps at least `MIN_CUT_SHARE` of it.
    This only searches: whatever it returns satisfies `derivable`, the rule, and None
    means no part of any prompt does (so the passage was not sent).
    """
    for form in (*forms, retrieved):
        if form and any(form in part for part in parts) and (form is retrieved or derivable(form, retrieved)):
            return form
    words = [unicodedata.normalize("NFC", w) for w in retrieved.split()]
    if not words:
        return None
    return _rewrapped(parts, words) or _longest_kept_cut(parts, words, retrieved)


def _rewrapped(parts: Sequence[str], words: list[str]) -> str | None:
    """The first span of a part holding the passage's words in order, any whitespace between."""
    wrapped = re.compile(r"\s+".join(map(re.escape, words)))
    for part in parts:
        found = wrapped.search(unicodedata.normalize("NFC", part))
        if found is not None and found.group() in part:
            return found.group()
    return None


def _longest_kept_cut(parts: Sequence[str], words: list[str], retrieved: str) -> str | None:
    """The longest run of any part that is a cut of the passage keeping at least
    `MIN_CUT_SHARE` of it, and still `derivable` from it."""
    need = MIN_CUT_SHARE * len(" ".join(words))
    best: str | None = None
    for part in parts:
        cut = _longest_cut(part, words)
        if cut is not None and not derivable(cut, retrieved):  # a word NFC changed at a cut edge
            cut = None
        if cut is not None and len(fold_whitespace(cut)) >= need and (best is None or len(cut) > len(best)):
            best = cut
    return best


def _longest_cut(part: str, words: Sequence[str]) -> str | None:
    """The longest span of `part` whose words are consecutive words of the passage, with
    the part of a word cut at either end (`"thir…"`) that is that end of the passage's word."""
    spans = [(m.start(), m.end()) for m in _WORD.finditer(part)]
    got = [unicodedata.normalize("NFC", part[a:b]) for a, b in spans]
    match = SequenceMatcher(None, got, list(words), autojunk=False).find_longest_match(
        0, len(got), 0, len(words)
    )
    i, j, k = match.a, match.b, match.size
    if k == 0:
        return None
    start, end = spans[i][0], spans[i + k - 1][1]
    if i > 0 and j > 0:
        tail = _common_suffix(got[i - 1], words[j - 1])
        start = spans[i - 1][1] - len(tail) if tail else start
    if i + k < len(got) and j + k < len(words):
        head = _common_prefix(got[i + k], words[j + k])
        end = spans[i + k][0] + len(head) if head else end
    return part[start:end]


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _common_suffix(a: str, b: str) -> str:
    return _common_prefix(a[::-1], b[::-1])[::-1]


def prompt_parts(prompt: str | Sequence[str]) -> tuple[str, ...]:
    parts = (prompt,) if isinstance(prompt, str) else tuple(prompt)
    for n, part in enumerate(parts):
        if not isinstance(part, str):
            raise ModelInputError(f"prompt part {n}: expected a string, got {type(part).__name__}")
    return parts


class ModelInputs:
    """One record's ledger of what the model was given of each passage (by passage id):
    the text sent, whether the pipeline rewrote it, or that it was not sent.  Callers
    pass only the record's own passages; the checks here are the model-input rule's."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        #: passage ids whose model input the pipeline transformed (`rewritten=True`)
        self._rewritten: set[str] = set()
        #: passage ids retrieved but in no prompt (`not_sent`)
        self._unsent: set[str] = set()

    def state(self, passage_id: str) -> ModelInput | None:
        """What is recorded of the passage's model input, None while nothing is (the
        words `tracer.manifest/v2` signs)."""
        if passage_id in self._unsent:
            return ModelInput.NOT_SENT
        if passage_id not in self._texts:
            return None
        return ModelInput.REWRITTEN if passage_id in self._rewritten else ModelInput.SENT

    def given(self, passage_id: str) -> bool:
        """The model was given the passage (sent or rewritten)."""
        return passage_id in self._texts

    def unsent(self, passage_id: str) -> bool:
        return passage_id in self._unsent

    def text(self, passage_id: str) -> str:
        return self._texts[passage_id]

    @property
    def needs_v2(self) -> bool:
        """Some passage was rewritten or not sent: only `tracer.manifest/v2` can say so."""
        return bool(self._unsent or self._rewritten)

    def unrecorded(self, passages: Iterable[Passage]) -> list[Passage]:
        """Those of `passages` with no model input and not marked not_sent."""
        return [p for p in passages if p.passage_id not in self._texts and p.passage_id not in self._unsent]

    def not_sent(self, passage: Passage, prompt: str | Sequence[str], cited: bool) -> None:
        """Mark `passage` not sent, refused when it was given a model input, is `cited`,
        or any part of `prompt` carries it (see `AnswerRecord.not_sent`)."""
        pid = passage.passage_id
        if pid in self._texts:
            raise ModelInputError(f"passage {pid}: a model input is recorded; it was sent, not not_sent")
        if cited:
            raise ModelInputError(f"passage {pid}: it is cited; a passage the answer rests on was sent")
        found = find_model_input(prompt_parts(prompt), passage.text)
        if found is not None:
            raise ModelInputError(
                f"passage {pid}: the prompt carries it ({len(found)} characters, starting {found[:40]!r}); "
                "record that as its model input (model_input or sent), not not_sent"
            )
        self._unsent.add(pid)

    def record(self, passage: Passage, text: str, prompt: str | Sequence[str], rewritten: bool) -> None:
        """`text` as `passage`'s model input, checked as `AnswerRecord.model_input` says."""
        if passage.passage_id in self._texts:
            raise ModelInputError(f"passage {passage.passage_id}: model input already recorded")
        if passage.passage_id in self._unsent:
            raise ModelInputError(f"passage {passage.passage_id}: it is marked not_sent")
        if not isinstance(rewritten, bool):
            raise ModelInputError(f"rewritten: expected True or False, got {rewritten!r}")
        if not any(text in part for part in prompt_parts(prompt)):
            raise ModelInputError(
                f"passage {passage.passage_id}: the model-input text is not an exact substring of the "
                f"prompt sent ({len(text)} characters, starting {text[:40]!r})"
            )
        if not rewritten and not derivable(text, passage.text):
            raise ModelInputError(
                f"passage {passage.passage_id}: the model-input text ({len(text)} characters, starting "
                f"{text[:40]!r}) neither contains the retrieved text nor is part of it keeping at least "
                f"{MIN_CUT_SHARE:.0%} of it (compared in NFC with whitespace folded); record the part of "
                "the prompt that carried this passage, or pass rewritten=True if the pipeline "
                "transformed it before sending"
            )
        self._texts[passage.passage_id] = text
        if rewritten:
            self._rewritten.add(passage.passage_id)

    def sent(self, prompt: str | Sequence[str], todo: list[Passage]) -> None:
        """For each of `todo`, the span of `prompt` that carried it; all or nothing."""
        parts = prompt_parts(prompt)
        found = {p.passage_id: find_model_input(parts, p.text) for p in todo}
        missing = [pid for pid, text in found.items() if text is None]
        if missing:
            raise ModelInputError(
                f"passage(s) {', '.join(missing)}: the prompt does not carry the retrieved text (not "
                "verbatim, re-wrapped or cut down to half); record what was sent with "
                "model_input(passage, text, prompt=..., rewritten=True), or not_sent(passage, prompt=...) "
                "if the model was not given it"
            )
        for pid, text in found.items():
            if text is not None:
                self._texts[pid] = text
