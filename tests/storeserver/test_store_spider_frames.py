"""Compression on the spider (docs/protocol.txt 6.7): once the store has
trained and committed its dictionary it gives it to every spider that
announced caps=zstd, including spiders that connect later; their documents
then come as the zstd frames the store would have written, are written as
they come and read back byte for byte, with duplicate marks keyed on the
spider's DIGEST. A frame the store did not give the dictionary for, or whose
header does not match its record, is refused with ERROR frame and never
stored."""

from __future__ import annotations

import msgspec
import pytest

from tests.web.corpus import Corpus
from wreck.protocol import Ack, AckResult, Dictionary, Error, ErrorCode, Packed, Record, Specific, http_enum
from wreck.spider.docpack import Packer
from wreck.storeserver.store import ReadStore

from tests.store_helpers import Client, make_record, running_server

CORPUS = Corpus(sites=3, min_kb=4, max_kb=8)
TRAIN = 60
ZSTD = ("zstd",)


def page(i: int) -> Record:
    return Record(i, True, Specific.OK, http_enum(200), 5, CORPUS.url(i), None, CORPUS.response(i))


def send_one_by_one(client: Client, ids) -> None:
    for i in ids:  # one at a time, so that training can finish between batches
        client.send([page(i)])
        client.acks(1)


def trained(server, port: int, first: Client) -> Dictionary:
    """Send the training documents through `first`, then one more so that the
    dictionary is committed; the DICT frame `first` then gets."""
    send_one_by_one(first, range(1, TRAIN + 1))
    server.compressor.wait_for_training(30)
    send_one_by_one(first, [TRAIN + 1])
    return dictionary_of(first)


def dictionary_of(client: Client) -> Dictionary:
    """The DICT frame `client` got (before its acks, or awaited now)."""
    got = [e for e in client.events if type(e) is Dictionary]
    return got[0] if got else client.until(lambda e: type(e) is Dictionary)


def test_spiders_get_the_dictionary_once_trained_and_their_frames_read_back_byte_for_byte(tmp_path):
    with running_server(tmp_path, dict_train_docs=TRAIN) as (server, port):
        early = Client(port, caps=ZSTD)  # connected before the training
        plain = Client(port)  # announced nothing: raw as always
        offer = trained(server, port, early)
        assert offer.dict_id == 1 and offer.level == server.settings.zstd_level
        late = Client(port, caps=ZSTD)  # connects after it: the DICT follows its WELCOME
        assert dictionary_of(late) == offer
        packer = Packer(offer)
        frames = {i: packer.pack(page(i)) for i in range(70, 80)}
        early.send([frames[i] for i in range(70, 75)])
        late.send([frames[i] for i in range(75, 80)])
        assert {a.result for a in early.acks(5) + late.acks(5)} == {AckResult.STORED}
        # The same body as page 70 under another URL: an exact duplicate, found by DIGEST.
        copy = msgspec.structs.replace(page(70), doc_id=81, url="http://copy.test/70")
        late.send([packer.pack(copy)])
        plain.send([page(82)])
        assert late.acks(1) == [Ack(81, AckResult.STORED)] and plain.acks(1) == [Ack(82, AckResult.STORED)]
        assert not any(type(e) is Dictionary for e in plain.events)
    store = ReadStore(tmp_path)
    try:
        for i in range(70, 80):
            meta, document = store.get(i)
            assert document == page(i).document
            assert (meta.dict_id, meta.stored_len, meta.doc_len) == (1, len(frames[i].document), len(document))
            assert store.annotations(i)["body_hash"] == frames[i].packed.digest.hex()
        assert store.get(81)[1] == page(70).document and store.annotations(81)["duplicate_of"] == 70
        assert store.get(82)[1] == page(82).document and store.get(82)[0].dict_id == 1
        assert store.meta_info()["docs"] == TRAIN + 1 + 12
    finally:
        store.close()


@pytest.mark.parametrize("bad", ["unknown dictionary", "wrong length", "not a frame"])
def test_a_frame_the_store_cannot_take_is_refused_and_not_stored(tmp_path, bad):
    with running_server(tmp_path, dict_train_docs=TRAIN) as (server, port):
        first = Client(port, caps=ZSTD)
        packed = Packer(trained(server, port, first)).pack(page(90))
        p = packed.packed
        if bad == "unknown dictionary":
            packed = msgspec.structs.replace(packed, packed=Packed(2, p.doc_len, p.head_len, p.digest))
        elif bad == "wrong length":
            packed = msgspec.structs.replace(packed, packed=Packed(1, p.doc_len + 1, p.head_len, p.digest))
        else:
            packed = msgspec.structs.replace(packed, document=b"\x00" * 40)
        client = Client(port, caps=ZSTD)
        client.send([packed])
        events = client.until_closed()
        assert [type(e) for e in events[-1:]] == [Error] and events[-1].code is ErrorCode.FRAME
        assert "record 90" in events[-1].reason
    store = ReadStore(tmp_path)
    try:
        assert not store.has(90)
    finally:
        store.close()


def test_with_near_dups_a_frame_that_does_not_decompress_is_refused(tmp_path):
    """--near-dups reads the text, so the store decompresses each frame: one
    whose header is right but whose blocks are not is refused, not stored."""
    with running_server(tmp_path, dict_train_docs=TRAIN, near_dups=True) as (server, port):
        first = Client(port, caps=ZSTD)
        packer = Packer(trained(server, port, first))
        good, broken = packer.pack(make_record(91)), packer.pack(make_record(92))  # pages of many words
        frame = bytearray(broken.document)
        frame[len(frame) // 2] ^= 0xFF  # the header intact, a block (or the checksum) not
        client = Client(port, caps=ZSTD)
        client.send([good])
        assert client.acks(1) == [Ack(91, AckResult.STORED)]
        client.send([msgspec.structs.replace(broken, document=bytes(frame))])
        events = client.until_closed()
        assert type(events[-1]) is Error and events[-1].code is ErrorCode.FRAME
    store = ReadStore(tmp_path)
    try:
        assert store.get(91)[1] == make_record(91).document and not store.has(92)
        assert store.annotations(91)["simhash"] is not None  # its text was read from the frame
    finally:
        store.close()


def test_a_store_told_not_to_gives_no_dictionary(tmp_path):
    with running_server(tmp_path, dict_train_docs=TRAIN, spider_compression=False) as (server, port):
        first = Client(port, caps=ZSTD)
        send_one_by_one(first, range(1, TRAIN + 1))
        server.compressor.wait_for_training(30)
        send_one_by_one(first, range(TRAIN + 1, TRAIN + 3))
        later = Client(port, caps=ZSTD)
        later.send([page(95)])
        later.acks(1)
        assert not any(type(e) is Dictionary for e in first.events + later.events)
    store = ReadStore(tmp_path)
    try:
        assert store.get(95)[0].dict_id == 1  # the store still compresses with it itself
    finally:
        store.close()
