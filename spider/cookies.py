# A cookie check inside one fetch (docs/operating.md, "Cookies"). Many
# sites answer a request without their cookie with a redirect back to the
# same URL that sets it, to see whether the client keeps cookies; a browser
# asks again with the cookie and gets the page. WRECK keeps no cookie across
# transactions (each URL of a host may go to any worker of any spider), so
# the fetch does what the browser does, once: when a 3xx names the URL just
# asked and sets a cookie that applies to it, the Cookie header for the
# second request comes from here.
#
# The rules are RFC 6265's, by the standard library's http.cookiejar (its
# DefaultCookiePolicy: Domain must domain-match the request host, 5.3 step
# 6; Path; Max-Age and Expires, a date past removing the cookie, 5.3 step
# 11; a Secure cookie is never sent over http), plus what it lacks: a
# Domain that is a public suffix is refused (5.3 step 5, by the Public
# Suffix List, wreck/publicsuffix.py), and the bounds below. The jar lives
# for this one answer and is then dropped: nothing is kept or stored but
# the request as sent (its Cookie header shows in the WARC request record).
"""retry_cookie(url, head) -> the Cookie header value to ask `url` again with, or None;
names_itself(location, url) -> whether a redirect's target is `url` itself."""

from __future__ import annotations

import email.message
import http.cookiejar
import urllib.request

from wreck.publicsuffix import is_public_suffix
from wreck.urlnorm import normalize

# RFC 6265 6.1: a user agent should keep cookies of at least 4096 bytes
# (name, value and attributes: the Set-Cookie value) and at least 50 per
# domain; browsers keep about that and no more. A longer line, or those past
# the 50th of one answer, are ignored.
MAX_COOKIE_BYTES = 4096
MAX_COOKIES = 50
# The Cookie header sent: Apache httpd refuses a request header line over
# 8190 bytes (LimitRequestFieldSize) and nginx one over 8 KiB (its large
# header buffer) with a 400, so cookies that would take the header past
# this are left out, the first ones set kept.
MAX_COOKIE_HEADER_BYTES = 8000


class _Policy(http.cookiejar.DefaultCookiePolicy):
    """http.cookiejar's RFC 6265 rules, and a Domain never a public suffix."""

    def set_ok_domain(self, cookie: http.cookiejar.Cookie, request: urllib.request.Request) -> bool:
        if cookie.domain_specified and is_public_suffix(cookie.domain.lstrip(".").lower()):
            return False
        return super().set_ok_domain(cookie, request)


class _Answer:
    """The response side http.cookiejar reads: info().get_all('Set-Cookie')."""

    def __init__(self, line: str) -> None:
        self.message = email.message.Message()
        self.message["Set-Cookie"] = line

    def info(self) -> email.message.Message:
        return self.message


def set_cookie_lines(head: bytes) -> list[str]:
    """The Set-Cookie values of a header block, as received (Latin-1: RFC
    9110 5.5, octets), each within MAX_COOKIE_BYTES, at most MAX_COOKIES."""
    out = []
    for line in head.split(b"\n"):
        name, colon, value = line.partition(b":")
        if colon and name.strip().lower() == b"set-cookie":
            value = value.strip()
            if value and len(value) <= MAX_COOKIE_BYTES:
                out.append(value.decode("latin-1"))
                if len(out) == MAX_COOKIES:
                    break
    return out


def names_itself(location: bytes, url: str) -> bool:
    """True when `location` (a redirect's target as libcurl resolved it)
    names `url`, in any spelling the URL Standard makes the same URL: an
    explicit default port (`http://host:80/p`), another case of scheme or
    host (`HTTP://HOST/p`), a fragment (`/p#x`), a dot segment. Compared
    after normalisation (wreck/urlnorm.py, docs/urls.md), as the crawl
    compares URLs, not as strings."""
    if location == url.encode():
        return True
    if not location:  # no Location (a 3xx without one): it names nothing, resolved it would be `url`
        return False
    target = normalize(location.decode("latin-1"), url)  # octets as received (RFC 9110 5.5)
    return target is not None and target == normalize(url)


def retry_cookie(url: str, head: bytes) -> str | None:
    """The Cookie header value for asking `url` again after an answer with
    header block `head` that redirected to `url` itself; None when that
    answer set no cookie that RFC 6265 lets a client send to `url`."""
    lines = set_cookie_lines(head)
    if not lines:
        return None
    jar = http.cookiejar.CookieJar(_Policy())
    request = urllib.request.Request(url)
    for line in lines:  # one at a time, in order (5.3): a later line may remove an earlier one's cookie
        jar.extract_cookies(_Answer(line), request)  # type: ignore[arg-type]  # duck-typed, as the stdlib reads it
    again = urllib.request.Request(url)
    jar.add_cookie_header(again)
    value = again.get_header("Cookie")
    if not value:
        return None
    if len(value) > MAX_COOKIE_HEADER_BYTES:
        cut = value.rfind("; ", 0, MAX_COOKIE_HEADER_BYTES + 1)
        value = value[:cut] if cut > 0 else ""
    return value or None
