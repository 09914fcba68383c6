"""Evidence packs: what leaves the laptop, with everything needed to check it offline.

An exported report can no longer be revalidated against the vault, so a pack carries
its own proof: the signed checkpoint it was computed against, every cited log entry
with an RFC 6962 inclusion proof, the public keys, and a DSSE signature by the
investigator over `report.json`.  `verify_pack` checks all of that with nothing but
the pack's files.
"""

from __future__ import annotations

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
