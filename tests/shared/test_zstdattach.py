"""DictCompressor writes the frames a store keeps (docs/protocol.txt 6.7):
standard zstd frames with their content size, a checksum and the
dictionary's id, that any zstd decompressor with the dictionary reads back
byte for byte, as small as the library's own compressor makes them."""

from __future__ import annotations

import zstandard as zstd

from tests.web.corpus import Corpus
from wreck.zstdattach import REUSED_OUTPUT_BYTES, DictCompressor

CORPUS = Corpus(sites=3, min_kb=20, max_kb=60)


def trained() -> bytes:
    samples = [CORPUS.response(i) for i in range(300)]
    return zstd.train_dictionary(64 * 1024, samples, k=1024, d=8, threads=1).as_bytes()


def test_frames_read_back_with_the_dictionary_and_carry_size_checksum_and_dict_id() -> None:
    dictionary = trained()
    packer = DictCompressor(3, dictionary)
    reader = zstd.ZstdDecompressor(dict_data=zstd.ZstdCompressionDict(dictionary))
    for i in range(300, 340):
        page = CORPUS.response(i)
        frame = packer.compress(page)
        params = zstd.get_frame_parameters(frame)
        assert params.content_size == len(page)
        assert params.has_checksum
        assert params.dict_id == zstd.ZstdCompressionDict(dictionary).dict_id()
        assert reader.decompress(frame) == page


def test_frames_are_as_small_as_the_librarys_own() -> None:
    dictionary = trained()
    ours = DictCompressor(3, dictionary)
    theirs = zstd.ZstdCompressor(level=3, dict_data=zstd.ZstdCompressionDict(dictionary), write_checksum=True,
                                 write_content_size=True)
    pages = [CORPUS.response(i) for i in range(300, 340)]
    mine = sum(len(ours.compress(p)) for p in pages)
    library = sum(len(theirs.compress(p)) for p in pages)
    assert mine <= library * 1.01


def test_a_document_larger_than_the_reused_buffer_and_an_empty_one_round_trip() -> None:
    dictionary = trained()
    packer = DictCompressor(3, dictionary)
    reader = zstd.ZstdDecompressor(dict_data=zstd.ZstdCompressionDict(dictionary))
    big = b"".join(CORPUS.response(i) for i in range(40)) * (REUSED_OUTPUT_BYTES // 1_000_000 + 1)
    assert len(big) > REUSED_OUTPUT_BYTES
    assert reader.decompress(packer.compress(big)) == big
    assert reader.decompress(packer.compress(b"")) == b""
    assert reader.decompress(packer.compress(CORPUS.response(7))) == CORPUS.response(7)  # reused after the big one


def test_without_a_dictionary_frames_are_plain_zstd() -> None:
    packer = DictCompressor(3, None)
    page = CORPUS.response(1)
    frame = packer.compress(page)
    assert zstd.get_frame_parameters(frame).dict_id == 0
    assert zstd.ZstdDecompressor().decompress(frame) == page
