"""wreck/httpserve.py, the operator port's transport, byte for byte on a
loopback socket: keep-alive, HEAD, the bounds on head, body and time, and
routing with path parameters."""

from __future__ import annotations

import asyncio
import logging

import pytest

from wreck import httpserve
from wreck.httpserve import OPEN, WRITE, HttpError, HttpServer, Request, Response, Route, TokenGate

log = logging.getLogger("test-httpserve")


def _server(token: str | None = None) -> HttpServer:
    def echo(request: Request) -> Response:
        return Response.json({"method": request.method, "params": request.params, "q": request.arg("q")})

    def refuse(request: Request) -> Response:
        raise HttpError(422, "no\nway")

    routes = [Route("GET", "/things/{name}", echo), Route("POST", "/things/{name}/poke", echo, WRITE),
              Route("GET", "/refuse", refuse, OPEN)]
    return HttpServer(routes, gate=TokenGate(token, exposed=False), log=log, max_body=100)


async def _exchange(server: HttpServer, data: bytes) -> bytes:
    host, port = await server.start("127.0.0.1:0")
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(data)
    answer = await asyncio.wait_for(reader.read(), 30)  # until the server closes
    writer.close()
    await server.stop()
    return answer


def test_keep_alive_serves_two_requests_on_one_connection_then_close_ends_it():
    answer = asyncio.run(_exchange(_server(), b"GET /things/a%20b?q=1 HTTP/1.1\r\nHost: x\r\n\r\n"
                                              b"HEAD /things/c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
    first, second = answer.split(b"HTTP/1.1 ")[1:]
    assert first.startswith(b"200 OK\r\n") and first.endswith(b'{"method":"GET","params":{"name":"a b"},"q":"1"}\n')
    assert second.startswith(b"200 OK\r\n") and second.endswith(b"\r\n\r\n")  # HEAD: the head alone


def test_an_http_1_0_request_is_answered_and_the_connection_closed():
    answer = asyncio.run(_exchange(_server(), b"GET /refuse HTTP/1.0\r\n\r\n"))
    assert answer.startswith(b"HTTP/1.1 422 Unprocessable") and answer.endswith(b'{"error":"no way"}\n')


def test_a_head_too_long_and_a_body_too_big_are_refused_without_reading_on():
    huge_head = b"GET /things/a HTTP/1.1\r\nHost: x\r\nX: " + b"y" * (2 * httpserve.MAX_HEAD) + b"\r\n\r\n"
    assert asyncio.run(_exchange(_server(), huge_head)).startswith(b"HTTP/1.1 431 ")
    big = b"POST /things/a/poke HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n"  # the body never sent
    answer = asyncio.run(_exchange(_server(), big))
    assert answer.startswith(b"HTTP/1.1 413 ") and b"at most 100 are read" in answer


def test_a_request_dripping_slower_than_the_deadline_is_dropped(monkeypatch):
    monkeypatch.setattr(httpserve, "READ_TIMEOUT_S", 0.3)

    async def main():
        server = _server()
        host, port = await server.start("127.0.0.1:0")
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /things/a HTTP/1.1\r\n")  # and never the rest
        answer = await asyncio.wait_for(reader.read(), 30)
        await server.stop()
        return answer, server.active

    answer, active = asyncio.run(main())
    assert answer == b"" and active == 0


@pytest.mark.parametrize("headers, code", [(b"", 401), (b"Authorization: Bearer nope\r\n", 401),
                                           (b"Authorization: Basic c2VjcmV0\r\n", 401),
                                           (b"Authorization: Bearer secret-token\r\n", 200)])
def test_a_write_route_needs_the_bearer_token_once_one_is_configured(headers, code):
    request = b"POST /things/a/poke HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + b"\r\n"
    answer = asyncio.run(_exchange(_server("secret-token"), request))
    assert answer.startswith(f"HTTP/1.1 {code} ".encode())
