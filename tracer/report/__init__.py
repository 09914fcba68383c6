"""Evidence packs: what leaves the laptop, with everything needed to check it offline.

An exported report can no longer be revalidated against the vault, so a pack carries
its own proof: the signed checkpoint it was computed against, every cited log entry
with an RFC 6962 inclusion proof, the public keys, and a DSSE signature by the
investigator over `report.json`.  `verify_pack` checks all of that with nothing but
the pack's files.

The names below load on first use: `verify_pack` needs no vault, so checking a pack
never loads DuckDB, and importing `tracer.report.verify` does not load the exporter.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracer.report.export import export_pack
    from tracer.report.model import FORMATS, PAYLOAD_TYPE, SCHEMA_ID, ReportError
    from tracer.report.verify import Failure, PackVerification, verify_pack

__all__ = [
    "FORMATS",
    "PAYLOAD_TYPE",
    "SCHEMA_ID",
    "Failure",
    "PackVerification",
    "ReportError",
    "export_pack",
    "verify_pack",
]

_HOME = {
    "export_pack": "export",
    "FORMATS": "model",
    "PAYLOAD_TYPE": "model",
    "SCHEMA_ID": "model",
    "ReportError": "model",
    "Failure": "verify",
    "PackVerification": "verify",
    "verify_pack": "verify",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tracer.report.{home}"), name)
    globals()[name] = value
    return value
