# Which urlserver partition owns a host (docs/partitions.md). The key is the
# host's registrable domain (urlserver/scope.py, the Public Suffix List of
# tldextract's bundled snapshot), so one site's hosts, which usually share
# their IP addresses and a robots.txt owner, sit in one partition with one
# politeness; an IP literal, or a name under a suffix the list does not
# know (.test, .internal), is its own key. The key's BLAKE2b-64 (digest
# read big-endian) goes through jump consistent hash (Lamping and Veach,
# "A Fast, Minimal Memory, Consistent Hash Algorithm", 2014): every
# partition gets 1/M of the keys, and going from M to M+1 partitions moves
# only the 1/(M+1) that the new one takes. Every part that asks which
# partition a host belongs to calls partition_of: the engine when a link is
# discovered, the seeds loader, and the tests.
"""partition_of(host, M): the partition that owns a host."""

from __future__ import annotations

import hashlib
from functools import lru_cache

from .scope import psl_domain

# At most this many partitions: their control addresses travel in one SET
# line (docs/protocol.txt 5.1, MAX_SETTING_VALUE_LEN = 1024 octets: 64
# addresses of 15 characters), and doc ids are u32 (counter * M + I), so
# each partition keeps 2^32 / M of them.
MAX_PARTITIONS = 64

_MULTIPLIER = 2862933555777941757  # the 64-bit LCG of the jump hash paper
_MASK = (1 << 64) - 1


def jump(key: int, buckets: int) -> int:
    """Lamping-Veach jump consistent hash of the u64 `key` into
    0..buckets-1."""
    if buckets < 1:
        raise ValueError(f"buckets must be at least 1, not {buckets}")
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * _MULTIPLIER + 1) & _MASK
        j = int((b + 1) * ((1 << 31) / ((key >> 33) + 1)))
    return b


def key_of(host: str) -> str:
    """The partition key of `host`: its registrable domain by the Public
    Suffix List, or the host itself (lower-case) for an IP literal or a
    name under a suffix the list does not know (.test, .internal, an
    intranet's), where the list cannot tell where a site begins."""
    host = host.lower()
    return psl_domain(host) or host


def hash_of(key: str) -> int:
    """BLAKE2b with an 8-octet digest, read as a big-endian u64."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


@lru_cache(maxsize=65536)
def partition_of(host: str, partitions: int) -> int:
    """The partition (0..partitions-1) that owns `host`; 0 when there is one."""
    if partitions == 1:
        return 0
    return jump(hash_of(key_of(host)), partitions)


class DocIdsExhausted(Exception):
    """A partition has handed out every doc id of its range."""


def doc_id_of(counter: int, partition: int, partitions: int) -> int:
    """The doc id of a partition's `counter`-th document (counter from 1):
    partition I of M owns the range I * floor(2^32 / M) + counter, so the
    stores, shared by every partition, never see one id twice, and each
    partition's consecutive ids walk every store shard (doc id mod k) in
    turn whatever M and k are (docs/partitions.md, Doc ids)."""
    span = (1 << 32) // partitions
    if counter >= span:
        raise DocIdsExhausted(f"partition {partition} has handed out its {span - 1} doc ids")
    return partition * span + counter
