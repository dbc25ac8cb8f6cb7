"""wreck-dump --text reads a page in the encoding the spider read its links in."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from wreck.storeserver.dump import main_text

TEXT = "Любой текст на странице, достаточно длинный, чтобы считаться основным. " * 6


@pytest.mark.parametrize(("header", "meta", "codec"), [
    ("text/html; charset=windows-1251", "", "cp1251"),
    ("text/html", '<meta charset="koi8-r">', "koi8_r"),
])
def test_dump_text_decodes_a_cyrillic_page_by_its_header_or_meta(header, meta, codec):
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {header}\r\n\r\n".encode()
    body = f"<html><head>{meta}</head><body><article><p>{TEXT}</p></article></body></html>".encode(codec)
    text = main_text(SimpleNamespace(head_len=len(head)), head + body)
    assert "Любой текст на странице" in text and "\ufffd" not in text
