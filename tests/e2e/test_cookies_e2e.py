"""wreck-crawl end to end on the hosts that need a cookie (tests/web/cookies.py).

check13's every page answers a request without the cookie with a 302 back
to itself that sets it. A crawler that sends no cookie stores only those
redirects and never sees a link; WRECK, as a browser, asks such a page again
once with the cookie (docs/operating.md, "Cookies") and stores the page. A
cookie RFC 6265 refuses (another site's Domain, a public suffix, Secure on
http, removed by Max-Age=0, past the size bound) is never sent: the redirect
is stored, asked once. Many or huge cookies are bounded: the Cookie header
stays under what servers accept. The WARC request record shows the Cookie
header as it was sent. With --no-cookies every page is the redirect again.

The test web's request log says what WRECK asked for, the store what it kept."""

from __future__ import annotations

import subprocess
import sys

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.e2e_helpers import asked_by_host, crawl_logged, dump_all
from tests.web import SiteSpec
from tests.web.cookies import CHECK, SESSION, SESSION_PAGES, SUFFIX, CookieHosts

pytestmark = pytest.mark.e2e
COMMON = ["--delay", "0.01", "--concurrency", "10"]


def _crawl(tmp_path_factory, name: str, args: list[str]):
    """(the run, host -> the targets asked, host -> path -> stored record, the crawl's directory)."""
    tmp = tmp_path_factory.mktemp(name)
    run, records, _ = crawl_logged(tmp, SiteSpec(hosts=1, pages_per_host=1, hostile=False, cookies=True),
                                   CookieHosts.seeds, COMMON + args)
    stored: dict[str, dict[str, dict]] = {}
    for record in dump_all(tmp / "crawl"):
        host, _, rest = record["url"].split("//", 1)[1].partition("/")
        stored.setdefault(host.rsplit(":", 1)[0], {})["/" + rest] = record
    return run, asked_by_host(records), stored, tmp / "crawl"


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    return _crawl(tmp_path_factory, "cookies", [])


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    return _crawl(tmp_path_factory, "no-cookies", ["--no-cookies"])


def test_a_page_that_checks_for_its_cookie_by_redirecting_to_itself_is_stored_with_its_links(crawled):
    run, asked, stored, _ = crawled
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    pages = CookieHosts.pages()
    assert {path: stored[CHECK].get(path, {}).get("status") for path in pages} == dict.fromkeys(pages, 200)
    # each asked twice: first without the cookie, then with it
    assert {path: asked[CHECK].count(path) for path in pages} == dict.fromkeys(pages, 2)


def test_a_cookie_rfc_6265_refuses_is_never_sent_and_its_redirect_is_stored_once(crawled):
    _, asked, stored, _ = crawled
    for host, paths in CookieHosts.refused().items():
        assert {path: stored[host][path]["status"] for path in paths} == dict.fromkeys(paths, 302), host
        assert {path: asked[host].count(path) for path in paths} == dict.fromkeys(paths, 1), host


def test_a_site_that_puts_a_new_session_id_in_every_link_is_crawled_once_each_page(crawled):
    _, asked, stored, _ = crawled
    # each visit without the cookie is a new session: the ids are stripped from the links (docs/urls.md)
    assert sorted(asked[SESSION]) == sorted(["/robots.txt", *SESSION_PAGES])
    pages = {path: record["status"] for path, record in stored[SESSION].items() if path != "/robots.txt"}
    assert pages == dict.fromkeys(SESSION_PAGES, 200)


def test_the_warc_request_record_shows_the_cookie_header_as_sent(crawled, tmp_path):
    *_, data = crawled
    warc = tmp_path / "crawl.warc.gz"
    dump = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", "--data", str(data), "--all",
                           "--warc", str(warc)], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr
    sent: dict[str, list[str]] = {}
    with open(warc, "rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type == "request":
                url = record.rec_headers.get_header("WARC-Target-URI")
                sent[url.split(":", 2)[2].split("/", 1)[1]] = [value for name, value in record.http_headers.headers
                                                               if name.lower() == "cookie"]
    assert sent["in/a"] == ["seen=1"]
    assert sent["bad/secure"] == []
    cookie = sent["big/many"][0]
    assert cookie.startswith("seen=1; ") and len(cookie) < 8190  # the server's bound: it answered 200
    assert sent["big/huge-and-small"] == ["seen=1"]


def test_no_cookies_stores_each_cookie_check_as_the_redirect_it_was(refused):
    run, asked, stored, _ = refused
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert stored[CHECK]["/"]["status"] == 302
    assert asked[CHECK].count("/") == 1
    assert "/in/a" not in asked[CHECK]
    assert stored[SUFFIX]["/"]["status"] == 302
