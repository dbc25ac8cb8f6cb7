# Both sides of the handshake, for both services. The input's first byte
# picks the side and service; the rest is fed to a connection waiting for
# the peer's first handshake message. Nonces and secret are the fixed test
# ones, so seeds carry valid proofs and mutations of them reach OPEN and go
# on into the protocol's own messages.
"""Fuzz target: the handshake (HELLO, AUTH, WELCOME/SET/READY, ERROR)."""

from __future__ import annotations

import sys

from wreck.protocol import Auth, ControlConnection, Get, Hello, Idle, Role, StoreConnection
from wreck.protocol.store import other_crawl

from ..protocol_helpers import CLIENT_NONCE, SECRET, SERVER_NONCE, feed
from .checks import feed_checked
from .driver import main

KINDS = (ControlConnection, StoreConnection)
SETTINGS = {"store": "127.0.0.1:7002", "timeout_update_ms": "30000", "user_agent": "WRECK/0.1 (+x; y@z)",
            "allow_net": ""}


def _server(kind):
    server = kind(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    server.hello()
    return server


def _client(kind):
    return kind(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name="box-1")


def _seeds() -> list[bytes]:
    seeds = []
    for k, kind in enumerate(KINDS):
        server, client = kind(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE), _client(kind)
        hello = server.hello()
        feed(client, hello)
        auth = client.authenticate()
        feed(server, auth)
        ready = server.welcome(SETTINGS)
        feed(client, ready)
        # selector: bit 0 the side that receives, bit 1 the service, the rest the chunking
        seeds.append(bytes([2 * k]) + auth)  # server side receives AUTH
        seeds.append(bytes([2 * k + 1]) + hello + ready)  # client side receives HELLO, WELCOME..READY
        seeds.append(bytes([2 * k + 8]) + auth)
        if kind is ControlConnection:  # and on into OPEN
            seeds.append(bytes([2 * k]) + auth + client.send(Get(5)))
            seeds.append(bytes([2 * k + 1]) + hello + ready + server.send(Idle(100)))
        seeds.append(bytes([2 * k]) + b"ERROR auth wrong or missing shared secret\n")
        seeds.append(bytes([2 * k + 1]) + b"ERROR busy more than 256 connections\n")
        seeds.append(bytes([2 * k + 1]) + hello + b"ERROR unavailable no handshake within 5 s\n")
    # A store spider naming its crawl (crawl=), and a store of another crawl refusing it (6.1).
    server = StoreConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    client = StoreConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name="box-1", crawl_id="ab" * 16)
    hello = server.hello()
    feed(client, hello)
    auth = client.authenticate()
    feed(server, auth)
    seeds.append(bytes([2]) + auth)
    seeds.append(bytes([3]) + hello + server.welcome({}) + server.send(other_crawl("cd" * 16, "ab" * 16, "box-1")))
    return seeds


SEEDS = _seeds()


def one_input(data: bytes) -> None:
    if not data:
        return
    kind = KINDS[(data[0] >> 1) & 1]
    conn = _client(kind) if data[0] & 1 else _server(kind)

    def respond(event: object) -> None:  # take the handshake's next step, as the daemons do
        if type(event) is Hello:
            conn.authenticate()
        elif type(event) is Auth:
            conn.welcome(SETTINGS)

    feed_checked(conn, bytes([data[0] >> 2]) + data[1:], respond=respond)


if __name__ == "__main__":
    sys.exit(main("handshake", one_input, SEEDS))
