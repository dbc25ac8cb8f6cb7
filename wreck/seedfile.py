# The seed list's format, shared by the urlserver (which loads the seeds) and
# wreck-crawl (which must know before starting it whether a crawl has feeds,
# and so runs until Ctrl-C). One URL per line from a file, standard input
# ('-') or the command line (a UTF-8 byte-order mark ignored); blank lines
# and '#' comments are skipped; a seed written 'feed:URL' is a feed. Reading only: what a line means beyond
# that (normalising, queueing) is the urlserver's. survey() checks every
# line before a crawl starts, as wreck-crawl and the urlserver do: a seed that
# cannot be crawled is a problem with its file and line (and a hint: the URL
# it probably means, or the --allow-net it needs), and a seed file that cannot
# be read is a SeedError; neither needs the crawl's state.
"""Seed lines, the 'feed:' mark, and the check of seeds before a crawl."""

from __future__ import annotations

import codecs
import dataclasses
import io
import ipaddress
import sys
from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

from wreck.netpolicy import FORBIDDEN_V4, AddressPolicy
from wreck.urlnorm import normalize

FEED_PREFIX = "feed:"
FORBIDDEN = "forbidden address"  # netpolicy's refusal text
ADDRESS_OUTCOME = "queued, to end ERROR with this reason"
SNIFF_BYTES = 4096  # of a seed file, read to tell text from UTF-16 or binary
SHOWN_CHARS = 80  # of a bad seed quoted in a message: a line is never a page long


class SeedError(Exception):
    """The seeds cannot be read at all (the message says which file and why)."""


@dataclasses.dataclass
class Survey:
    """What survey() found: the usable seeds, and one (line, outcome) per bad
    one: a line that is no http(s) URL is skipped; a URL at an address the
    policy refuses is still queued, to end ERROR with its reason at /url."""

    good: list[str] = dataclasses.field(default_factory=list)
    problems: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    def lines(self) -> list[str]:
        """Each problem with its outcome, for stderr."""
        return [f"{line} ({outcome})" for line, outcome in self.problems]


def read_lines(source: str | None, args: Iterable[str], stdin: str | None = None) -> Iterator[tuple[str, int, str]]:
    """(where, line number, text) for every seed candidate; `stdin`: the text
    of standard input if the caller has already read it."""
    if source is not None:
        if source == "-":
            fh, where = (sys.stdin if stdin is None else io.StringIO(stdin)), "<stdin>"
        else:
            _check_text(source)
            fh, where = open(source, encoding="utf-8", errors="replace"), source
        try:
            for number, line in enumerate(fh, 1):
                # a UTF-8 byte-order mark (Windows editors write one) is no part of the first seed
                text = (line.removeprefix("\ufeff") if number == 1 else line).strip()
                if text and not text.startswith("#"):
                    yield where, number, text
        finally:
            if source != "-":
                fh.close()
    for number, text in enumerate(args, 1):
        yield "<args>", number, text.strip()


def _check_text(source: str) -> None:
    """SeedError if the file `source` is UTF-16 (a Windows editor's
    "Unicode") or not text at all: read as UTF-8, every line would be a bad
    seed, quoted with its NUL bytes."""
    with open(source, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise SeedError(f"{source} is UTF-16 text: save it as UTF-8, one URL a line")
    if b"\0" in head:
        raise SeedError(f"{source} is not a text file (it holds NUL bytes): give a file of URLs, one a line")


def has_feeds(source: str | None, args: Iterable[str], stdin: str | None = None) -> bool:
    """Whether any seed is marked 'feed:' (wreck-crawl then runs continuously)."""
    return any(text.startswith(FEED_PREFIX) for _, _, text in read_lines(source, args, stdin))


def survey(source: str | None, args: Iterable[str], allow_net: Iterable[str] = (), stdin: str | None = None) -> Survey:
    """Check every seed line before a crawl; SeedError if `source` cannot be read."""
    found = Survey()
    policy = AddressPolicy(allow_net)
    try:
        for where, number, text in read_lines(source, args, stdin):
            url = text[len(FEED_PREFIX):].strip() if text.startswith(FEED_PREFIX) else text
            why = problem(url, policy)
            if why is None:
                found.good.append(url)
            else:
                place = f"seed {number}" if where == "<args>" else f"{where}:{number}"
                outcome = ADDRESS_OUTCOME if why.startswith(FORBIDDEN) else "skipped"
                found.problems.append((f"{place}: {_shown(url)}: {why}", outcome))
    except UnicodeDecodeError as exc:  # standard input decodes strictly
        raise SeedError(f"cannot read {source}: {exc.reason}") from None
    except OSError as exc:
        raise SeedError(f"cannot read {source}: {exc.strerror or exc}") from None
    return found


def problem(url: str, policy: AddressPolicy | None = None) -> str | None:
    """Why `url` cannot be a seed (with a hint), or None if it can."""
    canonical = normalize(url)
    if canonical is None:
        bracketed = _bracketed(url)
        if bracketed is not None:
            return f"an IPv6 address goes in brackets (RFC 3986 3.2.2): did you mean {bracketed}?"
        scheme, colon, rest = url.partition(":")
        if not colon or not rest.startswith("//") and "." in scheme:  # example.org, example.org:8080/x
            guess = normalize(f"https://{url}")
            if guess is not None and "." in guess.split("/")[2]:
                return f"no scheme: did you mean {guess}?"
            return "not a URL (seeds are http:// or https:// URLs)"
        if colon and scheme.lower() not in ("http", "https") and scheme.isascii() and scheme.isalpha():
            return f"{scheme.lower()}: URLs are not crawled (only http:// and https://)"
        return "not a URL (seeds are http:// or https:// URLs)"
    try:
        addr = ipaddress.ip_address(urlsplit(canonical).hostname or "")
    except ValueError:
        return None  # a name: its addresses are known after resolution (the urlserver checks them)
    refusal = (policy or AddressPolicy()).refusal(str(addr))
    if refusal is None:
        return None
    return f"{refusal}: crawl it with --allow-net {_network_of(addr)}"


def _bracketed(url: str) -> str | None:
    """`url` with its bare IPv6 host in brackets (http://2001:db8::1/ or
    2001:db8::1), if that is what it lacks."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "https", url
    host, slash, path = rest.partition("/")
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return None
    return normalize(f"{scheme}://[{host}]/{path}")


def _network_of(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """The special-purpose range holding `addr` (127.0.0.0/8), else the address alone."""
    if addr.version == 4:
        for net, _why in FORBIDDEN_V4:
            if addr in net:
                return str(net)
    return f"{addr}/{addr.max_prefixlen}"


def _shown(text: str) -> str:
    shown = text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."
    return shown.encode("ascii", "backslashreplace").decode("ascii")
