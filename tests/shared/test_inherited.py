"""A listening socket bound by a parent and handed to its child
(wreck/inherited.py, how wreck-crawl starts its daemons at once): a client
that connects before the child even runs is served by the child; the child's
own children never see the socket; once the child is gone the port refuses."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import pytest

from wreck import inherited

CHILD = textwrap.dedent("""
    import os, socket, sys
    from wreck import inherited
    host, port = sys.argv[1], int(sys.argv[2])
    assert inherited.take(host, 1) is None  # only the address it was given
    sock = inherited.take(host, port)
    assert sock is not None and not sock.get_inheritable()
    assert inherited.ENV not in os.environ  # the child's own children never see it
    assert inherited.take(host, port) is None  # taken once
    conn, _ = sock.accept()
    conn.sendall(b"served by the child " + conn.recv(16))
    conn.close()
    sock.close()
""")


def test_a_client_that_connects_before_the_child_runs_is_served_by_the_child():
    sock = inherited.bind("127.0.0.1")
    host, port = sock.getsockname()
    early = socket.create_connection((host, port), timeout=30)  # the child is not even started
    early.sendall(b"hello")
    child = subprocess.Popen([sys.executable, "-c", CHILD, host, str(port)], pass_fds=[sock.fileno()],
                             env={**os.environ, **inherited.environ([sock])})
    inherited.hand_over([sock])
    try:
        assert early.makefile("rb").read() == b"served by the child hello"
        assert child.wait(timeout=60) == 0
    finally:
        early.close()
        if child.poll() is None:
            child.kill()
    with pytest.raises(ConnectionRefusedError):  # the parent kept no copy: a dead child's port refuses
        socket.create_connection((host, port), timeout=30).close()


def test_without_a_socket_from_the_parent_the_daemon_binds_as_usual(monkeypatch):
    monkeypatch.delenv(inherited.ENV, raising=False)
    assert inherited.take("127.0.0.1", 7001) is None
    monkeypatch.setenv(inherited.ENV, "127.0.0.1:7001=notanumber")
    assert inherited.take("127.0.0.1", 7001) is None


def test_the_environment_names_each_socket_by_its_address():
    socks = [inherited.bind("127.0.0.1"), inherited.bind("127.0.0.1")]
    try:
        entry = inherited.environ(socks)[inherited.ENV].split()
        assert entry == [f"127.0.0.1:{s.getsockname()[1]}={s.fileno()}" for s in socks]
        assert inherited.environ([]) == {}
    finally:
        inherited.hand_over(socks)
