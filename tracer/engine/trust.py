"""What this machine remembers about each vault, like SSH's known_hosts.

For every vault origin: the custodian key pinned on first open, and the last checkpoint
each investigator saw.  A changed custodian key is refused; a vault whose log does not
extend the remembered checkpoint (rolled back to an older copy, or forked) is refused
unless opened explicitly for forensic inspection.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from store.errors import StoreError

__all__ = [
    "CustodianChangedError",
    "ForkError",
    "RollbackError",
    "Seen",
    "TrustError",
    "TrustStore",
    "tracer_home",
]


class TrustError(StoreError):
    """The vault contradicts what this machine remembers about it."""


class CustodianChangedError(TrustError):
    """The vault names a different custodian key than the one pinned on first use."""


class RollbackError(TrustError):
    """The vault is smaller than the checkpoint this machine last saw: an older copy."""


class ForkError(TrustError):
    """The vault's history does not extend the checkpoint this machine last saw."""


def tracer_home() -> Path:
    env = os.environ.get("TRACER_HOME")
    return Path(env) if env else Path(platformdirs.user_data_dir("tracer", appauthor=False))


@dataclass(frozen=True)
class Seen:
    size: int
    root: str
    at: str


class TrustStore:
    """A small JSON file under TRACER_HOME; rewritten atomically on every change."""

    def __init__(self, home: Path | None = None):
        self.home = home or tracer_home()
        self.path = self.home / "known_vaults.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise TrustError(f"{self.path}: unreadable trust store ({exc}); not overwriting it") from exc
        return data if isinstance(data, dict) else {}

    def _save(self, data: dict[str, Any]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def check_custodian(self, origin: str, key_id: str, name: str) -> str:
        """'pinned' or 'first use' (and pins it); raises TrustError if it changed."""
        data = self._load()
        rec = data.get(origin)
        if rec is None:
            data[origin] = {"custodian": key_id, "custodian_name": name, "seen": {}}
            self._save(data)
            return "first use"
        if rec.get("custodian") != key_id:
            raise CustodianChangedError(
                f"CUSTODIAN KEY CHANGED for vault {origin}: this machine pinned "
                f"{rec.get('custodian_name')} {str(rec.get('custodian'))[:16]}, the vault now says "
                f"{name} {key_id[:16]}. Refusing to open. If the change is legitimate, remove the "
                f"entry for {origin} from {self.path} after confirming out of band."
            )
        return "pinned"

    def pinned(self, origin: str) -> str | None:
        rec = self._load().get(origin)
        return str(rec["custodian"]) if rec and rec.get("custodian") else None

    def pin_state(self, origin: str, key_id: str) -> str:
        """'pinned', 'first use' or 'CHANGED', without pinning anything."""
        pinned = self.pinned(origin)
        if pinned is None:
            return "first use"
        return "pinned" if pinned == key_id else "CHANGED"

    def last_seen(self, origin: str, viewer: str) -> Seen | None:
        rec = self._load().get(origin, {}).get("seen", {}).get(viewer)
        if not rec:
            return None
        return Seen(int(rec["size"]), str(rec["root"]), str(rec["at"]))

    def remember(self, origin: str, viewer: str, seen: Seen) -> None:
        data = self._load()
        rec = data.setdefault(origin, {"seen": {}})
        rec.setdefault("seen", {})[viewer] = {"size": seen.size, "root": seen.root, "at": seen.at}
        self._save(data)

    def journal(self, origin: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in origin)
        return self.home / "journal" / f"{safe}.jsonl"
