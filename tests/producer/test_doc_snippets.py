"""Every code block of docs/producers.md, run verbatim and offline, in document order.

The blocks are read from the Markdown when the test runs, so the guide cannot drift
from what works. They share one working directory, as a reader following the guide
would: the `sh` setup block makes `keys/` and `vault/`, the Python blocks record into
`outbox/`, the last `sh` block ingests and traces. Python blocks run each in a process
of its own (exactly as pasted into a file); shell blocks run under `bash -e` with this
environment's `tracer` first on PATH. The one exception is `pip`: an install cannot
run offline, so each `pip` line is checked instead — the distribution, its extras or
the folder it builds must be this repository's.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "producers.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PASSPHRASE = "doc-snippets-passphrase"


def blocks(path: Path) -> list[tuple[str, str, int]]:
    """(language, code, line) of every fenced block, in order."""
    text = path.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def _distributions() -> dict[str, tuple[Path, set[str]]]:
    out = {}
    for folder in (ROOT, ROOT / "packaging" / "sdk"):
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        out[project["name"]] = (folder, set(project.get("optional-dependencies", {})))
    return out


def _check_pip(line: str, where: str) -> None:
    words = shlex.split(line, comments=True)
    dists = _distributions()
    command, rest = words[1], words[2:]
    if command == "install":
        names = [w for w in rest if not w.startswith("-") and not w.endswith("/")]
        assert names, where
        for spec in names:
            m = re.fullmatch(r"([A-Za-z0-9-]+)(?:\[([\w,-]+)\])?", spec)
            assert m is not None and m.group(1) in dists, f"{where}: {spec!r} is not one of {sorted(dists)}"
            extras = set(filter(None, (m.group(2) or "").split(",")))
            assert extras <= dists[m.group(1)][1], f"{where}: {spec!r} names an extra that does not exist"
    elif command == "wheel":
        folder = next(
            w for w in rest if not w.startswith("-") and w != rest[rest.index("-w")] if "-w" in rest
        )
        assert "--no-deps" in rest and (ROOT / folder / "pyproject.toml").is_file(), where
    elif command == "download":
        assert "-d" in rest, where
    else:
        pytest.fail(f"{where}: an unexpected pip command {command!r}")


def test_the_guide_has_the_blocks_this_test_expects() -> None:
    langs = [lang for lang, _, _ in blocks(GUIDE)]
    assert langs.count("python") >= 5 and langs.count("sh") >= 3, langs


@pytest.mark.slow
def test_every_block_of_the_producer_guide_runs_verbatim(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "TRACER_PASSPHRASE": PASSPHRASE,
        "TRACER_HOME": str(tmp_path / "home"),
    }
    env.pop("TRACER_KEY", None)
    outputs = []
    for lang, code, line in blocks(GUIDE):
        where = f"docs/producers.md:{line}"
        pip = [ln for ln in code.splitlines() if ln.startswith("pip ")]
        for ln in pip:
            _check_pip(ln, where)
        if lang == "python":
            r = subprocess.run(
                [sys.executable, "-c", code],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
        elif lang == "sh" and not pip:
            r = subprocess.run(
                ["bash", "-e", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
            )
        else:
            assert lang in ("sh", "text") and pip, f"{where}: a {lang!r} block this test cannot run"
            continue
        assert r.returncode == 0, f"{where} ({lang}) failed:\n{r.stdout}\n{r.stderr}"
        outputs.append(r.stdout)
    last = outputs[-1]  # ingest-outbox, then trace
    assert "appended 11 file(s)" in last and "FAULT" not in last and "REJECTED" not in last, last
    assert "INTACT" in last and "VERIFIED" in last, last
    assert not list((tmp_path / "outbox").glob("*.json"))  # everything was ingested
    ingested = sorted(p.name.split("-")[0] for p in (tmp_path / "outbox" / "ingested").glob("*.json"))
    # the recorder's, the not-sent one's, the note's, LangChain's, LlamaIndex's answers;
    # the note; 5 revisions
    assert ingested == ["answer"] * 5 + ["note"] + ["revision"] * 5, ingested
