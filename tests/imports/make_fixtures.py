"""Regenerate the committed import fixtures with the real instrumentation packages, offline.

    .venv/bin/python -m tests.imports.make_fixtures

Each export is made by an unmodified instrumentation over the frameworks' own fakes
(tests/imports/exports.py): nothing is written by hand.  The versions used are in the
file names and in docs/import.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def _cut() -> bytes:
    from tests.imports.exports import langchain_export

    return langchain_export(limit=48)


def _openllmetry() -> bytes:
    from tests.imports.exports import openllmetry_export

    return openllmetry_export()


MAKERS: dict[str, Callable[[], bytes]] = {
    "langchain-openinference-0.1.80-limit48.jsonl": _cut,
    "langchain-openllmetry-0.62.4.jsonl": _openllmetry,
}


def main() -> None:
    logging.disable(logging.WARNING)  # the SDK warns once per value it cuts
    for name, make in MAKERS.items():
        (FIXTURES / name).write_bytes(make())
        print(f"wrote {FIXTURES / name}")


if __name__ == "__main__":
    main()
