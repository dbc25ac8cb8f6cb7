# Host names for crawlers that read a hosts file instead of asking DNS.
#
# The same name -> address table the DNS responder serves, written in
# /etc/hosts format ("ADDRESS NAME" per line), sorted for stable diffs.

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def hosts_file_text(addresses: Mapping[str, str]) -> str:
    """/etc/hosts-format text for a name -> IPv4 table."""
    lines = ["# WRECK test web: name -> address (loopback unless the web was told otherwise)"]
    # a wildcard ('*.wild.test') is the DNS responder's alone: a hosts file names each host
    lines += [f"{ip}\t{name}" for name, ip in sorted(addresses.items()) if not name.startswith("*.")]
    return "\n".join(lines) + "\n"


def write_hosts_file(addresses: Mapping[str, str], path: str | Path) -> Path:
    """Write hosts_file_text(addresses) to `path`; return it as a Path."""
    path = Path(path)
    path.write_text(hosts_file_text(addresses))
    return path
