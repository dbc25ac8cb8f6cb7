"""A page claim keeps the URL record it wrote (Claim.rec) and whatever ends
the claim moves that record instead of reading it again (crawl.py,
CLAIM_RECORD): what an operator then reads of each URL must be what the
engine wrote when it read the record afresh at every ending."""

from __future__ import annotations

from wreck.protocol import Done, Specific, Status
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.dns import Resolution
from wreck.urlserver.operations import Operations
from wreck.urlserver.settings import Settings

SITE = "http://a.test"
SEEDS = ("/", "/redirect", "/flaky", "/hung", "/gone", "/restart")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _open(path, clock: Clock) -> Crawl:
    return Crawl.open(Settings(data=str(path), delay=0.0, allow_net=("127.0.0.0/8",), sync=False,
                               retry_delay=10.0, max_retries=3, timeout_update=5.0), clock=clock)


def _reread(crawl: Crawl) -> None:
    """What the engine did before Claim.rec: each claim's ending read its record again."""
    for claim in crawl.claims.by_id.values():
        if claim.rec is not None:
            claim.rec = crawl.frontier.record(claim.fp)


def _answer(a, seen: int) -> Done | None:
    """The scripted spider: None leaves the assignment unanswered."""
    path = a.url[len(SITE):]
    if path == "/robots.txt":
        return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
    if path == "/":
        return Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=(f"{SITE}/l1", f"{SITE}/l2"),
                    extra={"size": "1234"})
    if path == "/redirect":
        return Done(a.trans_id, Status.REDIRECTION, 301, Specific.REDIRECT, 1, new_url=f"{SITE}/target")
    if path == "/flaky" and seen == 0:
        return Done(a.trans_id, Status.FETCH_ERROR, 0, Specific.TIMEOUT, 1, reason="timed out")
    if path == "/hung" and seen == 0:
        return None  # its claim expires, then the next claim is answered
    if path == "/missing":
        return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
    return Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1)


def _crawl(path, *, reread: bool) -> tuple[dict[bytes, bytes], dict[str, dict], dict[str, int]]:
    """Run the script; the URL records as stored, what the operator API says of each URL, the counts."""
    clock = Clock()
    crawl = _open(path, clock)
    for seed in SEEDS:
        crawl.add_seed(SITE + seed)
    crawl.add_seed(f"{SITE}/missing")
    seen: dict[str, int] = {}
    restarted = False
    for step in range(60):
        clock.now = now = step * 20.0  # past every retry delay and slow-down of the script
        if reread:
            _reread(crawl)
        crawl.expire(now)
        a = crawl.take("s", now)
        for host in crawl.dns_requests():
            crawl.dns_result(host, Resolution("127.0.0.2", "", 1e12), now)
        a = a or crawl.take("s", now)
        if a is None:
            continue
        crawl.commit()  # durable before it is "sent", as server.py does
        if a.url.endswith("/gone") and not seen.get(a.url):
            seen[a.url] = 1
            if reread:
                _reread(crawl)
            crawl.spider_gone("s", now)  # its claim goes back to the queue
            continue
        if a.url.endswith("/restart") and not restarted:
            restarted = True
            crawl.close()  # with the claim in flight: the next start requeues it
            crawl = _open(path, clock)
            continue
        done = _answer(a, seen.get(a.url, 0))
        seen[a.url] = seen.get(a.url, 0) + 1
        if done is not None:
            if reread:
                _reread(crawl)
            crawl.done("s", done, now)
    assert crawl.finished()
    crawl.close()
    crawl = _open(path, clock)
    with crawl.db.begin() as txn:
        records = dict(txn.cursor(db=crawl.db.urls))
    ops = Operations(crawl, clock=clock)
    urls = {SITE + p: ops.url(SITE + p) for p in (*SEEDS, "/missing", "/l1", "/l2", "/target")}
    counts = dict(crawl.frontier.counts)
    crawl.close()
    return records, urls, counts


def test_a_done_moves_the_record_its_claim_wrote_and_the_operator_sees_what_a_fresh_read_gave(tmp_path):
    records, urls, counts = _crawl(tmp_path / "kept", reread=False)
    assert (records, urls, counts) == _crawl(tmp_path / "reread", reread=True)  # byte for byte
    states = {url[len(SITE):]: found["state"] for url, found in urls.items()}
    assert states == {"/": "FETCHED", "/redirect": "REDIRECTED", "/flaky": "FETCHED", "/hung": "FETCHED",
                      "/gone": "FETCHED", "/restart": "FETCHED", "/missing": "ERROR", "/l1": "FETCHED",
                      "/l2": "FETCHED", "/target": "FETCHED"}
    flaky, hung, home = urls[f"{SITE}/flaky"], urls[f"{SITE}/hung"], urls[f"{SITE}/"]
    assert flaky["tries"] == 2 and flaky["fetches"] == 2  # the timeout, then the retry's fetch
    assert hung["expiries"] == 1 and [m["event"] for m in hung["history"]][-3:] == [
        "CLAIM_EXPIRED", "CLAIMED", "FETCHED"]
    assert [m["event"] for m in urls[f"{SITE}/restart"]["history"]][-3:] == [
        "REQUEUED_AFTER_RESTART", "CLAIMED", "FETCHED"]
    assert home["tries"] == 1 and home["doc_id"] and urls[f"{SITE}/l1"]["path"] == "L"
    assert urls[f"{SITE}/target"]["hops"] == 1 and urls[f"{SITE}/missing"]["last_error"]
    assert counts["FETCHED"] == 8 and counts["IN_FLIGHT"] == 0
