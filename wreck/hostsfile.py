# A --hosts FILE: hosts(5) format, as /etc/hosts. Each line is 'ADDRESS
# NAME [ALIAS...]'; '#' starts a comment; blank lines and comment lines are
# fine; a UTF-8 byte-order mark before the first line is ignored (Windows
# editors write one). Every other line is a mistake the operator must see:
# an address that does not parse, a line with no name, a name that is not
# a host name. It used to be skipped without a word, and the crawl then
# asked DNS for the name the operator meant to pin. The first bad line is
# reported with the file and its line number (HostsFileError), before
# anything starts: wreck-crawl and the urlserver read the file at start
# (docs/operating.md, "--hosts FILE").
"""Read a hosts(5)-format file into a name -> address table, strictly."""

from __future__ import annotations

import ipaddress
import re

# A host name as a hosts file may pin it: ASCII labels of letters, digits,
# '-' and '_' (underscores occur in real host names, and the URL Standard
# keeps them), 1 to 63 octets each, 253 in all (RFC 1035 2.3.4), an optional
# final dot. A non-ASCII name is refused: URLs reach the resolver in their
# 'xn--' form (WHATWG URL host parsing), so such a line could never match.
MAX_NAME_LEN = 253
_NAME = re.compile(r"(?=[^.]{1,63}(?:\.|\Z))[A-Za-z0-9_-]+(?:\.(?=[^.]{1,63}(?:\.|\Z))[A-Za-z0-9_-]+)*\.?\Z",
                   re.ASCII)
_SHAPE = "a line is ADDRESS NAME [ALIAS...], as in /etc/hosts"


class HostsFileError(ValueError):
    """A line of a hosts file that is not 'ADDRESS NAME...': the message
    names the file and the line number."""


def is_host_name(name: str) -> bool:
    """True if `name` may be pinned by a hosts file (see _NAME above)."""
    return len(name.rstrip(".")) <= MAX_NAME_LEN and _NAME.match(name) is not None


def parse(text: str, source: str = "hosts file") -> dict[str, str]:
    """The name -> address table of hosts(5)-format `text` (names lower-case,
    without a final dot; the first line naming a host wins, as in glibc).
    Raises HostsFileError on the first line that is not a comment, blank,
    or 'ADDRESS NAME...', naming `source` and the line number."""
    table: dict[str, str] = {}
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        fields = line.partition("#")[0].split()
        if not fields:
            continue
        where = f"{source} line {number}"
        try:
            ip = str(ipaddress.ip_address(fields[0]))
        except ValueError:
            raise HostsFileError(f"{where}: {fields[0]!r} is not an IP address ({_SHAPE})") from None
        if len(fields) < 2:
            raise HostsFileError(f"{where}: {fields[0]} names no host ({_SHAPE})")
        for name in fields[1:]:
            if not is_host_name(name):
                raise HostsFileError(f"{where}: {name!r} is not a host name ({_SHAPE})")
            table.setdefault(name.lower().rstrip("."), ip)
    return table


def read(path: str) -> dict[str, str]:
    """parse() of the file at `path` (UTF-8), its errors naming it as
    '--hosts PATH'. Raises HostsFileError, or OSError when it cannot be read."""
    with open(path, "rb") as fh:
        data = fh.read()
    source = f"--hosts {path}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        number = data[: exc.start].count(b"\n") + 1
        raise HostsFileError(f"{source} line {number}: not UTF-8 text ({_SHAPE})") from None
    return parse(text, source)
