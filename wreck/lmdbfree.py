# The page numbers on an LMDB environment's free list, read from data.mdb
# with read() (never through a map), so that a file that ends before pages
# LMDB never wrote can be told from one cut short (lmdbformat.check_size).
# LMDB (writemap off) does not write a transaction's loose pages (allocated,
# then freed before its commit; mdb_page_flush skips P_LOOSE) but its meta
# page counts them, and its commit puts them on the free list: such a file
# ends before its last page number, and every page past its end is free.
#
# The layout read is LMDB 0.9's on a 64-bit little- or big-endian machine
# (native order, as LMDB writes it; lmdb.h, mdb.c): a page is a 16-byte
# header (pgno u64, pad u16, flags u16, lower u16, upper u16) and, from
# offset 16, u16 offsets of its nodes; a node is lo u16, hi u16, flags u16,
# ksize u16, the key, then the data (leaf) or, in lo|hi<<16|flags<<32, its
# child's page number (branch). A meta page holds, after the header, magic
# u32 and version u32, address and map size u64, the free and main
# databases' records (48 bytes each: pad u32 (the free one's: the page
# size), flags u16, depth u16, branch, leaf and overflow page counts,
# entries, root: u64), last page u64 and txnid u64. The free database maps
# a txnid to a list of page numbers: count u64 then the numbers, in the
# leaf or on overflow pages (node flag F_BIGDATA: the data is their first
# page number). py-lmdb bundles LMDB 0.9.36 here; a layout other than this
# one reads as Unreadable, and the short file is refused as before.
"""Read the page numbers on an LMDB environment's free list from its file."""

from __future__ import annotations

import os
import struct

PAGE_HEADER = 16
META_MAGIC = 0xBEEFC0DE
NO_PAGE = (1 << 64) - 1  # an empty database's root (P_INVALID)
BRANCH, LEAF = 0x01, 0x02  # page flags
BIG_DATA = 0x01  # node flag: the data is on overflow pages
_U16 = struct.Struct("=H")
_U64 = struct.Struct("=Q")
_NODE = struct.Struct("=HHHH")
_META = struct.Struct("=II")  # magic, version, at PAGE_HEADER
FREE_DB_AT = PAGE_HEADER + 24  # the free database's record in a meta page
ROOT_AT = FREE_DB_AT + 40  # its root page number
LAST_AT = FREE_DB_AT + 96  # the meta page's last page number, then its txnid


class Unreadable(Exception):
    """The free list could not be read whole from the file."""


def free_pages(data: str) -> tuple[int, set[int]]:
    """(last page number, the page numbers on the free list) of the newest
    meta page of `data`; Unreadable if a page it needs is past the file's
    end or not what the layout above says."""
    with open(data, "rb") as fh:
        end = os.fstat(fh.fileno()).st_size
        first = fh.read(PAGE_HEADER + 48)
        if len(first) < PAGE_HEADER + 48:
            raise Unreadable("no meta page")
        psize = struct.unpack_from("=I", first, FREE_DB_AT)[0]
        if psize < 512 or psize & (psize - 1):
            raise Unreadable("no page size")

        def read(pgno: int, size: int = psize) -> bytes:
            if pgno * psize + size > end:  # checked first: a damaged number reads nothing
                raise Unreadable(f"page {pgno} is past the file's end")
            fh.seek(pgno * psize)
            return fh.read(size)

        metas = []
        for pgno in (0, 1):
            meta = read(pgno)
            if _META.unpack_from(meta, PAGE_HEADER)[0] != META_MAGIC:
                raise Unreadable(f"meta page {pgno} has no magic")
            last, txnid = struct.unpack_from("=QQ", meta, LAST_AT)
            metas.append((txnid, last, _U64.unpack_from(meta, ROOT_AT)[0]))
        _, last, root = max(metas)
        free: set[int] = set()
        stack = [] if root == NO_PAGE else [root]
        visited = 0
        while stack:
            visited += 1
            if visited > last + 1:  # more pages than the file has: a loop, not a tree
                raise Unreadable("the free list's tree loops")
            page = read(stack.pop())
            flags, lower = struct.unpack_from("=HH", page, 10)
            for i in range(max(lower - PAGE_HEADER, 0) >> 1):
                at = _U16.unpack_from(page, PAGE_HEADER + 2 * i)[0]
                if at + _NODE.size > psize:
                    raise Unreadable("a node past its page")
                lo, hi, node_flags, ksize = _NODE.unpack_from(page, at)
                if flags & BRANCH:
                    stack.append(lo | hi << 16 | node_flags << 32)
                elif flags & LEAF:
                    free.update(_page_list(page, at + _NODE.size + ksize, node_flags, read, psize))
                else:
                    raise Unreadable("a page of the free list is neither branch nor leaf")
        return last, free


def _page_list(page: bytes, at: int, node_flags: int, read, psize: int) -> tuple[int, ...]:
    """The page numbers of one free-list record, in its leaf or on overflow pages."""
    if node_flags & BIG_DATA:  # overflow pages are consecutive: one read
        first = _U64.unpack_from(page, at)[0]
        count = _U64.unpack_from(read(first, PAGE_HEADER + 8), PAGE_HEADER)[0]
        return struct.unpack_from(f"={count}Q", read(first, PAGE_HEADER + 8 * (count + 1)), PAGE_HEADER + 8)
    count = _U64.unpack_from(page, at)[0]
    if at + 8 * (count + 1) > psize:
        raise Unreadable("a free-list record past its page")
    return struct.unpack_from(f"={count}Q", page, at + 8)
