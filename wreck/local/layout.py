# The data directory of a local crawl, named in one place. wreck-crawl owns
# the directory (0700) and hands each daemon its part on the command line:
#
#   DIR/                 the crawl; the storeserver's --data (the store keeps
#                        its LMDB in DIR/store/, so `wreck-dump --data DIR`
#                        reads it)
#   DIR/crawl.toml       the crawl's settings (its urlserver's and store's),
#                        which the children start from (wreck/crawlfile.py)
#   DIR/crawl.lock       held by the wreck-crawl that owns DIR (wreck/dirlock.py)
#   DIR/shardN/          with --stores n > 1: the --data of shard N (1..n-1;
#                        shard 0 is DIR), read together with `wreck-dump
#                        --manifest DIR/frontier/crawl.json`
#   DIR/frontier/        the urlserver's --data (frontier, seen-set, settings,
#                        and crawl.json, the stores in shard order)
#   DIR/frontierN/       with --partitions m > 1: the --data of urlserver
#                        partition N (1..m-1; partition 0's is DIR/frontier),
#                        each keeping its own urlserver.toml (docs/partitions.md)
#   DIR/frontier/api-token  the operator API's token the urlserver leaves
#                        there (docs/api.md), printed for the operator
#   DIR/store.sock       the store's Unix-domain socket (its --unix, 0600), which
#                        the spider's records go through (docs/protocol.txt 6.6);
#                        each shard's in its own --data
#   DIR/logs/NAME.log    each daemon's stderr and late stdout (0600), rotated
#                        to NAME.log.1.. past a size bound (logfile.py)
#   DIR/seeds-stdin.txt  seeds read from standard input ('--seeds -'): the
#                        urlserver child has no terminal, so it gets a file
#
# What lies inside a daemon's part is that daemon's business: wreck-crawl
# never opens it, and learns counts through the urlserver's /status and the
# store's public read API (wreck.storeserver.reader).
"""Where each part of a local crawl lives in its data directory."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wreck.manifest import MANIFEST
from wreck.private import DIR_MODE, private_dir
from wreck.storeserver.settings import MAX_UNIX_PATH

FRONTIER = "frontier"
LOGS = "logs"
SEEDS_STDIN = "seeds-stdin.txt"
SETTINGS = "crawl.toml"
STORE_SOCKET = "store.sock"
API_TOKEN = "api-token"  # in the urlserver's --data: urlserver/api.py TOKEN_FILE
# What a crawl (or a store server run by hand) puts in the root: a root
# holding any of these is a crawl's, to resume; storeserver/store.py's
# STORE_SUBDIR, wreck/dirlock.py's locks, storeserver/cli.py's KEPT.
CRAWL_NAMES = frozenset({SETTINGS, "crawl.lock", FRONTIER, LOGS, "store", STORE_SOCKET, SEEDS_STDIN,
                         "storeserver.lock", "storeserver.toml"})
CRAWL_PREFIXES = (FRONTIER, "shard")  # frontierN/, shardN/
NOT_FOREIGN = frozenset({"lost+found"})  # a fresh file system mounted for the crawl has one


@dataclass(frozen=True)
class Layout:
    """The paths of the crawl kept in `root`."""

    root: Path
    shards: int = 1  # store shards (wreck-crawl --stores)
    partitions: int = 1  # urlserver partitions (wreck-crawl --partitions)

    @property
    def store_data(self) -> Path:
        """The storeserver's --data (and wreck-dump's); shard 0's."""
        return self.root

    @property
    def store_dirs(self) -> list[Path]:
        """Each shard's --data, in shard order."""
        return [self.root, *(self.root / f"shard{i}" for i in range(1, self.shards))]

    @staticmethod
    def store_socket(store_dir: Path) -> list[str]:
        """The store flags of a shard's Unix socket in `store_dir` (none when
        its absolute path is too long for one: the records then go by TCP)."""
        path = str(Path(store_dir).absolute() / STORE_SOCKET)
        return ["--unix", path] if len(os.fsencode(path)) <= MAX_UNIX_PATH else []

    @property
    def manifest(self) -> Path:
        """The crawl's manifest, which the urlserver writes (wreck/manifest.py)."""
        return self.frontier / MANIFEST

    @property
    def frontier(self) -> Path:
        """The urlserver's --data."""
        return self.root / FRONTIER

    @property
    def frontiers(self) -> list[Path]:
        """Each urlserver partition's --data, in partition order."""
        return [self.frontier, *(self.root / f"{FRONTIER}{i}" for i in range(1, self.partitions))]

    def kept_partitions(self) -> int:
        """The partitions a started crawl runs: its partition directories."""
        count = 1
        while (self.root / f"{FRONTIER}{count}").exists():
            count += 1
        return count

    @property
    def api_token(self) -> Path:
        """Where the urlserver leaves the operator API's token (docs/api.md)."""
        return self.frontier / API_TOKEN

    @property
    def logs(self) -> Path:
        return self.root / LOGS

    def log(self, name: str) -> Path:
        """The log file of the child named `name`."""
        return self.logs / f"{name}.log"

    @property
    def settings(self) -> Path:
        """The crawl's settings file (its urlserver's and store's)."""
        return self.root / SETTINGS

    @property
    def seeds_stdin(self) -> Path:
        """Where seeds given on standard input are copied for the urlserver."""
        return self.root / SEEDS_STDIN

    def daemon_locks(self) -> tuple[tuple[Path, str], ...]:
        """(directory, lock name) of each daemon's lock (wreck/dirlock.py)."""
        return (*((d, "storeserver") for d in self.store_dirs), *((d, "urlserver") for d in self.frontiers))

    def foreign(self, given: Iterable[str | os.PathLike[str] | None] = ()) -> list[str]:
        """What an existing, non-empty root holds when none of it is a
        crawl's (notes, photos, a home directory): wreck-crawl would fill it
        and make it private (make() sets it 0700), so it is refused. Empty
        when the root is missing, empty, or holds anything a crawl makes.
        The files `given` on the command line (a seeds file kept beside the
        crawl) are the operator's own for it: never foreign."""
        try:
            names = [n for n in os.listdir(self.root) if n not in NOT_FOREIGN]
        except (FileNotFoundError, NotADirectoryError):
            return []
        mine = {Path(g).resolve() for g in given if g}
        names = [n for n in names if (self.root / n).resolve() not in mine]
        if any(n in CRAWL_NAMES or n.startswith(CRAWL_PREFIXES) for n in names):
            return []
        return sorted(names)

    def started(self) -> bool:
        """Whether a crawl was already started here (so a bare run resumes it)."""
        return self.frontier.exists()

    def make(self) -> None:
        """Create the directory and its logs/, private to this user."""
        private_dir(self.logs)
        os.chmod(self.root, DIR_MODE)  # an existing directory too: it will hold every page
