"""The export formats `tracer import` reads, apart from their readers.

`tracer import --help` lists them; keeping them here lets the CLI name them without
loading the importer, its store and DuckDB.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ExportFormat"]


class ExportFormat(StrEnum):
    OTLP_JSON = "otlp-json"
    OTLP_PROTO = "otlp-proto"
    PHOENIX_PARQUET = "phoenix-parquet"
