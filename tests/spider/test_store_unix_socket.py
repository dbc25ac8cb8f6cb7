"""A store on this machine announces its Unix-domain socket (docs/protocol.txt
6.6) and a spider's StoreClient moves its records there: the same records
and acks, less work for the kernel than loopback TCP. A socket the spider
cannot use leaves it on TCP, still storing everything."""

from __future__ import annotations

import asyncio
import os
import socket
import stat

from wreck.protocol import AckResult
from wreck.spider.storeclient import StoreClient
from wreck.storeserver.store import ReadStore

from tests.store_helpers import make_record, running_server

TIMEOUT = 15.0


def _send(port: int, doc_ids: list[int]) -> tuple[list[AckResult], str]:
    """Submit records through a StoreClient; (their ack results, client.via)."""

    async def main() -> tuple[list[AckResult], str]:
        client = StoreClient(f"127.0.0.1:{port}", secret=b"", name="unix-test")
        client.start()
        results: list[AckResult] = []
        done = asyncio.Event()

        def on_ack(result: AckResult) -> None:
            results.append(result)
            if len(results) == len(doc_ids):
                done.set()

        for doc_id in doc_ids:
            client.submit(make_record(doc_id), on_ack)
        async with asyncio.timeout(TIMEOUT):
            await done.wait()
        via = client.via
        await client.stop()
        return results, via

    return asyncio.run(main())


def test_a_spider_moves_its_records_to_the_stores_unix_socket(tmp_path):
    path = str(tmp_path / "store.sock")
    with running_server(tmp_path, unix=path) as (_, port):
        assert stat.S_ISSOCK(os.stat(path).st_mode) and stat.S_IMODE(os.stat(path).st_mode) == 0o600
        results, via = _send(port, [1, 2, 3])
    assert results == [AckResult.STORED] * 3 and via == f"unix:{path}"
    assert not os.path.exists(path)  # removed at shutdown: no stale socket for the next start
    store = ReadStore(tmp_path)
    try:
        assert [store.get(d)[0].url for d in (1, 2, 3)] == [make_record(d).url for d in (1, 2, 3)]
    finally:
        store.close()


def test_a_stale_socket_file_from_a_killed_store_is_replaced(tmp_path):
    path = tmp_path / "store.sock"
    left = socket.socket(socket.AF_UNIX)
    left.bind(str(path))  # what a kill -9 leaves behind
    left.close()
    with running_server(tmp_path, unix=str(path)) as (_, port):
        results, via = _send(port, [4])
    assert results == [AckResult.STORED] and via == f"unix:{path}"


def test_a_socket_the_spider_cannot_reach_leaves_it_on_tcp(tmp_path):
    with running_server(tmp_path, unix=str(tmp_path / "store.sock")) as (_, port):
        os.unlink(tmp_path / "store.sock")  # announced, but not there (another machine's path)
        results, via = _send(port, [5, 6])
    assert results == [AckResult.STORED] * 2 and via == f"127.0.0.1:{port}"

