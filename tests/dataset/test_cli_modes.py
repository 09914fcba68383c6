"""The CLI spells the export's text modes itself (so `--help` loads no engine): keep them equal."""

from tracer.cli import dataset_cmds
from tracer.engine.dataset_export import DEFAULT_ROW_GROUP, TEXT_MODES


def test_the_cli_offers_exactly_the_exports_text_modes() -> None:
    assert tuple(dataset_cmds.TEXT_MODES) == tuple(TEXT_MODES)
    assert DEFAULT_ROW_GROUP == 4096  # the default the help text states
