# urlserver.scope on the edges of host names (tests/web/edges.py serves them
# to a crawl in tests/e2e/test_edges_e2e.py): a fully qualified name, with its
# final dot, is the same DNS name as without it, so it is in the same scope.
from __future__ import annotations

import pytest

from wreck.urlserver.scope import Scope


@pytest.mark.parametrize("mode", ["host", "domain"])
def test_a_host_with_a_final_dot_is_in_the_scope_of_its_name(mode):
    scope = Scope(mode=mode, seed_hosts={"www.example.org"}, max_depth=9, max_url_len=999, max_path_repeats=3)
    assert scope.filter_reason("http://www.example.org./p", "www.example.org.", 1) is None
    assert scope.filter_reason("http://other.test./p", "other.test.", 1) == f"out of scope ({mode})"
