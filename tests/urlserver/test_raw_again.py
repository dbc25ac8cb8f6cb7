"""A page in codings no browser knows (the spider's DONE says again=raw,
docs/protocol.txt 5.5) is handed out again with raw=1 as soon as its host's
delay allows: not inside the delay, not after --retry-delay (an hour by
default), and once; its other pages are fetched as usual."""

from __future__ import annotations

from wreck.protocol import Done, Specific, Status

from tests.urlserver_helpers import crawl_engine, fetched, serve_robots

DELAY = 2.0
SEED = "http://coding.test/"


def _decode_error(a, **extra) -> Done:
    return Done(a.trans_id, Status.FETCH_ERROR, 200, Specific.DECODE_ERROR, 1, extra=extra)


def test_a_page_the_spider_says_again_raw_of_is_handed_out_with_raw_1_after_the_hosts_delay_only(tmp_path):
    c = crawl_engine(tmp_path, delay=DELAY, retry_delay=3600.0)
    c.add_seed(SEED)
    serve_robots(c, "http://coding.test", now=0.0)
    first = c.take("s", DELAY)
    assert first.url == SEED and "raw" not in first.extra
    c.done("s", _decode_error(first, again="raw"), DELAY)
    assert c.take("s", DELAY + DELAY / 2) is None  # inside the host's delay: nothing
    again = c.take("s", 2 * DELAY)
    assert (again.url, again.extra.get("raw")) == (SEED, "1")
    c.done("s", fetched(again, SEED + "next"), 2 * DELAY)
    assert c.frontier.lookup(SEED)["state"] == "FETCHED"
    following = c.take("s", 3 * DELAY)
    assert following.url == SEED + "next" and "raw" not in following.extra  # only that page
    assert c.bandwidth.stats["raw_again"] == 1
    c.close()


def test_a_decode_error_without_again_raw_ends_the_page_as_before(tmp_path):
    c = crawl_engine(tmp_path, delay=DELAY, retry_delay=3600.0)
    c.add_seed(SEED)
    serve_robots(c, "http://coding.test", now=0.0)
    first = c.take("s", DELAY)
    c.done("s", _decode_error(first), DELAY)  # a corrupt gzip, say: the server's answer
    assert c.take("s", 10 * DELAY) is None
    assert c.frontier.lookup(SEED)["state"] == "ERROR" and not c.bandwidth.raw
    c.close()
