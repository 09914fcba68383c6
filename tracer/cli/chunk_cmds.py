"""`tracer chunk FILE`: the blocks, paragraph indexes and locators tracer computes for a file.

A producer in any language can compare its own chunker with this output (and with the
vectors in docs/vectors/chunking); `docs/chunking.md` states the rules.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from store.errors import InputError, StoreError
from tracer.cli.common import Sub, emit_json
from tracer.inert import inert


def register(sub: Sub) -> None:
    p = sub.add_parser("chunk", help="print a document's blocks, heading paths and locators")
    p.add_argument("file", type=Path, help="a UTF-8 text or markdown file ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="the report documented in docs/chunking.md")
    p.set_defaults(handler=cmd_chunk)


class PathError(InputError):
    """A file or directory argument that cannot be used: says which and why, no JSON path."""

    def __init__(self, file: str, message: str) -> None:
        StoreError.__init__(self, f"{file}: {message}")
        self.file = file
        self.path = ""
        self.message = message


def _read_text(path: Path) -> str:
    try:
        raw = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as exc:
        raise PathError(str(path), f"cannot read file ({exc.strerror})") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PathError(str(path), f"not UTF-8 (byte {exc.start})") from exc


def cmd_chunk(args: argparse.Namespace) -> int:
    from tracer.producer.locate import chunk_report

    report = chunk_report(_read_text(args.file))
    if args.json:
        emit_json(report)
        return 0
    print(f"{report['normalizer_version']}  {report['chunker_version']}")
    print(f"normalized sha256 {report['normalized_sha256']}  ({report['normalized_length']} characters)")
    for b in report["blocks"]:
        path = " > ".join(inert(t) for t in b["heading_path"]) or "-"
        kind = "heading  " if b["kind"] == "heading" else f"¶{b['paragraph']:<8}"
        print(f"{kind} [{b['char_start']}, {b['char_end']})  {path}")
        excerpt = b["text"] if len(b["text"]) <= 100 else b["text"][:99] + "…"
        print(f"          {inert(excerpt, keep_newlines=False)}")
    return 0
