"""Content fingerprints and duplicate marks, without sockets: the simhash
tells copies from other pages, and a store commit marks exact and near
duplicates of earlier documents, as wreck-dump shows them."""

from __future__ import annotations

import random

import pytest

from wreck.protocol import Ack, AckResult, Record, Specific, http_enum
from wreck.storeserver import dedup
from wreck.storeserver import fingerprint as F
from wreck.storeserver.settings import MAX_MAP_GROWTH
from wreck.storeserver.store import Prepared, ReadStore, WriteStore
from tests.store_helpers import Client, ServerProcess
from tests.web.site import WORDS

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"


def _text(seed: int, words: int = 1200) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _edit(text: str, at: int) -> str:
    words = text.split()
    words[at] = "edited"
    return " ".join(words)


def _page(text: str) -> bytes:
    return HEAD + f"<html><head><title>t</title></head><body><article><p>{text}</p></article></body></html>".encode()


def test_a_one_word_edit_stays_near_and_unrelated_texts_stay_far():
    for seed in range(20):
        text = _text(seed)
        assert F.simhash(text) == F.simhash(text)
        assert F.distance(F.simhash(text), F.simhash(_edit(text, 600))) <= dedup.DEFAULT_DISTANCE
        assert F.distance(F.simhash(text), F.simhash(_text(seed + 100))) > dedup.DEFAULT_DISTANCE


def test_too_little_text_has_no_simhash_but_still_a_body_hash():
    assert F.simhash("Not found") is None
    fp = F.of_body(b"<html><body>Not found</body></html>", "text/html")
    assert fp.simhash is None and len(fp.body_hash) == F.BODY_HASH_BYTES
    assert F.of_body(b"%PDF-1.4 ...", "application/pdf").simhash is None


def test_words_of_any_script_count():
    greek = " ".join(["καλημέρα κόσμε"] * 30)
    assert F.simhash(greek) is not None
    assert F.simhash(greek) != F.simhash(" ".join(["добрый день"] * 30))


def test_only_2xx_pages_are_fingerprinted():
    page = _page(_text(1))
    head_len = len(HEAD)
    assert dedup.fingerprint_record("http://a.test/x", http_enum(200), page, head_len) is not None
    not_found = page.replace(b"200 OK", b"404 Not Found")
    assert dedup.fingerprint_record("http://a.test/x", http_enum(404), not_found, head_len) is None
    assert dedup.fingerprint_record("http://a.test/robots.txt", http_enum(200), page, head_len) is None


def _commit(store: WriteStore, docs: list[tuple[int, str, bytes]]) -> None:
    prepared = []
    for doc_id, url, document in docs:
        fp = dedup.fingerprint_record(url, http_enum(200), document, len(HEAD))
        prepared.append(Prepared(doc_id, url, b"unused by the index", len(document), fingerprint=fp))
    store.commit(prepared)


def test_exact_and_near_duplicates_are_marked_with_the_document_they_copy(tmp_path):
    original = _text(7)
    store = WriteStore(tmp_path, map_size=1 << 24, max_growth=MAX_MAP_GROWTH)
    _commit(store, [(1, "http://a.test/1", _page(original)), (2, "http://a.test/other", _page(_text(8)))])
    _commit(store, [
        (3, "http://b.test/copy", _page(original)),  # exact
        (4, "http://b.test/edited", _page(_edit(original, 500))),  # near
        (5, "http://b.test/edited-again", _page(_edit(_edit(original, 500), 900))),  # near the near one too
    ])  # fmt: skip
    store.close()
    reader = ReadStore(tmp_path)
    marks = {doc_id: reader.annotations(doc_id) for doc_id in range(1, 6)}
    reader.close()
    assert marks[1]["duplicate_of"] is None and marks[1]["near_duplicate_of"] is None
    assert marks[2]["duplicate_of"] is None and marks[2]["near_duplicate_of"] is None
    assert marks[3]["duplicate_of"] == 1 and marks[3]["near_duplicate_of"] is None
    assert marks[4]["duplicate_of"] is None and marks[4]["near_duplicate_of"] == 1
    assert 0 <= marks[4]["near_distance"] <= dedup.DEFAULT_DISTANCE
    assert marks[5]["near_duplicate_of"] in (1, 4)
    assert marks[3]["body_hash"] == marks[1]["body_hash"] != marks[4]["body_hash"]


def test_the_banded_index_finds_every_simhash_within_the_distance_and_none_beyond(tmp_path):
    store = WriteStore(tmp_path, map_size=1 << 24, max_growth=MAX_MAP_GROWTH)
    base = 0x0123_4567_89AB_CDEF
    three_bands = base ^ (1 << 3) ^ (1 << 20) ^ (1 << 40)  # 3 bits, in 3 different bands
    four_bands = base ^ (1 << 3) ^ (1 << 20) ^ (1 << 40) ^ (1 << 60)  # 4 bits: every band differs
    with store.env.begin(write=True) as txn:
        for doc_id, sim in ((1, base), (2, three_bands), (3, four_bands)):
            store.dedup.mark(txn, doc_id, F.Fingerprint(doc_id.to_bytes(16, "big"), sim))
    store.close()
    reader = ReadStore(tmp_path)
    assert reader.annotations(2)["near_duplicate_of"] == 1 and reader.annotations(2)["near_distance"] == 3
    assert reader.annotations(3)["near_duplicate_of"] == 2  # one bit from doc 2, four from doc 1
    reader.close()


def test_a_distance_the_index_cannot_guarantee_is_refused(tmp_path):
    with pytest.raises(ValueError, match="0 to 3"):
        WriteStore(tmp_path, map_size=1 << 24, max_growth=MAX_MAP_GROWTH, near_distance=4)


@pytest.mark.parametrize(("flags", "marked"), [(("--near-dups",), "near"), ((), "exact"), (("--no-dedup",), None)])
def test_the_storeserver_command_marks_a_copy_unless_told_not_to(tmp_path, flags, marked):
    text = _text(3, 300)
    recs = [Record(doc_id, True, Specific.OK, http_enum(200), 5, f"http://a.test/{doc_id}", None, _page(body))
            for doc_id, body in ((1, text), (2, text), (3, _edit(text, 150)))]
    server = ServerProcess(tmp_path, *flags)
    try:
        client = Client(server.port)
        client.send(recs)
        assert client.acks(3) == [Ack(r.doc_id, AckResult.STORED) for r in recs]
        client.close()
    finally:
        assert server.stop() == 0
    reader = ReadStore(tmp_path)
    marks = [reader.annotations(doc_id) for doc_id in (1, 2, 3)]
    reader.close()
    if marked:
        assert marks[1]["duplicate_of"] == 1
        assert marks[2]["near_duplicate_of"] == (1 if marked == "near" else None)
    else:
        assert marks == [{}, {}, {}]
