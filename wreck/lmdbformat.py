# What every WRECK LMDB environment checks as it opens, before any of its
# pages is read through the map (issue 14, finding 10):
#
#   - the file holds every page the environment says it has. LMDB maps
#     data.mdb and reads its pages through the map: a page past the end of
#     a truncated file is a SIGBUS that kills the process with no message.
#     The meta pages (read with read(), not through the map) give the last
#     page number and the page size; a shorter file is refused in one line,
#     unless every page past its end is on the free list (lmdbfree.py: LMDB
#     leaves such pages unwritten).
#   - a format marker in the environment's main database names which
#     daemon's data it is ("urlserver" or "storeserver"), so a urlserver
#     pointed at a store's directory, or the reverse, is refused in one
#     line instead of writing its databases beside the other's. An
#     environment made before the marker existed is recognised by the
#     named databases only the other daemon creates, and marked.
"""Format markers and truncation checks for WRECK's LMDB environments."""

from __future__ import annotations

import os
import struct

import lmdb

from wreck.lmdbfree import Unreadable, free_pages

MARKER_KEY = b"wreck:format"  # in the main (unnamed) database, beside the named databases' entries

# Named databases only one daemon creates: an unmarked environment holding
# one of the other's is the other's.
OWN_DATABASES = {
    "urlserver": frozenset({b"queue", b"claims", b"delayed", b"hosts", b"robots", b"feeds", b"feedguids",
                            b"sitemaps", b"revisits"}),
    "storeserver": frozenset({b"docs", b"dicts", b"fprints", b"bodies", b"bands", b"extra"}),
}


class FormatError(Exception):
    """The environment is not this daemon's, or its file is damaged."""


def _data_file(path: str) -> str:
    return os.path.join(path, "data.mdb") if os.path.isdir(path) else path


def _pages_size(env: lmdb.Environment) -> int:
    return (env.info()["last_pgno"] + 1) * env.stat()["psize"]


def check_size(env: lmdb.Environment, path: str) -> None:
    """FormatError if data.mdb is shorter than the pages the environment uses
    (pages past its end that are all on the free list are not used: lmdbfree.py)."""
    data = _data_file(path)
    size = os.path.getsize(data)
    need = _pages_size(env)
    if size < need and not _free_past_end(data, size, env):
        raise FormatError(f"{data} is truncated ({size} bytes, its pages need {need}): "
                          f"restore it from a copy, or start with an empty directory")


def _free_past_end(data: str, size: int, env: lmdb.Environment) -> bool:
    """Whether every page from the one `size` cuts to the environment's last is free."""
    psize = env.stat()["psize"]
    try:
        _, free = free_pages(data)
    except (Unreadable, OSError, struct.error):
        return False
    return free.issuperset(range(size // psize, env.info()["last_pgno"] + 1))


def check_marker(env: lmdb.Environment, path: str, kind: str) -> None:
    """FormatError unless the environment is `kind`'s (or new); marks it as
    `kind`'s. Call before the named databases are opened (they would be
    created), on a writable environment."""
    with env.begin(write=True) as txn:
        found = txn.get(MARKER_KEY)
        if found is not None:
            owner = found.decode("ascii", "replace")
        else:
            names = {key for key, _ in txn.cursor()}
            owner = next((k for k, own in OWN_DATABASES.items() if k != kind and names & own), kind)
        if owner != kind:
            raise FormatError(f"{path} holds a WRECK {owner}'s data, not a {kind}'s: "
                              f"give the {kind} a directory of its own")
        if found is None:
            txn.put(MARKER_KEY, kind.encode("ascii"))


def check_readonly(env: lmdb.Environment, path: str, kind: str) -> None:
    """As check_marker, for a read-only environment: refuses another kind's
    data, writes nothing."""
    with env.begin() as txn:
        found = txn.get(MARKER_KEY)
        names = {key for key, _ in txn.cursor()}
    owner = found.decode("ascii", "replace") if found is not None else next(
        (k for k, own in OWN_DATABASES.items() if k != kind and names & own), kind)
    if owner != kind:
        raise FormatError(f"{path} holds a WRECK {owner}'s data, not a {kind}'s")


def keep_whole(env: lmdb.Environment, path: str) -> None:
    """After a commit: extend data.mdb (sparse: no block written) to every
    page the meta page counts. LMDB (writemap off) does not write a
    transaction's loose pages (allocated, then freed before its commit:
    mdb_page_flush skips P_LOOSE), so when they are the last page numbers
    the file ends before them; they are free, and check_size reads the
    free list to tell (lmdbfree.py), but the next open then need not, and
    a WRECK before that check opens it too (bench/results/2026-11-25-s12-frontier12.md:
    a cleanly stopped 15.2M-URL frontier was refused)."""
    data = _data_file(path)
    need = _pages_size(env)
    if os.path.getsize(data) < need:
        os.truncate(data, need)
