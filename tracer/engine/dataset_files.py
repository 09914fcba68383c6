"""What only a dataset has, checked against what the log gives `verify-dataset`.

The DSSE-signed manifest (by a key the log's roster names), each file's SHA-256 against
it, the row-group layout against the subtrees, the tiles and entry bundles against the
recomputed leaves and the entries, the references and tombstones files against the rows
derived from the log, and the data keys the export holds.  The log itself (statements,
manifest rows, log-wide rules, transforms) is `tracer.engine.dataset_verify`'s.

The findings come out in one order whatever order the checks run in: the manifest's,
the files', the layout's, then the rest as they were found.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, Unpack

import pyarrow as pa

from store import dataset as ds
from store.dsse import Envelope, verify_envelope
from store.errors import InputError, SignatureError
from store.keyring import in_scope
from store.roster import Roster
from store.tiles import TILE_WIDTH, TileError, bundle, entry_tile_path, hash_tiles
from tracer.engine.dataset_check import perfect_root, subtree_root
from tracer.engine.jsonshapes import FindingRecord
from tracer.engine.logcheck import Finding, finding
from tracer.engine.verdicts import data_key_findings
from tracer.engine.vocabulary import FindingKind

__all__ = ["DatasetFiles", "PlacedRow"]


class PlacedRow(Protocol):
    """A log row as the layout needs it: its place in the log file, seq and leaf."""

    pos: int
    seq: int
    leaf: bytes


class DatasetFiles:
    """The dataset's own files checked, each finding kept in its section of the report."""

    def __init__(self, root: Path, reader: ds.DatasetReader) -> None:
        self.root = root
        self.reader = reader
        self._signed: list[Finding] = []
        self._listed: list[Finding] = []
        self._layout: list[Finding] = []
        self._rest: list[Finding] = []

    @property
    def findings(self) -> list[Finding]:
        return self._signed + self._listed + self._layout + self._rest

    @staticmethod
    def _find(
        into: list[Finding],
        kind: FindingKind,
        seq: int | None,
        detail: str,
        /,
        **record: Unpack[FindingRecord],
    ) -> None:
        into.append(finding(kind, seq, detail, **record))

    # -- the manifest and its signature ------------------------------------------------

    def manifest(self) -> tuple[dict[str, Any], Envelope | None]:
        try:
            payload = (self.root / ds.MANIFEST_FILE).read_bytes()
            manifest = json.loads(payload)
            if not isinstance(manifest, dict) or manifest.get("format") != ds.FORMAT:
                raise ValueError(f"not a {ds.FORMAT} manifest")
        except (OSError, ValueError) as exc:
            raise ds.DatasetError(f"{self.root / ds.MANIFEST_FILE}: unreadable ({exc})") from exc
        env: Envelope | None = None
        try:
            raw = json.loads((self.root / ds.DSSE_FILE).read_bytes())
            env = Envelope.from_json(raw, ds.DSSE_FILE)
            if env.payload != payload or env.payload_type != ds.PAYLOAD_TYPE:
                self._find(
                    self._signed,
                    FindingKind.DATASET_MANIFEST_MISMATCH,
                    None,
                    f"{ds.DSSE_FILE} signs other bytes (or another type) than {ds.MANIFEST_FILE}: "
                    "the manifest was edited after it was signed",
                    file=ds.MANIFEST_FILE,
                )
        except (OSError, ValueError, InputError) as exc:
            self._find(
                self._signed,
                FindingKind.DATASET_MANIFEST_UNSIGNED,
                None,
                f"{ds.DSSE_FILE}: {exc}",
                file=ds.DSSE_FILE,
            )
        return manifest, env

    def signature(self, env: Envelope | None, keyring: Roster, exporter: dict[str, Any]) -> None:
        """The envelope against the keys the log's roster holds at its end, by the
        exporter the manifest names."""
        if env is None:
            return
        keys: dict[str, bytes] = {}
        if keyring.custodian is not None:
            keys[keyring.custodian.key_id] = keyring.custodian.ed25519
        for key_id, inv in keyring.investigators.items():
            if not inv.revoked_at:
                keys[key_id] = inv.ed25519
        try:
            signer = verify_envelope(env, keys)
        except SignatureError as exc:
            self._find(self._rest, FindingKind.DATASET_SIGNATURE_INVALID, None, str(exc), file=ds.DSSE_FILE)
            return
        if signer != exporter.get("key_id"):
            self._find(
                self._rest,
                FindingKind.DATASET_SIGNATURE_INVALID,
                None,
                f"signed by {signer[:16]}, the manifest names exporter {str(exporter.get('key_id'))[:16]}",
                file=ds.DSSE_FILE,
            )

    def files(self, manifest: dict[str, Any], read: dict[str, str]) -> None:
        """Every file against the signed manifest's list and SHA-256 (`read`: those of
        the files already read, by path)."""
        listed: dict[str, str] = {}
        for item in manifest.get("files", []):
            if isinstance(item, dict):
                listed[str(item.get("path"))] = str(item.get("sha256"))
        skip = {ds.MANIFEST_FILE, ds.DSSE_FILE}
        present = {p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()} - skip
        out = self._listed
        for path in sorted(set(listed) | present):
            if path not in present:
                self._find(
                    out, FindingKind.DATASET_FILE_MISSING, None, f"{path} is listed but absent", file=path
                )
            elif path not in listed:
                self._find(
                    out,
                    FindingKind.DATASET_FILE_UNLISTED,
                    None,
                    f"{path} is not in the signed manifest",
                    file=path,
                )
            elif (read.get(path) or ds.sha256_file(self.root / path)) != listed[path]:
                self._find(
                    out,
                    FindingKind.DATASET_FILE_MISMATCH,
                    None,
                    f"{path}: SHA-256 differs from the signed manifest",
                    file=path,
                )

    # -- the layout and the tiles ------------------------------------------------------

    def layout(self, rows: Sequence[PlacedRow], group: int) -> list[bytes]:
        """Row group g holds entries g*G.. in order; the subtree root of each group."""
        sizes = self.reader.row_group_sizes
        roots = []
        start = 0
        for g, n in enumerate(sizes):
            part = rows[start : start + n]
            if n != group and g != len(sizes) - 1:
                self._find(
                    self._layout,
                    FindingKind.DATASET_ROW_GROUP_MISALIGNED,
                    g * group,
                    f"row group {g} holds {n} rows, not {group}: rows were dropped or added",
                    row_group=g,
                )
            bad = [r for i, r in enumerate(part) if r.seq != g * group + i]
            if bad:
                first = bad[0]
                self._find(
                    self._layout,
                    FindingKind.DATASET_ROW_OUT_OF_PLACE,
                    first.seq,
                    f"row group {g} holds entry {first.seq} at position {first.pos - start} "
                    f"({len(bad)} rows of the group out of place): dropped, duplicated or reordered",
                    row_group=g,
                )
            roots.append(subtree_root([r.leaf for r in part]) if part else b"")
            start += n
        return roots

    def fold(self, roots: list[bytes], root: bytes) -> None:
        """The row groups' subtree roots against the tree root the log recomputes."""
        if perfect_root([x for x in roots if x]) != root:
            self._find(
                self._rest,
                FindingKind.DATASET_ROOT_FOLD_MISMATCH,
                None,
                "row-group roots do not fold into the tree root",
            )

    def tiles(self, leaves: Sequence[bytes], entries: Sequence[memoryview]) -> dict[str, str]:
        """Every tile against the tree's hashes and the entries; the SHA-256 of each tile
        file read, by path."""
        read: dict[str, str] = {}
        try:
            from store.note import Checkpoint

            text = (self.root / "checkpoint").read_text(encoding="utf-8")
            body = text.split("\n\n", 1)[0] + "\n"
            size = Checkpoint.parse(body).size
        except (OSError, ValueError, InputError) as exc:
            self._find(
                self._rest,
                FindingKind.DATASET_TILE_MISMATCH,
                None,
                f"checkpoint: unreadable ({exc})",
                file="checkpoint",
            )
            return read
        for path, data in hash_tiles(leaves[:size]):
            self._tile(path, data, _tile_span(path), read)
        size = min(size, len(entries))
        for n in range(0, size, TILE_WIDTH):
            chunk = entries[n : min(n + TILE_WIDTH, size)]
            path = entry_tile_path(n // TILE_WIDTH, len(chunk))
            try:
                data = bundle(chunk, n)
            except TileError:
                continue
            self._tile(path, data, (n, n + len(chunk) - 1), read)
        return read

    def _tile(self, path: str, want: bytes, span: tuple[int, int], read: dict[str, str]) -> None:
        file = self.root / path
        have: bytes | None = None
        try:
            have = file.read_bytes()
        except OSError:
            pass
        if have is not None:
            read[path] = hashlib.sha256(have).hexdigest()
        if have != want:
            self._find(
                self._rest,
                FindingKind.DATASET_TILE_MISMATCH,
                span[0],
                f"{path} does not hold the tree's hashes for entries {span[0]}..{span[1]}"
                if have is not None
                else f"{path} is missing",
                file=path,
                first_seq=span[0],
                last_seq=span[1],
            )

    # -- the files derived from the log ------------------------------------------------

    def references(self) -> None:
        """The references file row for row against the references the log derives."""
        extra, lost = self.reader.reference_diff()
        for problem, items in (
            (FindingKind.DATASET_REFERENCE_ALTERED, extra),
            (FindingKind.DATASET_REFERENCE_MISSING, lost),
        ):
            for r in items:
                self._find(
                    self._rest,
                    problem,
                    None if r[0] is None else int(r[0]),
                    f"{ds.REFERENCES_FILE} row {_REF_WORDS[problem]} the log",
                    answer_id=r[1],
                    passage_id=r[2],
                    role=r[3],
                    digest=r[4],
                )

    def tombstones(self) -> None:
        """The tombstones file against the tombstones the log holds."""
        for seq, digest, side in self.reader.tombstone_diff():
            self._find(
                self._rest,
                FindingKind.DATASET_TOMBSTONE_MISMATCH,
                int(seq),
                "tombstones.parquet names a tombstone the log does not hold"
                if side == "file"
                else "a tombstone the log holds is not in tombstones.parquet",
                digest=digest,
            )

    def data_keys(
        self, texts: pa.Table, mode: str, exporter: dict[str, Any], scopes: list[str] | None
    ) -> list[Finding]:
        """`data_key_findings` for the exporter, from what the export holds: the data key of
        every stored text, and which keys the exporter held (a plaintext export's signed
        list; a ciphertext export's wrapped keys to the exporter, taken as unwrapping: a
        wrapped key that would not unwrap cannot be told without the exporter's private
        key).  A digests-only export says neither, so nothing is recomputed for it."""
        if mode == "plaintext":
            held = {str(k) for k in exporter.get("data_keys", [])}
        elif mode == "ciphertext":
            keys = self.reader.table(ds.DATA_KEYS_FILE, "dk_id, recipient")
            me = str(exporter.get("key_id"))
            held = {
                str(d)
                for d, r in zip(keys.column(0).to_pylist(), keys.column(1).to_pylist(), strict=True)
                if r == me
            }
        else:
            return []
        stored: dict[tuple[str, str], int] = {}
        cols = texts.select(["collection", "dk_id"]).to_pydict()
        for c, k in zip(cols["collection"], cols["dk_id"], strict=True):
            stored[(str(c), str(k))] = stored.get((str(c), str(k)), 0) + 1
        return data_key_findings(
            [(c, k, n) for (c, k), n in sorted(stored.items())],
            lambda collection: scopes is not None and in_scope(scopes, collection),
            held,
            [],
        )


_REF_WORDS = {
    FindingKind.DATASET_REFERENCE_ALTERED: "not derivable from",
    FindingKind.DATASET_REFERENCE_MISSING: "missing, derived from",
}


def _tile_span(path: str) -> tuple[int, int]:
    parts = path.split("/")
    level = int(parts[1])
    tail = "/".join(parts[2:])
    width = TILE_WIDTH
    if ".p/" in tail:
        tail, w = tail.split(".p/")
        width = int(w)
    n = int("".join(p.lstrip("x") for p in tail.split("/")))
    unit = TILE_WIDTH**level
    first = n * TILE_WIDTH * unit
    return first, first + width * unit - 1
