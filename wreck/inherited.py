# Listening sockets a parent binds for its children, so that children which
# need each other's addresses can start at the same time (wreck-crawl starts
# its store, urlserver and spider at once, issue 16): the parent binds
# HOST:0 and listens, which fixes the port before any child runs, then
# passes the open socket to the child that will serve it (subprocess
# pass_fds) with the address it stands for in the child's environment
# (ENV = "HOST:PORT=FD ..."). The child's server takes that socket instead of
# binding (take()). A client started at the same time connects at once: the
# kernel completes its TCP handshake into the listen backlog, and the bytes
# wait there until the server's loop accepts. The parent closes its copy once
# the child runs (hand_over), so when the child dies the port refuses
# connections, as a dead server's should. Nothing binds a port twice, so no
# other process can take it in between (choosing a free port, closing it
# and telling the child would leave that race open).
"""bind(), environ() and hand_over() in the parent; take() in the child."""

from __future__ import annotations

import os
import socket

ENV = "WRECK_LISTEN_FDS"
# The kernel's queue of connections completed before the child accepts:
# as wreck/listener.py's ACCEPT_BACKLOG (the child listens again with its own).
BACKLOG = 512


def bind(host: str) -> socket.socket:
    """A TCP socket listening on `host` at a port the OS picks."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio's servers do
        sock.bind((host, 0))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def address(sock: socket.socket) -> str:
    """HOST:PORT of a bound socket, as the daemons' --listen and --http take it."""
    host, port = sock.getsockname()[:2]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def environ(socks: list[socket.socket]) -> dict[str, str]:
    """The environment entry that tells a child which of its inherited
    descriptors serves which address ({} for none)."""
    if not socks:
        return {}
    return {ENV: " ".join(f"{address(s)}={s.fileno()}" for s in socks)}


def hand_over(socks: list[socket.socket]) -> None:
    """In the parent, once the child runs: close the parent's copies."""
    for sock in socks:
        sock.close()


def take(host: str, port: int) -> socket.socket | None:
    """In the child: the socket its parent bound for host:port, or None
    (then the caller binds as usual). Each is taken once, and the entry
    leaves the environment, so the child's own children never see it."""
    entries = dict(item.rpartition("=")[::2] for item in os.environ.get(ENV, "").split() if "=" in item)
    wanted = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    fd = entries.pop(wanted, None)
    if fd is None or not fd.isdigit():
        return None
    if entries:
        os.environ[ENV] = " ".join(f"{a}={f}" for a, f in entries.items())
    else:
        os.environ.pop(ENV, None)
    try:
        sock = socket.socket(fileno=int(fd))
    except OSError:  # not open here after all: bind as usual
        return None
    sock.set_inheritable(False)  # the child's own subprocesses never get it
    return sock
