# The operator API under /api on the urlserver's --http port (docs/api.md):
# JSON in and out, each error one line ({"error": "..."}, a 4xx saying what
# was wrong). A handler checks its input, calls one Operations method
# (operations.py), commits the crawl state -- the change is on disk before
# the 200 leaves, so it survives a kill -9 right after -- and wakes the
# pump. Routes that change the crawl are WRITE, look-ups READ
# (wreck/httpserve.py TokenGate: the token is the --api-token-file's first
# line, or derived from the crawl's shared secret by api_token()).
"""The operator API: routes, input checks, the API token."""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import hmac
import math
import os
import re

from wreck.deploy import DeployError
from wreck.httpserve import READ, WRITE, HttpError, Request, Response, Route

from .db import StateError
from .operations import Operations, host_name

MAX_SEEDS = 10_000  # URLs in one POST /api/seeds (a 1 MiB body holds about as many)
MAX_HOST_DELAY = 86_400.0  # a day between two requests: longer is a block, say so with one
MAX_LOG = 1000  # GET /api/log?limit=: control.AUDIT_KEEP entries are kept
DEFAULT_LOG = 100
MAX_PATTERN = 1000  # characters of a retry pattern
TOKEN_FILE = "api-token"  # in --data: the token derived from the secret, for the operator (mode 0600)
TOKEN_LABEL = b"wreck operator API token v1"  # HMAC message: the token derived from the secret
MIN_TOKEN = 16  # characters of an --api-token-file token: guessing must be out of reach
RETRY_STATES = ("ERROR", "DEFERRED")


def api_token(settings) -> str | None:
    """The API token: the first line of --api-token-file, else one derived
    from the shared secret (HMAC-SHA256 of TOKEN_LABEL), else None.
    DeployError if the file's token is too short; OSError if unreadable."""
    if settings.api_token_file:
        with open(settings.api_token_file, encoding="utf-8") as fh:
            token = fh.readline().strip()
        if len(token) < MIN_TOKEN:
            raise DeployError(f"--api-token-file {settings.api_token_file}: the token on its first line must be "
                              f"at least {MIN_TOKEN} characters")
        return token
    if settings.secret:
        return hmac.new(settings.secret, TOKEN_LABEL, hashlib.sha256).hexdigest()
    return None


def keep_token_file(data: str, token: str | None) -> None:
    """Leave the token derived from the secret in DATA/api-token (0600) for
    the operator; with no derived token (none, or --api-token-file's), make
    sure no stale one is left there to mislead."""
    path = os.path.join(data, TOKEN_FILE)
    if token is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")


def api_routes(server) -> list[Route]:
    """The /api routes of `server` (a UrlServer)."""
    return Api(server).routes()


class Api:
    """Handlers: input checked here, the work done by Operations."""

    def __init__(self, server) -> None:
        self.server = server
        self.ops = Operations(server.crawl)

    def routes(self) -> list[Route]:
        routes = [
            Route("POST", "/api/seeds", self.seeds, WRITE),
            Route("POST", "/api/pause", self._pause(True), WRITE),
            Route("POST", "/api/resume", self._pause(False), WRITE),
            Route("POST", "/api/retry", self.retry, WRITE),
            Route("POST", "/api/hosts/{host}/pause", self._host_change(self.ops.host_pause, True), WRITE),
            Route("POST", "/api/hosts/{host}/resume", self._host_change(self.ops.host_pause, False), WRITE),
            Route("POST", "/api/hosts/{host}/block", self._host_change(self.ops.host_block, True), WRITE),
            Route("POST", "/api/hosts/{host}/unblock", self._host_change(self.ops.host_block, False), WRITE),
            Route("PUT", "/api/hosts/{host}/delay", self.host_delay, WRITE),
            Route("GET", "/api/hosts/{host}", self.host, READ),
            Route("GET", "/api/urls", self.url, READ),
            Route("GET", "/api/log", self.log, READ),
        ]
        index = {"docs": "docs/api.md", "endpoints": [f"{r.method} {r.pattern}" for r in routes]}
        answer = lambda request: Response.json(index)  # noqa: E731 (the address wreck-crawl prints)
        return [*routes, Route("GET", "/api/", answer, READ), Route("GET", "/api", answer, READ)]

    # -- plumbing ---------------------------------------------------------------------

    def _changed(self, result: dict) -> Response:
        """Commit (the change is durable before the answer), wake the pump, answer."""
        server = self.server
        if server.broken is not None:
            raise HttpError(503, "the crawl state cannot be written; the urlserver is stopping")
        try:
            server.crawl.commit()
        except StateError as exc:
            server.state_unwritable(exc)
            raise HttpError(503, f"the change could not be written: {exc}") from None
        if not server.stopping:
            server.request_pump()
        return Response.json(result)

    def _host(self, request: Request) -> str:
        name = host_name(request.params["host"])
        if name is None:
            raise HttpError(400, f"not a host name: {request.params['host'][:200]!r}")
        return name

    def _stopping(self) -> None:
        if self.server.stopping or self.server.broken is not None:
            raise HttpError(503, "the urlserver is stopping")

    # -- changes ------------------------------------------------------------------------

    def seeds(self, request: Request) -> Response:
        body = _object(request)
        urls = body.get("urls")
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise HttpError(400, 'give {"urls": ["http://...", ...]}: a list of URL strings')
        if not urls:
            raise HttpError(400, '"urls" is empty: nothing to add')
        if len(urls) > MAX_SEEDS:
            raise HttpError(413, f"{len(urls)} URLs in one request; at most {MAX_SEEDS}")
        self._stopping()
        return self._changed(self.ops.add_seeds(urls))

    def _pause(self, paused: bool):
        """The handler of POST /api/pause (True) or /api/resume (False)."""

        def handler(request: Request) -> Response:
            self._stopping()
            return self._changed(self.ops.set_paused(paused))

        return handler

    def retry(self, request: Request) -> Response:
        body = _object(request)
        state = body.get("state")
        if state not in RETRY_STATES:
            raise HttpError(400, f'"state" must be "ERROR" or "DEFERRED", not {_shown(state)}')
        pattern, glob = body.get("pattern"), body.get("glob")
        if pattern is not None and glob is not None:
            raise HttpError(400, 'give "pattern" (a regular expression) or "glob", not both')
        wanted = lambda url: True  # noqa: E731
        chosen = pattern if pattern is not None else glob
        if chosen is not None:
            if not isinstance(chosen, str) or len(chosen) > MAX_PATTERN:
                raise HttpError(400, f"the pattern must be a string of at most {MAX_PATTERN} characters")
            try:
                regex = re.compile(fnmatch.translate(chosen) if glob is not None else chosen)
            except re.error as exc:
                raise HttpError(400, f'"pattern" is not a regular expression: {exc}') from None
            search = regex.match if glob is not None else regex.search
            wanted = lambda url: search(url) is not None  # noqa: E731
        self._stopping()
        return self._changed(self.ops.retry(state, wanted, chosen))

    def _host_change(self, operation, value: bool):
        """A handler for POST /api/hosts/HOST/VERB: operation(host name, value)."""

        def handler(request: Request) -> Response:
            name = self._host(request)
            self._stopping()
            return self._changed(operation(name, value))

        return handler

    def host_delay(self, request: Request) -> Response:
        name = self._host(request)
        seconds = _object(request).get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
            raise HttpError(400, f'give {{"seconds": N}} with a number of seconds, not {_shown(seconds)}')
        if not 0 <= seconds <= MAX_HOST_DELAY:
            raise HttpError(400, f'"seconds" must be from 0 (none) to {MAX_HOST_DELAY:g}, not {seconds:g}')
        self._stopping()
        return self._changed(self.ops.host_delay(name, float(seconds)))

    # -- look-ups ------------------------------------------------------------------------

    def host(self, request: Request) -> Response:
        name = self._host(request)
        found = self.ops.host(name)
        if found is None:
            raise HttpError(404, f"no such host in this crawl: {name}")
        return Response.json(found)

    def url(self, request: Request) -> Response:
        raw = request.arg("u")
        if not raw:
            raise HttpError(400, "give the URL as ?u=URL (percent-encoded)")
        found = self.ops.url(raw)
        if found is None:
            raise HttpError(404, f"no such URL in this crawl: {raw[:200]}")
        return Response.json(found)

    def log(self, request: Request) -> Response:
        text = request.arg("limit", str(DEFAULT_LOG))
        if not text.isdigit() or not 1 <= int(text) <= MAX_LOG:
            raise HttpError(400, f"limit must be a number from 1 to {MAX_LOG}, not {text[:20]!r}")
        return Response.json({"changes": self.ops.audit_log(int(text))})


def _object(request: Request) -> dict:
    body = request.json()
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object")
    return body


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
