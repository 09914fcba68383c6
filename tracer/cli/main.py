"""The `tracer` command: one parser, subcommands registered by small modules.

Exit codes: 0 success / clean; 1 findings or rejected input; 2 usage or environment
errors (bad flags, unreadable key, vault in use, damaged vault).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from store.errors import StoreError, damage_of, database_error_types
from tracer.inert import inert

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace], int]


#: modules under tracer.cli that register subcommands, in the order `--help` lists them
COMMAND_MODULES = (
    "store_cmds",
    "outbox_cmds",
    "import_cmds",
    "chunk_cmds",
    "engine_cmds",
    "access_cmds",
    "case_cmds",
    "ui_cmds",
    "export_cmds",
    "dataset_cmds",
)


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    """`modules` narrows the registration: `tracer open` skips ingest, schemas and reports."""
    parser = argparse.ArgumentParser(
        prog="tracer",
        description="Verify what an AI assistant answered, from which exact source text, "
        "and whether that evidence is still intact.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in modules:
        importlib.import_module(f"tracer.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(("ui_cmds",) if args_in[:1] == ["open"] else COMMAND_MODULES)
    args = parser.parse_args(args_in)
    handler: Handler = args.handler
    try:
        return handler(args)
    except StoreError as exc:
        # an error can quote the vault or the trust store: never let it steer the terminal
        print(f"tracer: error: {inert(exc.diagnostics())}", file=sys.stderr)
        return EXIT_USAGE
    except database_error_types() as exc:
        damage = damage_of(exc)
        if damage is None:
            raise  # a bug in a query, not a damaged file: the traceback is what to report
        print(f"tracer: error: {inert(damage.diagnostics())}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tracer: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
