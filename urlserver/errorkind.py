# Why a URL ended in ERROR, as a closed set of names. The free text (a DNS
# answer's address, the spider's own words) stays in the URL record's
# reason and in the log; /status errors_by_kind and the wreck_errors
# Prometheus label use these names only, so a label has a bounded number of
# values (one series per kind, never one per address or per message).
# A fetch that failed is named by the protocol's Specific code
# (docs/protocol.txt); the urlserver's own failures have names of their own.
"""ErrorKind: the bounded vocabulary of URL failures."""

from __future__ import annotations

import enum

from wreck.protocol import Specific

# The urlserver's own kinds, and when each is counted.
OWN_KINDS = {
    "DNS_NXDOMAIN": "the host name does not exist",
    "DNS_NO_ADDRESS": "the host name has no A or AAAA record",
    "DNS_FAILED": "resolution failed --max-retries times (timeouts, server errors, no resolver)",
    "FORBIDDEN_ADDRESS": "the address is not admitted (loopback, private, reserved... without --allow-net)",
    "ROBOTS_UNREACHABLE": "robots.txt stayed unreachable for --robots-max-tries fetches",
    "CLAIM_EXPIRED": "the URL's claim expired --max-expiries times",
    "UNSENDABLE": "the protocol refused to encode the assignment",
}

ErrorKind = enum.Enum("ErrorKind", [(name, name) for name in
                                    (*OWN_KINDS, *(s.name for s in Specific if s.name not in OWN_KINDS))])
ErrorKind.__doc__ = ("Why a URL ended in ERROR: the urlserver's own kinds (OWN_KINDS), then the protocol's "
                     "Specific names for fetches that failed.")


def fetch_kind(specific: Specific) -> ErrorKind:
    """The kind of a fetch the spider reported as failed."""
    return ErrorKind[specific.name]
