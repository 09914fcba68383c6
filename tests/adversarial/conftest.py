"""The adversarial suite drives the real CLI too: reuse its fixtures."""

from tests.cli.conftest import cli_template, vault_world, world

__all__ = ["cli_template", "vault_world", "world"]
