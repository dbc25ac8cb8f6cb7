# spider.outcome and spider.allownet: the status mapping and the address
# policy as pure functions (no sockets).
from __future__ import annotations

import pycurl
import pytest

from wreck.protocol import Specific, Status
from wreck.spider.allownet import AllowNet
from wreck.spider.outcome import of_response, of_transfer, parse_retry_after

F, E, R, OK = Status.FETCH_ERROR, Status.ERROR, Status.REDIRECTION, Status.FETCHED
URL = "http://example.com/a/b"


@pytest.mark.parametrize(
    ("code", "location", "expected"),
    [
        (200, None, (OK, Specific.OK, True, None)),
        (204, None, (OK, Specific.OK, True, None)),
        (304, None, (OK, Specific.NOT_MODIFIED, True, None)),
        (301, "/c", (R, Specific.REDIRECT, False, "http://example.com/c")),
        (308, "HTTPS://Example.com:443/x#f", (R, Specific.REDIRECT, False, "https://example.com/x")),
        (302, None, (E, Specific.HTTP_ERROR, False, None)),
        (302, "mailto:x@y", (E, Specific.HTTP_ERROR, False, None)),
        (404, None, (E, Specific.HTTP_ERROR, False, None)),
        (408, None, (F, Specific.HTTP_ERROR, False, None)),
        (429, None, (F, Specific.HTTP_ERROR, False, None)),
        (503, None, (F, Specific.HTTP_ERROR, False, None)),
        (600, None, (F, Specific.BAD_RESPONSE, False, None)),
        (101, None, (F, Specific.BAD_RESPONSE, False, None)),
    ],
)
def test_http_codes(code, location, expected):
    got = of_response(URL, code, location, None)
    assert (got.status, got.specific, got.success, got.new_url) == expected
    assert got.http_code == code


def test_meta_refresh_is_a_redirect_of_a_received_page():
    got = of_response(URL, 200, None, None, refresh="http://example.com/next")
    assert (got.status, got.specific, got.success, got.new_url) == (R, Specific.META_REFRESH, True,
                                                                     "http://example.com/next")


def test_retry_after():
    assert parse_retry_after("120") == 120
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0
    assert parse_retry_after("99999999") == 86_400
    assert parse_retry_after("soon") is None
    assert of_response(URL, 503, None, "7").retry_after == 7


@pytest.mark.parametrize(
    ("curl_code", "message", "connected", "aborted", "expected"),
    [
        (pycurl.E_OPERATION_TIMEDOUT, "Operation timed out after 3000 ms", True, None, (F, Specific.TIMEOUT)),
        (pycurl.E_OPERATION_TIMEDOUT, "Connection timed out after 1000 ms", False, None, (F, Specific.CONNECT_TIMEOUT)),
        (pycurl.E_OPERATION_TIMEDOUT, "Operation too slow. Less than 1000 bytes/sec", True, None, (F, Specific.TOO_SLOW)),
        (pycurl.E_COULDNT_CONNECT, "refused", False, None, (F, Specific.CONNECT_FAILED)),
        (pycurl.E_PEER_FAILED_VERIFICATION, "cert", True, None, (F, Specific.TLS_ERROR)),
        (pycurl.E_BAD_CONTENT_ENCODING, "bad gzip", True, None, (F, Specific.DECODE_ERROR)),
        (pycurl.E_FILESIZE_EXCEEDED, "too big", True, None, (E, Specific.TOO_BIG)),
        (pycurl.E_WRITE_ERROR, "write", True, Specific.TOO_BIG, (E, Specific.TOO_BIG)),
        (pycurl.E_WRITE_ERROR, "write", True, Specific.HEADERS_TOO_BIG, (F, Specific.HEADERS_TOO_BIG)),
        (pycurl.E_COULDNT_CONNECT, "x", False, Specific.FORBIDDEN_ADDRESS, (E, Specific.FORBIDDEN_ADDRESS)),
        (pycurl.E_RECV_ERROR, "reset", True, None, (F, Specific.RESET)),
        (9999, "new in some libcurl", True, None, (F, Specific.RESET)),
    ],
)
def test_transfer_failures(curl_code, message, connected, aborted, expected):
    got = of_transfer(url=URL, curl_code=curl_code, curl_message=message, http_code=0,
                      connected=connected, aborted=aborted, location=None, retry_after=None)
    assert (got.status, got.specific) == expected and not got.success


def test_allow_net():
    public = AllowNet()
    assert public.admits("93.184.216.34") and public.admits("2606:2800:220:1::1")
    for ip in ("127.0.0.1", "10.1.2.3", "192.168.0.1", "169.254.1.1", "224.0.0.1", "0.0.0.0",
               "::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "240.0.0.1", "not-an-ip"):
        assert not public.admits(ip), ip
    loopback = AllowNet(["127.0.0.0/8"])
    assert loopback.admits("127.66.6.6") and loopback.admits("::ffff:127.0.0.1")
    assert not loopback.admits("10.0.0.1")
