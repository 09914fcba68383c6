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

from store.canonical import parse_strict
from store.crypto import is_sha256_hex
from store.errors import InputError, StoreError

__all__ = [
    "CustodianChangedError",
    "ForkError",
    "Pin",
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


#: the member of the trust store that maps vault paths to the origin last opened there
_PATHS = "_paths"


def tracer_home() -> Path:
    env = os.environ.get("TRACER_HOME")
    return Path(env) if env else Path(platformdirs.user_data_dir("tracer", appauthor=False))


@dataclass(frozen=True)
class Seen:
    size: int
    root: str
    at: str


@dataclass(frozen=True)
class Pin:
    """The custodian pin's state for this opening, and anything the user must be told."""

    state: str
    warnings: tuple[str, ...] = ()
    #: the warning that a known path now holds another vault (also in `warnings`), or None
    origin_changed: str | None = None


def _seen_of(path: Path, origin: str, viewer: str, rec: Any) -> Seen:
    """A remembered checkpoint, checked: a hand-edited or damaged record is an error that
    names the file, never a traceback and never silently ignored."""
    where = f"{path}: vault {origin!r}, viewer {viewer[:16]}"
    if not isinstance(rec, dict):
        raise TrustError(f"{where}: the remembered checkpoint is not an object")
    size, root, at = rec.get("size"), rec.get("root"), rec.get("at", "")
    if type(size) is not int or size < 0:
        raise TrustError(f"{where}: remembered size {size!r} is not a whole number")
    if not is_sha256_hex(root):
        raise TrustError(f"{where}: remembered root {root!r} is not 64 hex digits")
    return Seen(size, str(root), str(at))


def _check_record(path: Path, origin: str, rec: object) -> None:
    """Refuse a vault's record that is not an object, pins a custodian that is not a key
    id, or remembers a checkpoint that does not read as one."""
    if not isinstance(rec, dict) or not isinstance(rec.get("seen", {}), dict):
        raise TrustError(f"{path}: the record of vault {origin!r} is not an object")
    if "custodian" in rec and not isinstance(rec["custodian"], str):
        raise TrustError(f"{path}: the pinned custodian of vault {origin!r} is not a key id")
    for viewer, seen in rec.get("seen", {}).items():
        _seen_of(path, origin, viewer, seen)


class TrustStore:
    """A small JSON file under TRACER_HOME; rewritten atomically on every change."""

    def __init__(self, home: Path | None = None):
        self.home = home or tracer_home()
        self.path = self.home / "known_vaults.json"

    def _load(self) -> dict[str, Any]:
        """The whole store, every record checked before anything is written back: a store
        that is damaged anywhere is refused and left as it is."""
        try:
            data = parse_strict(self.path.read_bytes(), str(self.path))
        except FileNotFoundError:
            return {}
        except (OSError, InputError) as exc:
            raise TrustError(f"{self.path}: unreadable trust store ({exc}); not overwriting it") from exc
        if not isinstance(data, dict):
            raise TrustError(
                f"{self.path}: the trust store is not a JSON object; not overwriting it "
                "(move it aside to start over, after checking why it changed)"
            )
        for origin, rec in data.items():
            if origin == _PATHS:
                if not isinstance(rec, dict) or not all(isinstance(v, str) for v in rec.values()):
                    raise TrustError(f"{self.path}: {_PATHS!r} is not an object of vault origins")
                continue
            _check_record(self.path, origin, rec)
        return data

    def _save(self, data: dict[str, Any]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def check_custodian(self, origin: str, key_id: str, name: str, path: Path | None = None) -> Pin:
        """The pin state ('pinned' or 'first use', pinning it); raises TrustError if it changed.

        This machine also remembers which origin it last opened at each path: a known
        path that now holds a different vault says so loudly instead of "first use".
        """
        data = self._load()
        rec = data.get(origin)
        moved: str | None = None
        if path is not None:
            where = str(path.resolve())
            paths = data.setdefault(_PATHS, {})
            before = paths.get(where)
            if before is not None and before != origin:
                moved = (
                    f"ORIGIN CHANGED at {where}: this machine last opened vault {before} here; the "
                    f"vault here now is {origin}, a different vault (a rebuilt or replaced copy)"
                )
            paths[where] = origin
        warnings = [moved] if moved else []
        if rec is None or not rec.get("custodian"):
            # no pin yet (a custodian's write may have recorded what it signed before any unlock)
            seen = rec.get("seen", {}) if rec is not None else {}
            data[origin] = {"custodian": key_id, "custodian_name": name, "seen": seen}
            self._save(data)
            return Pin("first use", tuple(warnings), moved)
        if rec.get("custodian") != key_id:
            raise CustodianChangedError(
                f"CUSTODIAN KEY CHANGED for vault {origin}: this machine pinned "
                f"{rec.get('custodian_name')} {str(rec.get('custodian'))[:16]}, the vault now says "
                f"{name} {key_id[:16]}. Refusing to open. If the change is legitimate, remove the "
                f"entry for {origin} from {self.path} after confirming out of band."
            )
        if path is not None:
            self._save(data)
        return Pin("pinned", tuple(warnings), moved)

    def pinned(self, origin: str) -> str | None:
        rec = self._load().get(origin)
        return str(rec["custodian"]) if rec and rec.get("custodian") else None

    def origin_at(self, path: Path) -> str | None:
        """The origin this machine last opened at `path`, if any."""
        paths = self._load().get(_PATHS, {})
        value = paths.get(str(path.resolve()))
        return str(value) if value is not None else None

    def pin_state(self, origin: str, key_id: str) -> str:
        """'pinned', 'first use' or 'CHANGED', without pinning anything."""
        pinned = self.pinned(origin)
        if pinned is None:
            return "first use"
        return "pinned" if pinned == key_id else "CHANGED"

    def last_seen(self, origin: str, viewer: str) -> Seen | None:
        rec = self._load().get(origin, {}).get("seen", {}).get(viewer)
        if rec is None:
            return None
        return _seen_of(self.path, origin, viewer, rec)

    def all_seen(self, origin: str) -> list[tuple[str, Seen]]:
        """Every checkpoint any investigator on this machine saw of `origin`."""
        seen = self._load().get(origin, {}).get("seen", {})
        return [(viewer, _seen_of(self.path, origin, viewer, rec)) for viewer, rec in sorted(seen.items())]

    def remember(self, origin: str, viewer: str, seen: Seen) -> None:
        data = self._load()
        rec = data.setdefault(origin, {"seen": {}})
        rec.setdefault("seen", {})[viewer] = {"size": seen.size, "root": seen.root, "at": seen.at}
        self._save(data)

    def journal(self, origin: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in origin)
        return self.home / "journal" / f"{safe}.jsonl"
