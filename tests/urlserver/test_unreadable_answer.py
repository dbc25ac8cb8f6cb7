"""A FETCH_ERROR that is the server's own answer (a status came, its body or
framing cannot be read: urlserver/retry.py) ends ERROR at once, where a
transient failure is retried; the summary then says the crawl finished,
not that running it again will fetch what the server will answer alike."""

from __future__ import annotations

import pytest

from wreck.protocol import Done, Specific, Status
from wreck.urlserver.retry import after_done
from wreck.urlserver.urlstate import UrlEvent

RETRY = dict(retry_delay=3600.0, max_retries=5)


@pytest.mark.parametrize("specific, http_code, reason", [
    (Specific.DECODE_ERROR, 200, "Unrecognized content encoding type"),
    (Specific.BAD_RESPONSE, 200, "Invalid Content-Length: value"),
    (Specific.BAD_RESPONSE, 600, ""),  # a status code outside 200-599 (docs/protocol.txt 5.6)
])
def test_an_unreadable_answer_ends_at_its_first_try(specific, http_code, reason):
    step = after_done(Done(1, Status.FETCH_ERROR, http_code, specific, 1, reason=reason), 1, 0.0, **RETRY)
    assert step.event is UrlEvent.FAILED and step.retry_at is None
    assert step.reason.startswith(specific.name) and "not retried" in step.reason


@pytest.mark.parametrize("specific, http_code", [
    (Specific.BAD_RESPONSE, 0),  # no status line: the connection may be at fault
    (Specific.RESET, 200),  # cut mid-body
    (Specific.HTTP_ERROR, 503),
    (Specific.TIMEOUT, 200),
])
def test_a_failure_that_may_pass_is_retried(specific, http_code):
    step = after_done(Done(1, Status.FETCH_ERROR, http_code, specific, 1), 1, 0.0, **RETRY)
    assert step.event is UrlEvent.FETCH_FAILED and step.retry_at == 3600.0
