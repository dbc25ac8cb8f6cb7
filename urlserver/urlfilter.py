# URL filters beyond scope: the plugins' url_filter hooks and an external
# command (--url-filter-cmd), behind the one object the frontier calls for a
# new URL in scope. The frontier holds None when neither is configured, so
# the discovery path then pays one `is None` test per page and per new URL.
#
# The external command is one long-lived process (`sh -c CMD`) fed in
# batches: the new links of one page. Protocol (docs/plugins.md):
#   WRECK writes each URL on a line, then the line END_MARKER;
#   the command writes back, in order and unchanged, the URLs it keeps, and
#   then END_MARKER (a `grep -v` passes it through by itself).
# WRECK writes and reads at once (non-blocking, one selector), so a batch
# larger than a pipe buffer cannot deadlock. A command that exits, answers
# a line it was not given, or does not finish a batch within the timeout is
# logged, counted and disabled, like a plugin that raises: the crawl goes on
# without it (the batch it failed on is kept whole).
"""UrlFilter: plugin URL filters + an external filter command."""

from __future__ import annotations

import logging
import os
import selectors
import shlex
import signal
import subprocess
import time

from wreck.plugins import Plugins, UrlContext

log = logging.getLogger("urlserver")
END_MARKER = "#wreck-end-of-batch"  # '#' never occurs in a normalised URL (no fragments)
EXTERNAL = "url-filter-cmd"  # the external command's name in /status and reasons
WRITE_CHUNK = 64 * 1024  # bytes per write to the command (one pipe buffer)
CLOSE_GRACE_S = 1.0  # after end of input, before the command is killed
MAX_LINE = 64 * 1024  # an answer line longer than any URL WRECK sends is a broken command


class FilterFailed(Exception):
    """The external filter command broke its protocol, exited or hung."""


class ExternalFilter:
    """A long-lived filter process: batches of URL lines in, kept lines out."""

    def __init__(self, command: str, *, timeout: float) -> None:
        self.command = command
        self.timeout = timeout
        # Its own process group, so close() can end every process of a pipeline.
        self.proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0, start_new_session=True)
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._buf = b""

    def keep(self, urls: list[str]) -> set[str]:
        """The URLs of `urls` the command keeps. Raises FilterFailed."""
        payload = ("\n".join(urls) + "\n" + END_MARKER + "\n").encode("utf-8") if urls else (END_MARKER + "\n").encode()
        given, kept = set(urls), set()
        deadline = time.monotonic() + self.timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self._out, selectors.EVENT_READ)
            sel.register(self._in, selectors.EVENT_WRITE)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise FilterFailed(f"did not finish a batch of {len(urls)} URLs within {self.timeout:g} s")
                for key, _ in sel.select(left):
                    if key.fd == self._in:
                        try:
                            sent = os.write(self._in, payload[:WRITE_CHUNK])
                        except (BrokenPipeError, ConnectionResetError):
                            raise FilterFailed(self._exit_text("closed its input")) from None
                        payload = payload[sent:]
                        if not payload:
                            sel.unregister(self._in)
                        continue
                    chunk = os.read(self._out, WRITE_CHUNK)
                    if not chunk:
                        raise FilterFailed(self._exit_text("closed its output"))
                    self._buf += chunk
                    *lines, self._buf = self._buf.split(b"\n")
                    if len(self._buf) > MAX_LINE:
                        raise FilterFailed(f"wrote a line longer than {MAX_LINE} bytes")
                    for raw in lines:
                        line = raw.decode("utf-8", "replace").rstrip("\r")
                        if line == END_MARKER:
                            return kept
                        if line not in given:
                            raise FilterFailed(f"answered a line it was not given: {line[:200]!r}")
                        kept.add(line)

    def _exit_text(self, what: str) -> str:
        try:
            code = self.proc.wait(0.2)
        except subprocess.TimeoutExpired:
            return what
        return f"{what} (exit status {code})"

    def close(self) -> None:
        """End of input first (a pipeline ends by itself), then the process group."""
        try:
            self.proc.stdin.close()
        except OSError:  # a broken pipe: the command is gone already
            pass
        try:
            self.proc.wait(CLOSE_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc.stdout.close()


class UrlFilter:
    """The frontier's hook: batch(links) once per page, reason(...) per new URL."""

    def __init__(self, plugins: Plugins, external: ExternalFilter | None) -> None:
        self.plugins = plugins
        self.external = external
        self._pending = None  # the page's links, sent on first need
        self._kept: set[str] = set()
        self._asked: set[str] = set()

    def batch(self, links) -> None:
        """The links of the page being admitted: one round trip for all of them."""
        if self.external is not None:
            self._pending = links  # a DONE's outlinks: a tuple
            self._asked = set()

    def reason(self, url: str, host: str, depth: int, source: str | None) -> str | None:
        """Why `url` is dropped ('plugin NAME', 'url-filter-cmd'), or None to keep it."""
        if self.plugins.has("url_filter"):
            why = self.plugins.url_reason(url, UrlContext(host, depth, source))
            if why is not None:
                return why
        if self.external is None:
            return None
        if url not in self._asked and self._pending:
            self._ask(self._pending)
            self._pending = None
        if self.external is not None and url not in self._asked:
            self._ask([url])  # not among the page's links: a redirect target, or spelled otherwise
        if self.external is None:
            return None
        return None if url in self._kept else EXTERNAL

    def _ask(self, urls) -> None:
        urls = list(urls)
        try:
            self._kept = self.external.keep(urls)
        except FilterFailed as exc:
            self._disable(exc)
            return
        self._asked = set(urls)

    def _disable(self, exc: FilterFailed) -> None:
        log.error("event=url_filter_cmd_disabled command=%s reason=%r: the crawl goes on unfiltered by it",
                  shlex.quote(self.external.command), str(exc))
        self.plugins.errors[EXTERNAL] = self.plugins.errors.get(EXTERNAL, 0) + 1
        self.plugins.disabled[EXTERNAL] = str(exc)
        self.external.close()
        self.external = None

    def close(self) -> None:
        if self.external is not None:
            self.external.close()
