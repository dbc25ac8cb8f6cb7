# The retry rule, as one pure function: a page transaction's DONE (its
# status, docs/protocol.txt) -> the URL's event (urlstate.py moves its
# state), and when to try again. FETCHED and REDIRECTION are done (the
# redirect target is scheduled as a discovered URL one hop further);
# FETCH_ERROR is retried after the server's Retry-After when it sent one
# (RFC 9110 10.2.3), bounded to [RETRY_AFTER_MIN, backoff_max] so that a
# server can neither make us hammer it nor park a URL for a day; else after
# retry_delay * 2^(tries-1) (an hour by default, doubling); until
# max_retries tries. ERROR is terminal, and so is a FETCH_ERROR that is
# the server's own answer (a status line came, and its body or framing
# cannot be read: a Content-Encoding it was not offered or that is corrupt,
# two different Content-Lengths, broken chunks): the same request gets the
# same answer, so retrying it an hour later, and telling the operator to
# run the crawl again for it, would promise what will not come
# (docs/protocol.txt 5.6: FETCH_ERROR "may be retried"; --retry-errors
# tries such a URL again on request).
"""Status -> URL event and retry time."""

from __future__ import annotations

import msgspec

from wreck.protocol import Done, Specific, Status

from .urlstate import UrlEvent

RETRY_AFTER_MIN = 1.0  # seconds: a Retry-After of 0 would be a retry loop
# The failures that, with a status code received, are the server's answer (see above)
UNREADABLE_ANSWER = frozenset({Specific.DECODE_ERROR, Specific.BAD_RESPONSE})


class Step(msgspec.Struct, frozen=True):
    """What a page's DONE does to its URL: the event, and what follows."""

    event: UrlEvent
    reason: str = ""
    retry_at: float | None = None  # for FETCH_FAILED: when to hand it out again
    follow: str | None = None  # for REDIRECTION: the target to schedule


def describe(done: Done) -> str:
    """A short reason: specific code, HTTP code, the spider's own words."""
    text = done.specific.name
    if done.http_code:
        text += f" (HTTP {done.http_code})"
    if done.reason:
        text += f": {done.reason}"
    return text


def after_done(done: Done, tries: int, now: float, *, retry_delay: float, max_retries: int,
               backoff_max: float = 600.0, again_raw: bool = False) -> Step:
    """The step for a URL that has now been tried `tries` times (this one
    included); `again_raw`: the spider asks to fetch it again as sent (a page
    in codings no browser knows, docs/protocol.txt 5.5), due at once (its
    host's delay still applies)."""
    status = done.status
    if status is Status.FETCHED:
        return Step(UrlEvent.FETCHED)
    if status is Status.REDIRECTION:
        return Step(UrlEvent.REDIRECTED, reason=f"-> {done.new_url}", follow=done.new_url)
    if status is Status.FETCH_ERROR:
        if again_raw and tries < max_retries:
            return Step(UrlEvent.FETCH_FAILED, reason=f"{describe(done)}; asked again as sent (raw=1)",
                        retry_at=now)
        if done.http_code and done.specific in UNREADABLE_ANSWER:
            return Step(UrlEvent.FAILED, reason=f"{describe(done)}; the server's answer, not retried")
        if tries >= max_retries:
            return Step(UrlEvent.RETRIES_EXHAUSTED, reason=f"{describe(done)} after {tries} tries")
        if done.retry_after is not None:
            wait = retry_after_wait(done.retry_after, backoff_max)
        else:
            wait = retry_delay * 2 ** (tries - 1)
        return Step(UrlEvent.FETCH_FAILED, reason=describe(done), retry_at=now + wait)
    return Step(UrlEvent.FAILED, reason=describe(done))


def retry_after_wait(retry_after: float, backoff_max: float) -> float:
    """A server's Retry-After, bounded to [RETRY_AFTER_MIN, backoff_max]."""
    return min(max(float(retry_after), RETRY_AFTER_MIN), max(backoff_max, RETRY_AFTER_MIN))


def slows_host(done: Done) -> bool:
    """429 or 5xx: the server asks the whole host to slow down."""
    return done.http_code == 429 or 500 <= done.http_code < 600
