"""wreck.urlnorm's cache of reference kinds is shared by a spider worker's
loop and its parse thread (spider/urlclient.py analyses heavy pages there):
two threads resolving links at once never fail on it (a KeyError there cost
a page its links: 'spider bug while analysing the response')."""

from __future__ import annotations

import sys
import threading

from wreck import urlnorm


def test_two_threads_resolving_at_once_never_fail_on_the_shared_cache(monkeypatch):
    monkeypatch.setattr(urlnorm, "PLAIN_REFS", 8)  # evict on nearly every new reference
    base = urlnorm.BaseUrl("http://docs.example/a/b.html")
    failures: list[BaseException] = []

    def resolve_many(prefix: str) -> None:
        try:
            for i in range(20_000):
                assert base.resolve(f"{prefix}{i}.html") == f"http://docs.example/a/{prefix}{i}.html"
        except BaseException as exc:  # noqa: BLE001 - the test reports whatever broke
            failures.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race shows quickly
    try:
        threads = [threading.Thread(target=resolve_many, args=(p,)) for p in ("x", "y", "z")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not failures, failures[:3]
    assert len(urlnorm._plain_refs) <= urlnorm.PLAIN_REFS  # still bounded
