# The crawl manifest: which stores hold a crawl, in shard order. The
# urlserver writes it (DATA/crawl.json of its --data) at every start, after
# its crawl id is settled; wreck-dump --manifest reads a sharded crawl back
# as one from it. Shard order matters: docs/protocol.txt assigns doc id D to
# store D mod n, n the number of stores, so the list is the stores' --store
# order. The data directories are known only where the stores run on the
# urlserver's box (wreck-crawl, or --store-data given): otherwise the list
# is empty and a reader names each copied store directory with --data.
#
# The file is JSON (msgspec writes and validates it), replaced atomically
# (write beside, fsync, rename) so a reader never sees half of one.
"""Write and read a crawl's manifest of store shards."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from .private import private_open

MANIFEST = "crawl.json"  # in the urlserver's --data
FORMAT = 1  # bumped when a field changes meaning


class ManifestError(Exception):
    """The manifest cannot be read, or does not describe a crawl's stores."""


class Manifest(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """A crawl's stores in shard order (doc id D is in stores[D mod len])."""

    format: int
    crawl_id: str
    stores: tuple[str, ...]  # HOST:PORT, the urlserver's --store order
    store_data: tuple[str, ...] = ()  # their --data directories, same order, when known


def write(directory: Path, manifest: Manifest) -> Path:
    """Replace `directory`/crawl.json with `manifest`; its path."""
    path = Path(directory) / MANIFEST
    temp = path.with_name(path.name + ".tmp")
    with private_open(temp, "wb") as fh:
        fh.write(msgspec.json.format(msgspec.json.encode(manifest)) + b"\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(temp, path)
    return path


def read(path: Path) -> Manifest:
    """The manifest in `path` (a crawl.json, or the directory holding it)."""
    path = Path(path)
    if path.is_dir():
        path = path / MANIFEST
    try:
        found = msgspec.json.decode(path.read_bytes(), type=Manifest)
    except OSError as exc:
        raise ManifestError(f"cannot read the manifest {path}: {exc.strerror or exc}") from None
    except msgspec.DecodeError as exc:
        raise ManifestError(f"{path} is not a crawl manifest: {exc}") from None
    if found.format != FORMAT:
        raise ManifestError(f"{path}: manifest format {found.format}, this version reads {FORMAT}")
    if found.store_data and len(found.store_data) != len(found.stores):
        raise ManifestError(f"{path}: {len(found.store_data)} store directories for {len(found.stores)} stores")
    return found
