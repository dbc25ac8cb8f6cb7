"""Dictionary compression through the server: trained from the first
documents, kept in LMDB, older documents readable after a retrain."""

from __future__ import annotations

import gzip

from tests.web.corpus import Corpus
from wreck.protocol import Ack, AckResult, Record, Specific, http_enum
from wreck.storeserver.store import ReadStore

from tests.store_helpers import Client, running_server

CORPUS = Corpus(sites=3, min_kb=4, max_kb=8)


def page(i: int) -> Record:
    return Record(i, True, Specific.OK, http_enum(200), 5, CORPUS.url(i), None, CORPUS.response(i))


def send(port: int, ids: range) -> None:
    c = Client(port)
    for i in ids:  # one at a time, so training can finish between batches
        c.send([page(i)])
        c.acks(1)
    c.close()


def test_a_trained_dictionary_is_used_and_survives_retraining(tmp_path):
    with running_server(tmp_path, dict_train_docs=60) as (server, port):
        send(port, range(1, 61))
        server.compressor.wait_for_training(30)
        send(port, range(61, 121))
        server.compressor.request_retrain()
        send(port, range(121, 181))
        server.compressor.wait_for_training(30)
        send(port, range(181, 241))
    store = ReadStore(tmp_path)
    metas = {m.doc_id: m for m, _ in store.iter_docs(with_documents=False)}
    assert metas[1].dict_id == 0 and metas[100].dict_id == 1 and metas[240].dict_id == 2
    assert store.meta_info()["dict_id"] == 2
    for i in (1, 60, 61, 120, 150, 200, 240):  # every generation reads back intact
        assert store.get(i)[1] == page(i).document
    trained = [m for m in metas.values() if m.dict_id == 2]
    raw = sum(m.doc_len for m in trained)
    gz = sum(len(gzip.compress(page(m.doc_id).document, 6)) for m in trained)
    assert sum(m.stored_len for m in trained) < gz / 1.5 < raw  # the point of the dictionary


def test_a_batch_compressed_on_every_core_reads_back_under_each_dictionary(tmp_path):
    # A spider that does not compress sends its records in bursts: the store
    # compresses each batch on its pool of threads (compress.py), which must
    # take up every new dictionary and keep each record's own bytes.
    bursts = (range(1, 65), range(200, 264), range(400, 464))  # no dictionary, the first, a retrained one
    with running_server(tmp_path, dict_train_docs=60) as (server, port):
        c = Client(port)

        def burst(ids: range) -> None:
            c.send([page(i) for i in ids])
            assert c.acks(len(ids)) == [Ack(i, AckResult.STORED) for i in ids]

        burst(bursts[0])
        server.compressor.wait_for_training(30)
        send(port, range(65, 80))  # one by one, so the dictionary is committed
        burst(bursts[1])
        server.compressor.request_retrain()
        send(port, range(300, 361))
        server.compressor.wait_for_training(30)
        send(port, range(361, 380))
        burst(bursts[2])
        c.close()
    store = ReadStore(tmp_path)
    try:
        assert [{store.get(i)[0].dict_id for i in ids} for ids in bursts] == [{0}, {1}, {2}]
        for ids in bursts:
            for i in ids:
                assert store.get(i)[1] == page(i).document
    finally:
        store.close()
