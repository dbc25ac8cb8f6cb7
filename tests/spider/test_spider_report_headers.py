# spider.report.header_value: a response header's first value from the raw
# block, as the DONE's validators, Location and Retry-After need it.
from __future__ import annotations

import random

from wreck.spider.report import header_value

HEAD = (b"HTTP/1.1 200 OK\r\nServer: nginx\r\nETag: \"6743a7e0-9543\"\r\nlast-modified :  Tue, 24 Nov 2026 13:32:00 GMT"
        b"\r\nEtag: second\r\n X-Etag: no\r\nLocation:\r\n\r\n")


def test_the_first_value_of_a_header_whatever_its_case_and_blanks():
    assert header_value(HEAD, b"etag") == '"6743a7e0-9543"'
    assert header_value(HEAD, b"last-modified") == "Tue, 24 Nov 2026 13:32:00 GMT"
    assert header_value(HEAD, b"location") == ""
    assert header_value(HEAD, b"retry-after") is None
    assert header_value(b"etag: in-the-status-line\r\n\r\n", b"etag") is None
    assert header_value(b"HTTP/1.1 200 OK\nETag:\xe9t\xe9\n", b"etag") == "\xe9t\xe9"  # Latin-1: every byte maps


def _by_lines(head: bytes, name: bytes) -> str | None:  # what a header block means, line by line
    for line in head.split(b"\n")[1:]:
        key, sep, value = line.partition(b":")
        if sep and key.strip().lower() == name:
            return value.strip().decode("latin-1")
    return None


def test_a_header_is_found_as_reading_the_block_line_by_line_finds_it():
    rng = random.Random(16)
    pieces = (b"\r\n", b"\n", b"ETag", b"etag", b"eTAG", b"Retry-After", b"retry-after", b":", b" ", b"\t", b"\x0b",
              b"\r", b"x", b"1", b"-", b"\xff", b"HTTP/1.1 302 Found")
    for _ in range(5_000):
        head = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        for name in (b"etag", b"retry-after"):
            assert header_value(head, name) == _by_lines(head, name), head
