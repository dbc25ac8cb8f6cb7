# What a finished transfer means, as a pure function: the libcurl result
# code and what was received -> Status, Specific, redirect target,
# Retry-After. docs/protocol.txt publishes the same table. Failures detected
# by the spider's own callbacks (size cap, header cap, refused address) are
# passed in as `aborted` and win over the curl code they cause.
"""FetchOutcome: the status mapping of a fetch (docs/protocol.txt 5.6, 7.1)."""

from __future__ import annotations

import datetime
import email.utils
import time
from typing import NamedTuple

import pycurl

from wreck.protocol import Specific, Status
from wreck.urlnorm import normalize

F, E, R, OK = Status.FETCH_ERROR, Status.ERROR, Status.REDIRECTION, Status.FETCHED

# Retry-After beyond a day is treated as a day: a server cannot park a URL
# for ever, and the urlserver has its own ceiling anyway.
MAX_RETRY_AFTER = 86_400

_TLS = (
    pycurl.E_SSL_CONNECT_ERROR, pycurl.E_PEER_FAILED_VERIFICATION, pycurl.E_SSL_CERTPROBLEM,
    pycurl.E_SSL_CIPHER, pycurl.E_SSL_CACERT_BADFILE, pycurl.E_SSL_ENGINE_NOTFOUND,
    pycurl.E_SSL_ENGINE_SETFAILED, pycurl.E_SSL_SHUTDOWN_FAILED, pycurl.E_SSL_CRL_BADFILE,
    pycurl.E_SSL_ISSUER_ERROR, getattr(pycurl, "E_SSL_PINNEDPUBKEYNOTMATCH", 90),
    getattr(pycurl, "E_SSL_INVALIDCERTSTATUS", 91), getattr(pycurl, "E_SSL_CLIENTCERT", 98),
)  # fmt: skip
E_TOO_LARGE = getattr(pycurl, "E_TOO_LARGE", 100)
E_WEIRD_SERVER_REPLY = 8  # CURLE_WEIRD_SERVER_REPLY; pycurl names it E_FTP_WEIRD_SERVER_REPLY  # libcurl >= 8.6: headers beyond its bound

# libcurl result code -> (status, specific) when no callback of ours aborted.
CURL_ERRORS: dict[int, tuple[Status, Specific]] = {
    pycurl.E_COULDNT_CONNECT: (F, Specific.CONNECT_FAILED),
    pycurl.E_COULDNT_RESOLVE_HOST: (F, Specific.CONNECT_FAILED),
    pycurl.E_COULDNT_RESOLVE_PROXY: (F, Specific.CONNECT_FAILED),
    pycurl.E_RECV_ERROR: (F, Specific.RESET),
    pycurl.E_SEND_ERROR: (F, Specific.RESET),
    pycurl.E_GOT_NOTHING: (F, Specific.RESET),
    pycurl.E_PARTIAL_FILE: (F, Specific.RESET),
    E_WEIRD_SERVER_REPLY: (F, Specific.BAD_RESPONSE),
    pycurl.E_UNSUPPORTED_PROTOCOL: (F, Specific.BAD_RESPONSE),  # e.g. an HTTP/0.9 reply
    pycurl.E_HTTP2: (F, Specific.BAD_RESPONSE),
    getattr(pycurl, "E_HTTP2_STREAM", 92): (F, Specific.RESET),
    pycurl.E_BAD_CONTENT_ENCODING: (F, Specific.DECODE_ERROR),
    pycurl.E_FILESIZE_EXCEEDED: (E, Specific.TOO_BIG),
    E_TOO_LARGE: (F, Specific.HEADERS_TOO_BIG),
    pycurl.E_URL_MALFORMAT: (E, Specific.BAD_URL),
    pycurl.E_TOO_MANY_REDIRECTS: (E, Specific.TOO_MANY_REDIRECTS),
    **{code: (F, Specific.TLS_ERROR) for code in _TLS},
}
# Our own aborts (the callback's reason) -> status.
ABORTS: dict[Specific, Status] = {
    Specific.TOO_BIG: E, Specific.HEADERS_TOO_BIG: F, Specific.FORBIDDEN_ADDRESS: E, Specific.DNS_FAILED: E,
    # INTERNAL is retried: the urlserver's retry bound ends a URL that keeps
    # tripping a spider bug, and a transient one costs nothing.
    Specific.BAD_URL: E, Specific.INTERNAL: F, Specific.TIMEOUT: F, Specific.UNWANTED_TYPE: E,
}


class FetchOutcome(NamedTuple):
    status: Status
    specific: Specific
    http_code: int  # literal code of the final response, 0 if none
    success: bool  # a document was received (2xx or 304)
    new_url: str | None = None
    retry_after: int | None = None
    reason: str = ""


def of_transfer(
    *, url: str, curl_code: int, curl_message: str, http_code: int, connected: bool,
    aborted: Specific | None, location: str | None, retry_after: str | None,
    refresh: str | None = None, now: float | None = None, keep_cut: bool = True,
) -> FetchOutcome:  # fmt: skip
    """The outcome of one transfer; see docs/protocol.txt 5.6 (Status).
    `keep_cut`: a body the server cut by closing counts as received (a page;
    not a robots.txt, whose cut rules may have lost a Disallow: RESET)."""
    if aborted is not None:
        return FetchOutcome(ABORTS.get(aborted, E), aborted, http_code, False, reason=curl_message)
    if curl_code == pycurl.E_OPERATION_TIMEDOUT:
        if "too slow" in curl_message.lower():
            specific = Specific.TOO_SLOW
        else:
            specific = Specific.TIMEOUT if connected else Specific.CONNECT_TIMEOUT
        return FetchOutcome(F, specific, http_code, False, reason=curl_message)
    if curl_code == pycurl.E_PARTIAL_FILE and http_code >= 200 and keep_cut:
        # the server closed before the body's end (Content-Length not reached, a
        # chunk cut, no last chunk): the response as received, as browsers show
        # it; the record says WARC-Truncated: disconnect (docs/operating.md)
        return of_response(url, http_code, location, retry_after, refresh, now)._replace(reason=curl_message)
    if curl_code != pycurl.E_OK:
        status, specific = CURL_ERRORS.get(curl_code, (F, Specific.RESET if connected else Specific.CONNECT_FAILED))
        return FetchOutcome(status, specific, http_code, False, reason=curl_message)
    return of_response(url, http_code, location, retry_after, refresh, now)


def of_response(
    url: str, code: int, location: str | None, retry_after: str | None,
    refresh: str | None = None, now: float | None = None,
) -> FetchOutcome:  # fmt: skip
    """The outcome of a complete HTTP response with status `code`."""
    if 200 <= code < 300:
        if refresh is not None:
            return FetchOutcome(R, Specific.META_REFRESH, code, True, refresh)
        return FetchOutcome(OK, Specific.OK, code, True)
    if code == 304:
        return FetchOutcome(OK, Specific.NOT_MODIFIED, code, True)
    retry = parse_retry_after(retry_after, now) if retry_after else None
    if code == 305:  # Use Proxy: its Location names a proxy, never a page (RFC 9110 15.4.6, deprecated)
        return FetchOutcome(E, Specific.HTTP_ERROR, code, False, retry_after=retry, reason="305 Use Proxy: not followed")
    if 300 <= code < 400:
        target = normalize(location.strip(), url) if location else None
        if target is None:  # complete, but a dead end: nothing to retry
            return FetchOutcome(E, Specific.HTTP_ERROR, code, False, retry_after=retry,
                                reason="redirect without a usable Location")
        return FetchOutcome(R, Specific.REDIRECT, code, False, target, retry)
    if code in (408, 429) or 500 <= code < 600:
        return FetchOutcome(F, Specific.HTTP_ERROR, code, False, retry_after=retry)
    if 400 <= code < 500:
        return FetchOutcome(E, Specific.HTTP_ERROR, code, False, retry_after=retry)
    return FetchOutcome(F, Specific.BAD_RESPONSE, code, False, reason=f"status code {code}")


def parse_retry_after(value: str, now: float | None = None) -> int | None:
    """Retry-After (delay-seconds or HTTP-date) as whole seconds from now."""
    value = value.strip()
    if value.isdigit():
        return min(int(value), MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # asctime ('Sun Nov  6 08:49:37 1994') names no zone: HTTP dates are UTC (RFC 9110 5.6.7)
        when = when.replace(tzinfo=datetime.timezone.utc)
    delta = when.timestamp() - (time.time() if now is None else now)
    return max(0, min(int(delta + 0.999), MAX_RETRY_AFTER))
