"""`--json` keeps UTF-8 readable but escapes every hidden character, so a terminal or a
log viewer reading tracer's output cannot be steered by evidence text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.textrules import hidden_pattern
from tracer.cli.main import main
from tracer.inert import json_inert

#: the sample vault's answers with terminal escapes, and with bidi and zero-width characters
HOSTILE = ("ans-29b02993758e", "ans-321e7a7b7fc9")


def test_json_inert_escapes_and_round_trips() -> None:
    value = {"t": "a\x1b[2Jb\u202ec\u200bd\u2028e\x85f\U000e0041g é"}
    text = json_inert(value)
    assert not hidden_pattern().search(text) and "\x1b" not in text
    assert "é" in text  # readable text stays readable
    assert json.loads(text) == value


@pytest.mark.parametrize("answer_id", HOSTILE)
def test_trace_json_of_a_hostile_answer_is_inert(
    answer_id: str, sample_vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRACER_PASSPHRASE", "ines-demo")
    key = str(sample_vault / "keys" / "ines.key")
    code = main(["trace", str(sample_vault), answer_id, "--key", key, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert not hidden_pattern().search(out) and "\x1b" not in out
    # ... and the evidence itself is kept exactly: the escapes decode back to it
    texts = json.dumps(json.loads(out), ensure_ascii=False)
    assert hidden_pattern().search(texts) or "\\u001b" in texts
