"""charset=x-user-defined (wreck/htmlcharset.py) against the Encoding
Standard's definition (section 14.5, x-user-defined): a byte below 0x80 is
that code point, a byte 0x80-0xFF is U+F780 plus the byte minus 0x80, and the
encoder maps those back; a <meta> naming it means windows-1252 (HTML
13.2.3.2, the prescan)."""

from __future__ import annotations

import pytest

from wreck import htmlcharset
from wreck.storeserver.dumprecord import decoded_body

HEADER = "text/html; charset=x-user-defined"


def _standard(byte: int) -> str:
    return chr(byte) if byte < 0x80 else chr(0xF780 + byte - 0x80)


def test_every_byte_decodes_as_the_encoding_standard_defines_it():
    body = bytes(range(256))
    assert htmlcharset.sniff(body, HEADER) == htmlcharset.USER_DEFINED
    codec, text = htmlcharset.decode(body, HEADER)
    assert (codec, text) == (htmlcharset.USER_DEFINED, "".join(map(_standard, range(256))))


def test_its_encoder_maps_back_and_escapes_the_rest_as_a_form_does():
    text = "".join(map(_standard, range(256)))
    assert text.encode(htmlcharset.query_encoding(htmlcharset.USER_DEFINED)) == bytes(range(256))
    assert "é".encode(htmlcharset.USER_DEFINED, "xmlcharrefreplace") == b"&#233;"  # no byte for it


@pytest.mark.parametrize("label", ["x-user-defined", "X-User-Defined", '"x-user-defined"'])
def test_the_label_is_read_in_any_case_and_quoting(label):
    assert htmlcharset.sniff(b"<p>\xe9</p>", f"text/html; charset={label}") == htmlcharset.USER_DEFINED


def test_a_meta_naming_it_means_windows_1252():
    body = "<meta charset=x-user-defined><p>café</p>".encode()  # valid UTF-8, read as windows-1252 all the same
    assert htmlcharset.sniff(body) == htmlcharset.DEFAULT
    assert htmlcharset.decode(body)[1].endswith("cafÃ©</p>")


def test_wreck_dump_reads_such_a_page_in_it():
    assert decoded_body(b"<p>\xe9</p>", HEADER) == (htmlcharset.USER_DEFINED, "<p>\uf7e9</p>")
