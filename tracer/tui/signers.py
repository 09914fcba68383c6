"""Investigators by name, with the fingerprint beside it: a name alone proves nothing.

Signers are identified by key id (docs/security.md, "Signers are identified by key");
the name from the roster is for people, so both are shown, the key id never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.text import Text

from store.roster import investigators
from tracer.tui.text import plain, safe_line

if TYPE_CHECKING:
    from tracer.engine.session import Session

__all__ = ["signer", "signer_names"]


def signer_names(s: Session) -> dict[str, str]:
    """Key id -> name for every investigator ever granted, and the custodian."""
    names = {k: v.name for k, v in investigators(s.vault).items()}
    names[s.status.custodian_key_id] = s.status.custodian
    return names


def signer(key_id: str, names: Mapping[str, str]) -> Text:
    out = safe_line(names.get(key_id, "unknown signer"), "bold")
    out.append_text(plain(f" {key_id[:12]}"))
    return out
