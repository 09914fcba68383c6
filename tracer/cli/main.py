"""The `tracer` command: one parser, subcommands registered by small modules.

Exit codes: 0 success / clean; 1 findings or rejected input; 2 usage or environment
errors (bad flags, unreadable key, vault in use, damaged vault).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from store.errors import StoreError
from tracer.cli import access_cmds, engine_cmds, export_cmds, store_cmds, ui_cmds

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracer",
        description="Verify what an AI assistant answered, from which exact source text, "
        "and whether that evidence is still intact.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (store_cmds, engine_cmds, access_cmds, ui_cmds, export_cmds):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except StoreError as exc:
        print(f"tracer: error: {exc.diagnostics()}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tracer: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
