"""A spider's StoreClient compresses as its store would (docs/protocol.txt
6.7): it announces caps=zstd, takes the store's dictionary once the store has
trained it, sends its documents as zstd frames from then on, and they read
back byte for byte. A store that refuses a frame (ERROR code FRAME) gets the
same records raw, and no more frames."""

from __future__ import annotations

import asyncio

from tests.web.corpus import Corpus
from wreck.protocol import AckResult, Record, Specific, http_enum
from wreck.spider.storeclient import StoreClient
from wreck.storeserver.compress import SpiderFrames
from wreck.storeserver.store import ReadStore

from tests.store_helpers import running_server

TIMEOUT = 15.0
TRAIN = 60
CORPUS = Corpus(sites=3, min_kb=4, max_kb=8)


def page(i: int) -> Record:
    return Record(i, True, Specific.OK, http_enum(200), 5, CORPUS.url(i), None, CORPUS.response(i))


async def store_all(client: StoreClient, ids) -> list[AckResult]:
    """Submit pages `ids` one after the other, each once the one before is acked."""
    results = []
    for i in ids:
        acked = asyncio.get_running_loop().create_future()
        client.submit(page(i), acked.set_result)
        async with asyncio.timeout(TIMEOUT):
            results.append(await acked)
    return results


async def until(condition) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not condition():
            await asyncio.sleep(0.01)


def run(port: int, server, *, forget: bool = False) -> tuple[list[AckResult], bool]:
    """Train the store through a StoreClient, wait for its dictionary, then
    store pages 70-79 with it (with `forget`, the store first forgets the
    dictionary it gave); their ack results, and whether the client still
    compresses at the end."""

    async def main():
        client = StoreClient(f"127.0.0.1:{port}", secret=b"", name="zstd-test")
        client.start()
        await store_all(client, range(1, TRAIN + 1))
        await asyncio.get_running_loop().run_in_executor(None, server.compressor.wait_for_training, 30)
        await store_all(client, [TRAIN + 1])  # its commit stores the dictionary: DICT follows
        await until(lambda: client.packer is not None)
        if forget:  # as a store restarted after a retrain would be: it no longer takes dictionary 1
            server.frames = SpiderFrames(server.settings.zstd_level)
        results = await store_all(client, range(70, 80))
        compressing = client.compress
        await client.stop()
        return results, compressing

    results, compressing = asyncio.run(main())
    return results, compressing


def test_records_go_compressed_once_the_store_gives_its_dictionary(tmp_path):
    with running_server(tmp_path, dict_train_docs=TRAIN) as (server, port):
        results, compressing = run(port, server)
        assert server.figures()["spider_compressed"] == 10  # 70-79 came as the spider's frames
    assert results == [AckResult.STORED] * 10 and compressing
    store = ReadStore(tmp_path)
    try:
        for i in range(70, 80):
            meta, document = store.get(i)
            assert document == page(i).document and meta.dict_id == 1
    finally:
        store.close()


def test_a_store_that_refuses_a_frame_gets_the_records_raw(tmp_path):
    with running_server(tmp_path, dict_train_docs=TRAIN) as (server, port):
        results, compressing = run(port, server, forget=True)
        assert server.figures()["spider_compressed"] == 0
    assert results == [AckResult.STORED] * 10 and not compressing
    store = ReadStore(tmp_path)
    try:
        assert all(store.get(i)[1] == page(i).document for i in range(70, 80))
    finally:
        store.close()
