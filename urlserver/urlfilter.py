# URL filters beyond scope: the plugins' url_filter hooks and an external
# command (--url-filter-cmd), behind the one object the frontier calls for a
# new URL in scope. The frontier holds None when neither is configured, so
# the discovery path then pays one `is None` test per page and per new URL.
#
# The plugins are called synchronously, from reason(). The external command
# never is: it is one long-lived process (`sh -c CMD`), started by the server
# (start()), that the server asks asynchronously (ask()) about the links of a
# DONE before it hands the DONE to the engine (filterstage.py); the engine's
# synchronous reason() then reads the answers it is given (answering()).
# A URL reason() is asked about that the command was not asked about is
# kept, logged and counted: the engine must not wait, and refusing a URL
# nobody judged would be worse. The one known case: with --sitemaps, the
# sitemap URLs a robots.txt names (the engine reads them from its body, not
# from outlinks); the URLs those sitemaps list are outlinks, and are asked.
#
# The command's protocol (docs/plugins.md), per batch (the links of a page):
#   WRECK writes each URL on a line, then the line END_MARKER;
#   the command writes back, in order and unchanged, the URLs it keeps, and
#   then END_MARKER (a `grep -v` passes it through by itself).
# WRECK writes and reads at once, so a batch larger than a pipe buffer cannot
# deadlock; one batch is in the command at a time. A command that exits,
# answers a line it was not given, or does not finish a batch within the
# timeout is logged, counted and disabled, like a plugin that raises: the
# crawl goes on without it (the batch it failed on is kept whole).
"""UrlFilter: plugin URL filters + an external filter command (asyncio)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
from collections.abc import Iterator

from wreck.deploy import SECRET_ENV
from wreck.plugins import Plugins, UrlContext

log = logging.getLogger("urlserver")
END_MARKER = "#wreck-end-of-batch"  # '#' never occurs in a normalised URL (no fragments)
EXTERNAL = "url-filter-cmd"  # the external command's name in /status and reasons
CLOSE_GRACE_S = 1.0  # after end of input, before the command is killed
EXIT_STATUS_WAIT_S = 0.2  # for the exit status of a command that closed its output, to name it
MAX_LINE = 64 * 1024  # an answer line longer than any URL WRECK sends is a broken command


class FilterFailed(Exception):
    """The external filter command broke its protocol, exited or hung."""


class ExternalFilter:
    """A long-lived filter process: batches of URL lines in, kept lines out."""

    def __init__(self, proc: asyncio.subprocess.Process, command: str, *, timeout: float) -> None:
        self.proc = proc
        self.command = command
        self.timeout = timeout
        self.closed = False
        self._lock = asyncio.Lock()  # one batch in the command at a time

    @classmethod
    async def start(cls, command: str, *, timeout: float) -> ExternalFilter:
        """Start `/bin/sh -c command`, in its own process group so that
        close() can end every process of a pipeline."""
        # The crawl's secret stays with the daemons: the command judges URLs,
        # it has no business speaking the protocol (issue 14, finding 10).
        env = {k: v for k, v in os.environ.items() if k != SECRET_ENV}
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            start_new_session=True, limit=MAX_LINE, env=env,
        )  # fmt: skip
        return cls(proc, command, timeout=timeout)

    async def keep(self, urls: list[str]) -> set[str]:
        """The URLs of `urls` the command keeps. Raises FilterFailed."""
        async with self._lock:
            if self.closed:
                raise FilterFailed("closed")
            try:
                return await asyncio.wait_for(self._exchange(urls), self.timeout)
            except asyncio.TimeoutError:
                raise FilterFailed(f"did not finish a batch of {len(urls)} URLs within {self.timeout:g} s") from None

    async def _exchange(self, urls: list[str]) -> set[str]:
        payload = ("\n".join(urls) + "\n" + END_MARKER + "\n").encode("utf-8") if urls else (END_MARKER + "\n").encode()
        given, kept = set(urls), set()
        writer = asyncio.ensure_future(self._write(payload))
        try:
            while True:
                try:
                    raw = await self.proc.stdout.readuntil(b"\n")
                except asyncio.IncompleteReadError:
                    raise FilterFailed(await self._exit_text("closed its output")) from None
                except asyncio.LimitOverrunError:
                    raise FilterFailed(f"wrote a line longer than {MAX_LINE} bytes") from None
                line = raw[:-1].decode("utf-8", "replace").rstrip("\r")
                if line == END_MARKER:
                    break
                if line not in given:
                    raise FilterFailed(f"answered a line it was not given: {line[:200]!r}")
                kept.add(line)
            await writer  # it answered the marker, so it has read everything
            return kept
        finally:
            writer.cancel()  # a no-op once it has written everything

    async def _write(self, payload: bytes) -> None:
        try:
            self.proc.stdin.write(payload)
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the command closed its input: the read side sees it end, or the batch time out

    async def _exit_text(self, what: str) -> str:
        try:
            code = await asyncio.wait_for(self.proc.wait(), EXIT_STATUS_WAIT_S)
        except asyncio.TimeoutError:
            return what
        return f"{what} (exit status {code})"

    async def close(self) -> None:
        """End of input first (a pipeline ends by itself), then the process group."""
        self.closed = True
        with contextlib.suppress(OSError):  # a broken pipe: the command is gone already
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), CLOSE_GRACE_S)
        except asyncio.TimeoutError:
            self.kill()
            await self.proc.wait()

    def kill(self) -> None:
        """End the command's process group now (for a caller that cannot await)."""
        self.closed = True
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)


class UrlFilter:
    """The frontier's hook: reason(...) per new URL in scope.

    The plugins answer at once; the external command's answers come from
    the server, which asks them with ask() and hands them over with
    answering() while the engine applies the DONE they are for.
    """

    def __init__(self, plugins: Plugins, *, command: str | None = None, timeout: float = 10.0) -> None:
        self.plugins = plugins
        self.command = command  # started by the server: the engine does no I/O
        self.timeout = timeout
        self.external: ExternalFilter | None = None
        self.unasked = 0  # URLs reason() got that the command had not been asked about (kept)
        self._answers: dict[str, bool] = {}  # URL -> kept, for the DONE being applied

    async def start(self) -> None:
        """Start the external command, if one is configured."""
        if self.command and self.external is None:
            self.external = await ExternalFilter.start(self.command, timeout=self.timeout)

    async def ask(self, urls: list[str]) -> dict[str, bool]:
        """The command's verdict (True: kept) on each URL, in one batch; {}
        when there is no command, or it failed (it is then disabled)."""
        external = self.external
        if external is None or not urls:
            return {}
        try:
            kept = await external.keep(urls)
        except FilterFailed as exc:
            await self._disable(external, exc)
            return {}
        return {url: url in kept for url in urls}

    @contextlib.contextmanager
    def answering(self, answers: dict[str, bool]) -> Iterator[None]:
        """reason() reads `answers` (from ask()) inside this block."""
        self._answers = answers
        try:
            yield
        finally:
            self._answers = {}

    def batch(self, links) -> None:
        """The links of the page being admitted (the answers came beforehand)."""

    def reason(self, url: str, host: str, depth: int, source: str | None) -> str | None:
        """Why `url` is dropped ('plugin NAME', 'url-filter-cmd'), or None to keep it."""
        if self.plugins.has("url_filter"):
            why = self.plugins.url_reason(url, UrlContext(host, depth, source))
            if why is not None:
                return why
        kept = self._answers.get(url)
        if kept is None:
            if self.external is not None:
                self.unasked += 1
                log.info("event=url_filter_unasked url=%s reason='not among the links asked about; kept'", url)
            return None
        return None if kept else EXTERNAL

    async def _disable(self, external: ExternalFilter, exc: FilterFailed) -> None:
        if self.external is not external:
            return  # another batch disabled it first
        self.external = None
        log.error("event=url_filter_cmd_disabled command=%s reason=%r: the crawl goes on unfiltered by it",
                  shlex.quote(external.command), str(exc))
        self.plugins.errors[EXTERNAL] = self.plugins.errors.get(EXTERNAL, 0) + 1
        self.plugins.disabled[EXTERNAL] = str(exc)
        await external.close()

    async def aclose(self) -> None:
        """Stop the external command (the server, at its stop)."""
        external, self.external = self.external, None
        if external is not None:
            await external.close()

    def close(self) -> None:
        """Kill the external command if the server did not stop it."""
        if self.external is not None:
            self.external.kill()
            self.external = None
