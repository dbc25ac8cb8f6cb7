# libcurl's multi interface driven by the asyncio (uvloop) event loop, the
# way libcurl's docs describe for event-based programs (multi_socket):
#
#   M_SOCKETFUNCTION  libcurl says which fd to watch for what -> add_reader /
#                     add_writer / remove them on the loop
#   M_TIMERFUNCTION   libcurl asks for a wake-up in N ms -> loop.call_later
#   socket_action     called when an fd is ready or the timer fires; then
#                     info_read() collects finished transfers -> on_done
#
# Each finished transfer is ended on its own: a failure in our completion
# handling (on_complete, on_done) is logged and handed to on_failed for that
# handle alone, so the other transfers of the same info_read() still end.
#
# There is no polling loop: the process sleeps in epoll until a socket or a
# libcurl timer needs it. libcurl forbids calling socket_action from inside
# its own callbacks, so the timer is always scheduled, never run inline.
"""CurlLoop: a pycurl.CurlMulti on an asyncio loop."""

from __future__ import annotations

import asyncio
import logging
import select
from collections.abc import Callable

import pycurl

LOG = logging.getLogger(__name__)

# Idle connections kept for reuse per multi handle (all hosts together).
MAX_CACHED_CONNECTIONS = 2_000
# No per-host connection cap here: with CONNECT_TO, libcurl counts it per
# connect-to address, so every name on a shared IP would queue behind one
# limit and churn connections. The urlserver's per-host and per-IP
# politeness already bounds what reaches one server.

DoneCallback = Callable[[pycurl.Curl, int, str], None]
FailedCallback = Callable[[pycurl.Curl, Exception], None]


class CurlLoop:
    """Runs transfers; `on_done(handle, curl_code, message)` when each ends,
    `on_failed(handle, exception)` when on_done (or on_complete) raised."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_done: DoneCallback, *,
                 on_complete: Callable[[pycurl.Curl], None] | None = None,
                 on_failed: FailedCallback | None = None) -> None:
        self.loop = loop
        self.on_done = on_done
        self.on_failed = on_failed
        # called for a transfer that succeeded while it still holds its
        # connection (ACTIVESOCKET is valid only until remove_handle)
        self.on_complete = on_complete
        self.multi = pycurl.CurlMulti()
        self.multi.setopt(pycurl.M_SOCKETFUNCTION, self._on_socket)
        self.multi.setopt(pycurl.M_TIMERFUNCTION, self._on_timer)
        self.multi.setopt(pycurl.M_MAXCONNECTS, MAX_CACHED_CONNECTIONS)
        self.multi.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX)
        self._watched: dict[int, int] = {}  # fd -> POLL_* currently registered
        # The same fds for serve_ready(), which asks the kernel itself between
        # two pieces of other work (registering is bookkeeping, no syscall).
        self._poller = select.poll()
        self._timer: asyncio.Handle | None = None
        self._due_now = False  # the timer is a zero one, queued with call_soon
        self.running = 0
        self._closed = False

    def add(self, handle: pycurl.Curl) -> None:
        self.multi.add_handle(handle)
        self.running += 1

    def remove(self, handle: pycurl.Curl) -> None:
        """Abort a transfer still running (no on_done for it)."""
        self.multi.remove_handle(handle)
        self.running -= 1

    def close(self) -> None:
        self._closed = True
        if self._timer:
            self._timer.cancel()
        for fd in list(self._watched):
            self._unwatch(fd)
        self.multi.close()

    # -- libcurl callbacks ---------------------------------------------------

    def _on_socket(self, what: int, fd: int, multi: object, data: object) -> None:
        old = self._watched.get(fd, 0)
        if what == pycurl.POLL_REMOVE:
            self._unwatch(fd)
            return
        if old == what:
            return
        loop = self.loop
        want_in = what in (pycurl.POLL_IN, pycurl.POLL_INOUT)
        want_out = what in (pycurl.POLL_OUT, pycurl.POLL_INOUT)
        had_in = old in (pycurl.POLL_IN, pycurl.POLL_INOUT)
        had_out = old in (pycurl.POLL_OUT, pycurl.POLL_INOUT)
        if want_in and not had_in:
            loop.add_reader(fd, self._action, fd, pycurl.CSELECT_IN)
        elif had_in and not want_in:
            loop.remove_reader(fd)
        if want_out and not had_out:
            loop.add_writer(fd, self._action, fd, pycurl.CSELECT_OUT)
        elif had_out and not want_out:
            loop.remove_writer(fd)
        self._poller.register(fd, (select.POLLIN if want_in else 0) | (select.POLLOUT if want_out else 0))
        self._watched[fd] = what

    def watching(self, fd: int) -> bool:
        """Whether libcurl has `fd` watched now, i.e. a transfer is using it."""
        return fd in self._watched

    def _unwatch(self, fd: int) -> None:
        if fd in self._watched:
            self._poller.unregister(fd)
        old = self._watched.pop(fd, 0)
        if old in (pycurl.POLL_IN, pycurl.POLL_INOUT):
            self.loop.remove_reader(fd)
        if old in (pycurl.POLL_OUT, pycurl.POLL_INOUT):
            self.loop.remove_writer(fd)

    def _on_timer(self, timeout_ms: int) -> None:
        if self._timer:
            self._timer.cancel()
            self._timer = None
        self._due_now = timeout_ms == 0 and not self._closed
        if timeout_ms == 0 and not self._closed:
            # "now" (a transfer just added): before the callbacks already
            # queued, such as the analysis of the page that just arrived, so
            # a host's next request leaves at once (issue 16)
            self._timer = self.loop.call_soon(self._action, pycurl.SOCKET_TIMEOUT, 0)
        elif timeout_ms > 0 and not self._closed:
            self._timer = self.loop.call_later(timeout_ms / 1000, self._action, pycurl.SOCKET_TIMEOUT, 0)

    # -- driving -------------------------------------------------------------

    def serve_ready(self) -> None:
        """Drive libcurl now on what is ready (a zero timer queued, sockets
        with data or room), as the loop would on its next turn. For a caller
        in the middle of long work on the loop (the analysis of a batch of
        pages): a transfer that ended meanwhile is collected, and the request
        that follows it leaves, without waiting for the rest of that work
        (issue 16). Never from inside libcurl's own callbacks."""
        if self._closed:
            return
        if self._due_now:
            self._action(pycurl.SOCKET_TIMEOUT, 0)
        for fd, revents in self._poller.poll(0):
            if fd not in self._watched:  # a transfer ended above gave it up
                continue
            events = (pycurl.CSELECT_IN if revents & (select.POLLIN | select.POLLHUP) else 0) | (
                pycurl.CSELECT_OUT if revents & select.POLLOUT else 0) | (
                pycurl.CSELECT_ERR if revents & select.POLLERR else 0)
            self._action(fd, events)
        if self._due_now:  # a transfer those ended let the next one start: send its request
            self._action(pycurl.SOCKET_TIMEOUT, 0)

    def _action(self, fd: int, events: int) -> None:
        if self._closed:
            return
        if fd == pycurl.SOCKET_TIMEOUT:
            if self._timer is not None:  # run early by serve_ready(): not again when its turn comes
                self._timer.cancel()
            self._timer = None
            self._due_now = False
        try:
            self.multi.socket_action(fd, events)
        except pycurl.error as exc:  # only on misuse: log and go on
            LOG.error("curl multi socket_action failed: %s", exc)
        self._collect()

    def _collect(self) -> None:
        while True:
            queued, ok, failed = self.multi.info_read()
            for handle in ok:
                self._end(handle, 0, "", complete=True)
            for handle, code, message in failed:
                self._end(handle, code, message)
            if not queued:
                return

    def _end(self, handle: pycurl.Curl, code: int, message: str, *, complete: bool = False) -> None:
        """One finished transfer: whatever our handling raises stays with it."""
        try:
            if complete and self.on_complete is not None:
                self.on_complete(handle)
        except Exception:  # the desync check is a courtesy: the transfer still ends
            LOG.exception("curl on_complete failed")
        self.multi.remove_handle(handle)
        self.running -= 1
        try:
            self.on_done(handle, code, message)
        except Exception as exc:  # a bug must cost this transfer, not its neighbours
            LOG.exception("ending a transfer failed")
            if self.on_failed is not None:
                try:
                    self.on_failed(handle, exc)
                except Exception:
                    LOG.exception("reporting a failed transfer failed")
