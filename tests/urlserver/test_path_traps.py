"""The repeated-segment rule of urlserver/scope.py on paths grown by '//'
(each a new URL to a crawler, the same page to most servers) and by '/./'
(the same URL once normalised): both end within a few URLs, while a
directory's trailing slash and a lone '//' stay admitted."""

from __future__ import annotations

import pytest

from wreck.urlnorm import normalize
from wreck.urlserver.scope import Scope

TRAP = "repeated path segments (trap)"


def _scope() -> Scope:
    return Scope(mode="host", seed_hosts={"dots.test"}, max_depth=1000, max_url_len=2048, max_path_repeats=3)


@pytest.mark.parametrize("path, reason", [
    ("/d/", None), ("/a/b/c/d/", None), ("/a//b/c/d", None), ("/d////", None),  # three empty segments, and the last
    ("/d/////", TRAP), ("/d//x//y//z", None), ("/d//x//y//z//w", TRAP), ("//////", TRAP),
    ("/d/./././././x", None),  # dot segments are gone once normalised: '/d/x'
])
def test_a_path_grown_by_empty_segments_is_a_trap_after_max_path_repeats(path, reason):
    url = normalize(f"http://dots.test{path}")
    assert _scope().filter_reason(url, "dots.test", 1) == reason, url
