# libcurl's multi interface driven by the asyncio (uvloop) event loop, the
# way libcurl's docs describe for event-based programs (multi_socket):
#
#   M_SOCKETFUNCTION  libcurl says which fd to watch for what -> our own
#                     epoll set, whose one fd the loop watches
#   M_TIMERFUNCTION   libcurl asks for a wake-up in N ms -> loop.call_later
#   socket_action     called when an fd is ready or the timer fires; then
#                     info_read() collects finished transfers -> on_done
#
# libcurl's sockets live in an epoll set of our own rather than in the
# loop's: the loop's add_reader/remove_reader cost five syscalls a transfer
# on a kept-alive connection (uvloop: FIONBIO, an ADD, three DELs), the set
# one at most. When a transfer ends libcurl says POLL_REMOVE, yet keeps the
# connection for the host's next URL: its fd stays in the set ("idle"), and
# the next transfer's POLL_IN is one epoll_ctl MOD. An idle fd that turns
# ready (the server closed it, or sent bytes nobody asked for) leaves the
# set then; libcurl finds that out itself when it next picks the
# connection. A socket libcurl closes leaves the set by itself (epoll(7):
# closing the last descriptor of an open file removes it), which is why
# fetch.py's OPENSOCKETFUNCTION closes its own copy of a socket at once;
# its number may come back as a new socket, which the MOD's ENOENT tells.
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
# Ready sockets taken from the epoll set per call: the rest are there at
# the next call (level-triggered), so one loop turn stays short.
MAX_EVENTS = 256
# libcurl's POLL_* -> the epoll events to wait for (POLL_REMOVE: see above)
EPOLL_MASK = {pycurl.POLL_IN: select.EPOLLIN, pycurl.POLL_OUT: select.EPOLLOUT,
              pycurl.POLL_INOUT: select.EPOLLIN | select.EPOLLOUT}
IDLE = 0  # a watched fd libcurl has no transfer on (its connection kept for reuse)

DoneCallback = Callable[[pycurl.Curl, int, str], None]
FailedCallback = Callable[[pycurl.Curl, Exception], None]


class CurlLoop:
    """Runs transfers; `on_done(handle, curl_code, message)` when each ends,
    `on_failed(handle, exception)` when on_done (or on_complete) raised."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_done: DoneCallback, *,
                 on_complete: Callable[[pycurl.Curl], None] | None = None,
                 on_failed: FailedCallback | None = None,
                 after_action: Callable[[], None] | None = None) -> None:
        self.loop = loop
        self.on_done = on_done
        self.on_failed = on_failed
        # called for a transfer that succeeded while it still holds its
        # connection (ACTIVESOCKET is valid only until remove_handle)
        self.on_complete = on_complete
        # called after each socket_action, before finished transfers are
        # collected: the one moment outside libcurl's callbacks at which
        # options of running transfers may be changed (pycurl refuses
        # setopt from inside them)
        self.after_action = after_action
        self.multi = pycurl.CurlMulti()
        self.multi.setopt(pycurl.M_SOCKETFUNCTION, self._on_socket)
        self.multi.setopt(pycurl.M_TIMERFUNCTION, self._on_timer)
        self.multi.setopt(pycurl.M_MAXCONNECTS, MAX_CACHED_CONNECTIONS)
        self.multi.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX)
        # fd -> epoll mask libcurl wants now, IDLE for one kept in the set
        # after its transfer ended (the opening comment)
        self._watched: dict[int, int] = {}
        self._epoll = select.epoll()
        loop.add_reader(self._epoll.fileno(), self._ready)
        self._timer: asyncio.Handle | None = None
        self._due_now = False  # the timer is a zero one, queued with call_soon
        self._due = 0.0  # when the timer fires (loop time)
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
        self._cancel_timer()
        self.loop.remove_reader(self._epoll.fileno())
        self._epoll.close()
        self._watched.clear()
        self.multi.close()

    # -- libcurl callbacks ---------------------------------------------------

    def _on_socket(self, what: int, fd: int, multi: object, data: object) -> None:
        if self._closed:
            return
        mask = EPOLL_MASK.get(what)
        if mask is None:  # POLL_REMOVE (or POLL_NONE: nothing to wait for yet)
            old = self._watched.get(fd)
            if old is not None and old & select.EPOLLOUT:  # writable: it would wake the loop at once
                self._forget(fd)
            elif old is not None:
                self._watched[fd] = IDLE  # stays in the set, for reading: no syscall
            return
        old = self._watched.get(fd)
        if old == mask:
            return
        self._watched[fd] = mask
        if old is None:
            try:
                self._epoll.register(fd, mask)
            except FileExistsError:
                self._epoll.modify(fd, mask)
            return
        try:  # an idle fd may have been closed and its number reused since: ENOENT
            self._epoll.modify(fd, mask)
        except FileNotFoundError:
            self._epoll.register(fd, mask)

    def watching(self, fd: int) -> bool:
        """Whether libcurl has `fd` watched now, i.e. a transfer is using it."""
        return bool(self._watched.get(fd))

    def _on_timer(self, timeout_ms: int) -> None:
        # libcurl moves its timer about twice a transfer. A timer already
        # due no later than the one asked for is kept (cancelling and making
        # a new one was most of this callback's cost): firing early is
        # harmless, libcurl then asks for the rest. -1 removes the timer.
        if self._closed:
            return
        if timeout_ms < 0:
            self._cancel_timer()
            return
        due = self.loop.time() + timeout_ms / 1000
        if self._timer is not None and self._due <= due:
            return
        self._cancel_timer()
        self._due = due
        if timeout_ms == 0:
            # "now" (a transfer just added): before the callbacks already
            # queued, such as the analysis of the page that just arrived, so
            # a host's next request leaves at once (issue 16)
            self._due_now = True
            self._timer = self.loop.call_soon(self._action, pycurl.SOCKET_TIMEOUT, 0)
        else:
            self._timer = self.loop.call_later(timeout_ms / 1000, self._action, pycurl.SOCKET_TIMEOUT, 0)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due_now = False

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
        self._ready()
        if self._due_now:  # a transfer those ended let the next one start: send its request
            self._action(pycurl.SOCKET_TIMEOUT, 0)

    def _ready(self) -> None:
        """The sockets of the set that are ready, each handed to libcurl."""
        if self._closed:
            return
        watched = self._watched
        for fd, events in self._epoll.poll(0, MAX_EVENTS):
            if not watched.get(fd):  # idle, or a transfer ended above gave it up
                self._forget(fd)
                continue
            self._action(fd, (pycurl.CSELECT_IN if events & (select.EPOLLIN | select.EPOLLHUP) else 0) | (
                pycurl.CSELECT_OUT if events & select.EPOLLOUT else 0) | (
                pycurl.CSELECT_ERR if events & select.EPOLLERR else 0))
            if self._closed:
                return

    def _forget(self, fd: int) -> None:
        """Take an idle fd out of the set, so it does not wake the loop
        again; libcurl sees its state when it next uses it."""
        self._watched.pop(fd, None)
        try:
            self._epoll.unregister(fd)
        except OSError:  # closed meanwhile: it left the set with it
            pass

    def _action(self, fd: int, events: int) -> None:
        if self._closed:
            return
        if fd == pycurl.SOCKET_TIMEOUT:
            self._cancel_timer()  # run early by serve_ready(): not again when its turn comes
        try:
            self.multi.socket_action(fd, events)
        except pycurl.error as exc:  # only on misuse: log and go on
            LOG.error("curl multi socket_action failed: %s", exc)
        if self.after_action is not None:
            self.after_action()
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
