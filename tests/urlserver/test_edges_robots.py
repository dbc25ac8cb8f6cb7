# urlserver.robots.outcome on robots.txt redirects that lead nowhere
# (tests/web/edges.py's robots-nowhere host, crawled in
# tests/e2e/test_edges_e2e.py): RFC 9309 2.3.1.2-4 calls a robots.txt that is
# not reached through redirects "unavailable" (allow all); only a server or
# network failure is "unreachable" (disallow all until a retry).
from __future__ import annotations

import pytest

from wreck.protocol import Done, Specific, Status
from wreck.urlserver import robots as r


@pytest.mark.parametrize("status, code, specific, kind", [
    (Status.ERROR, 302, Specific.HTTP_ERROR, r.ALLOW_ALL),  # no Location, or an ftp: one
    (Status.ERROR, 301, Specific.HTTP_ERROR, r.ALLOW_ALL),
    (Status.FETCH_ERROR, 302, Specific.RESET, r.UNREACHABLE),  # the transfer broke: try again
])  # fmt: skip
def test_a_robots_redirect_naming_no_target_is_unavailable_not_unreachable(status, code, specific, kind):
    assert r.outcome(Done(1, status, code, specific, 1), hops=0).kind == kind
