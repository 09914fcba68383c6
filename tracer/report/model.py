"""Names shared by the writer and the checker of a pack, so the two cannot drift apart."""

from __future__ import annotations

from typing import Final

from store.errors import StoreError

__all__ = [
    "CHECKPOINT_FILE",
    "DSSE_FILE",
    "FORMATS",
    "HTML_FILE",
    "KEYS_FILE",
    "LIMITS",
    "MD_FILE",
    "PAYLOAD_TYPE",
    "PROV_FILE",
    "REPORT_FILE",
    "SCHEMA_ID",
    "ReportError",
]

SCHEMA_ID: Final = "tracer.report/v1"
PAYLOAD_TYPE: Final = "application/vnd.tracer.report.v1+json"

REPORT_FILE: Final = "report.json"
DSSE_FILE: Final = "report.dsse.json"
MD_FILE: Final = "report.md"
HTML_FILE: Final = "report.html"
PROV_FILE: Final = "lineage.prov.json"
CHECKPOINT_FILE: Final = "checkpoint.note"
KEYS_FILE: Final = "keys.json"

# `json` is always written (the signature covers it); the others are for people.
FORMATS: Final = frozenset({"json", "md", "html"})

LIMITS: Final = (
    "A report cannot be revalidated after export: every state in it is as of computed_at, "
    "against the checkpoint named here. Sources may have changed since; revalidate in the "
    "vault for today's states."
)


class ReportError(StoreError):
    """An export that cannot be made honestly (unknown answer, damaged log, bad target)."""

    hint = "nothing was written; fix the cause and export again"
