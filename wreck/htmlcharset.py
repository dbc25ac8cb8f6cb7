# The character encoding of an HTML document, as a browser determines it
# (WHATWG HTML 13.2.3 "Determining the character encoding"), shared by the
# spider (links are resolved in the page's encoding: docs/urls.md) and
# wreck-dump --text, so both read a page the same way.
#
# The order is the standard's: a byte-order mark; else the Content-Type
# header's charset; else a <meta> prescan of the first PRESCAN_BYTES; else
# the standard's optional autodetection step, kept to one question: a body
# that is valid UTF-8 is UTF-8 (as Chromium's detector finds; an undeclared
# page in a legacy encoding is almost never valid UTF-8 once it has a
# non-ASCII byte); else DEFAULT. Finding and mapping the labels is w3lib's (Scrapy's library,
# whose label table follows the Encoding Standard: latin-1 and ascii mean
# windows-1252, gb2312 and gbk mean gb18030, shift_jis is Microsoft's
# cp932...; its prescan skips comments and honours http-equiv only with the
# content-type pragma). On top of w3lib this module applies the three points
# where w3lib is looser than the standard:
#   - the prescan sees only the first 1,024 bytes (w3lib reads 4,096): a
#     browser ignores a later <meta charset>;
#   - a UTF-32 byte-order mark is not one (the standard knows three BOMs);
#     FF FE 00 00 is the UTF-16LE BOM followed by a NUL;
#   - a <meta> naming UTF-16 means UTF-8 (a document that can carry ASCII
#     markup is not UTF-16), x-user-defined means windows-1252;
#   - a Content-Type charset=x-user-defined is the Encoding Standard's
#     x-user-defined: 0x00-0x7F as ASCII, 0x80-0xFF as U+F780-U+F7FF, a
#     charmap registered with Python's codecs under that name (Python has
#     none; w3lib's label lookup then finds it, and body.decode() and the
#     URL query encoder read it), where it was read as windows-1252 (or as
#     UTF-8, when valid);
#   - the labels the Encoding Standard maps to its 'replacement' encoding
#     (iso-2022-kr, hz-gb-2312, iso-2022-cn...: encodings abused for
#     cross-site scripting) give REPLACEMENT: the whole body decodes to one
#     U+FFFD, so a browser shows no link of such a page, and neither does
#     the spider (w3lib decodes iso-2022-kr and hz with Python's codecs);
#   - a label is one of the Encoding Standard's (webencodings' table, the
#     only source: the label as written is looked up there, in the header
#     and in a <meta>): w3lib takes any name Python's codecs know and
#     folds '-' and '_' ('latin-1', 'utf_8', 'euc_kr', 'us_ascii' are no
#     labels; a browser ignores them and reads the <meta>, or sniffs), so
#     'charset=base64', 'hex',
#     'undefined' or 'idna' (no text codecs: decoding raised, and the page
#     was lost as a spider bug) and 'utf-32', 'cp037' or 'unicode_escape'
#     (links a browser never shows) were obeyed where a browser ignores the
#     label; and the 70 labels of the standard w3lib does not know
#     (x-mac-cyrillic, iso-8859-8-i, gb_2312, x-cp1251, windows-949,
#     unicode-1-1-utf-8...) are added to w3lib's own translation table at
#     import, so its header parser and its <meta> prescan both read them;
#   - a <meta> whose label is no label ('bogus', 'latin-1') gives way to the
#     next <meta> (HTML 13.2.3.2: "if charset is failure, jump to ... next
#     byte"), where w3lib stops at the first <meta> naming any label.
# Pure: no I/O, no state (but the codec registered and w3lib's table
# completed at import).
"""sniff(body, content_type) -> codec name; decode(body, content_type) -> text."""

from __future__ import annotations

import codecs
import encodings
import functools
import re

import w3lib.encoding
import webencodings
from w3lib.encoding import (html_body_declared_encoding, http_content_type_encoding, read_bom, resolve_encoding,
                            to_unicode)

PRESCAN_BYTES = 1024
# Content-Type values a worker's header_encoding() remembers: a crawl's pages
# repeat a few ('text/html; charset=utf-8'), and reading one costs about
# 24,000 instructions (w3lib's parse, the label's lookup), a hit a few hundred
HEADER_CACHE = 256
"""WHATWG HTML 13.2.3.2: the prescan looks at the first 1,024 bytes only."""
DEFAULT = "cp1252"
"""The standard's default for an unknown locale: windows-1252."""
UTF8 = "utf-8"
# Encodings whose URL query is encoded in UTF-8 anyway (URL Standard 4.4,
# "encoding ... get an output encoding": UTF-16BE/LE and replacement -> UTF-8).
_QUERY_AS_UTF8 = frozenset({"utf-8", "utf-16-le", "utf-16-be"})
REPLACEMENT = "replacement"
"""The Encoding Standard's encoding of dangerous labels: a body is one U+FFFD."""
_REPLACEMENT_LABELS = frozenset({"csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext", "iso-2022-kr",
                                 "replacement"})
_REPLACEMENT_CODECS = frozenset({"iso2022_kr", "hz"})  # the Python codecs w3lib maps some of those labels to
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([^\"';\s]*)", re.IGNORECASE)
# a declaration's label in a <meta> (charset=, also inside content=) or an <?xml encoding=?>, as w3lib reads it
_HEADER_LABEL = re.compile(r"""charset\s*=\s*["']?\s*([\w-]+)""", re.IGNORECASE)  # w3lib's label characters
# (its first letter outside (?i:): the scan of a 1 KiB head takes a third of the time)
_DECLARED = re.compile(r"""(?:[cC](?i:harset)|[eE](?i:ncoding))\s*=\s*["']?\s*([\w-]+)""")
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF16_LE, "utf-16-le"))
USER_DEFINED = "x-user-defined"
"""The Encoding Standard's x-user-defined (section 14.5), a codec registered here."""
_USER_DEFINED_TABLE = "".join(map(chr, range(0x80))) + "".join(map(chr, range(0xF780, 0xF800)))
_USER_DEFINED_ENCODING = codecs.charmap_build(_USER_DEFINED_TABLE)


class _UserDefinedDecoder(codecs.IncrementalDecoder):
    def decode(self, data, final=False):
        return codecs.charmap_decode(data, self.errors, _USER_DEFINED_TABLE)[0]


class _UserDefinedEncoder(codecs.IncrementalEncoder):
    def encode(self, text, final=False):
        return codecs.charmap_encode(text, self.errors, _USER_DEFINED_ENCODING)[0]


_USER_DEFINED_INFO = codecs.CodecInfo(
    name=USER_DEFINED, encode=lambda text, errors="strict": codecs.charmap_encode(text, errors, _USER_DEFINED_ENCODING),
    decode=lambda data, errors="strict": codecs.charmap_decode(data, errors, _USER_DEFINED_TABLE),
    incrementalencoder=_UserDefinedEncoder, incrementaldecoder=_UserDefinedDecoder)
codecs.register(lambda name: _USER_DEFINED_INFO if name in ("x-user-defined", "x_user_defined") else None)


def _standard_codec(name: str) -> str | None:
    """The Python codec w3lib reads an Encoding Standard encoding `name` with."""
    return resolve_encoding(webencodings.PYTHON_NAMES.get(name, name))


# The codecs the Encoding Standard's labels lead to: any other is a label no browser knows
_STANDARD_CODECS = frozenset(filter(None, map(_standard_codec, set(webencodings.LABELS.values()))))


def _complete_w3lib_labels() -> None:
    """Add the standard's labels w3lib resolves to nothing to its translation
    table (DEFAULT_ENCODING_TRANSLATION, keyed as resolve_encoding keys it:
    the label normalised, then through Python's aliases)."""
    for label, name in webencodings.LABELS.items():
        if resolve_encoding(label) is None and (codec := _standard_codec(name)) is not None:
            normed = encodings.normalize_encoding(label).lower()
            w3lib.encoding.DEFAULT_ENCODING_TRANSLATION[encodings.aliases.aliases.get(normed, normed)] = codec
    resolve_encoding.cache_clear()  # its None for those labels is cached


_complete_w3lib_labels()


def bom_encoding(body: bytes) -> str | None:
    """The encoding named by a UTF-8 or UTF-16 byte-order mark, if any."""
    encoding, _bom = read_bom(body)
    if encoding is None:
        return None
    if encoding.startswith("utf-32"):  # not a BOM of the standard: see the comment above
        for bom, name in _BOMS:
            if body.startswith(bom):
                return name
        return None
    return encoding


@functools.lru_cache(maxsize=HEADER_CACHE)
def header_encoding(content_type: bytes | str | None) -> str | None:
    """The codec of a Content-Type header's charset parameter, if valid.

    Raw header bytes are read as Latin-1, which maps every byte, so a
    non-ASCII byte in the header never raises (it only fails the label).
    """
    if not content_type:
        return None
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    found = http_content_type_encoding(content_type)
    if found is not None and not _is_label(_HEADER_LABEL.search(content_type)):
        return None  # a name Python knows and the Encoding Standard does not ('latin-1', 'utf_8')
    if found in _REPLACEMENT_CODECS or found is None and (label := _CHARSET.search(content_type)) and (
            label.group(1).lower() in _REPLACEMENT_LABELS):
        return REPLACEMENT
    # the label utf-16 means UTF-16LE (Encoding Standard); Python's would read a BOM
    return "utf-16-le" if found == "utf-16" else found if found in _STANDARD_CODECS else None


def _is_label(found: re.Match | None) -> bool:
    """Whether a label found in a header or a <meta> is one of the Encoding
    Standard's (webencodings' table, its "get an encoding": blanks around
    it dropped, ASCII case folded)."""
    return found is not None and webencodings.lookup(found.group(1)) is not None


# The usual head of a UTF-8 page: nothing before its <meta> but blanks, an
# <?xml ...?> declaration (w3lib reads its encoding=: only utf-8 there), a
# doctype, <html> and <head> (no comment, no other element), so the
# prescan's first <meta> is this one, and it says UTF-8 by
# charset="utf-8" or by http-equiv="Content-Type" content="text/html;
# charset=utf-8": proved by one match at the page's start. w3lib's prescan
# finds the same in 10-20 us a page (a spider worker's link extraction, issue
# 16); whatever this does not match goes to it. Values are quoted, except an
# unquoted charset ended by a blank or '>' (unquoted 'utf-8/>' is 'utf-8/').
_WS = rb"[ \t\n\f\r]"  # the standard's ASCII whitespace (Python's \s has VT too)
_UTF8_HEAD = re.compile(
    rb"%(ws)s*(?:<\?xml version=\"1\.[01]\"(?: encoding=\"utf-8\")?(?: standalone=\"(?:yes|no)\")?\?>%(ws)s*)?"
    rb"(?:<!doctype%(ws)s[^<>]*>%(ws)s*)?"
    rb"(?:<html(?:%(ws)s+[a-z0-9_:.-]+(?:=\"[^\"<>]*\"|='[^'<>]*')?)*%(ws)s*>%(ws)s*)?"
    rb"(?:<head>%(ws)s*)?"
    rb"<meta%(ws)s+(?:charset=(?:\"utf-8\"%(ws)s*/?|'utf-8'%(ws)s*/?|utf-8(?:%(ws)s+/?)?)"
    rb"|http-equiv=\"content-type\"%(ws)s+content=\"text/html;%(ws)s*charset=utf-8\"%(ws)s*/?)>" % {b"ws": _WS},
    re.IGNORECASE)


def _blot_unknown(found: re.Match[str]) -> str:
    """A declaration with its label, when no label of the Encoding
    Standard, overwritten by as many '!' (no label character to w3lib)."""
    if _is_label(found):
        return found.group(0)
    cut = found.start(1) - found.start(0)
    return found.group(0)[:cut] + "!" * (len(found.group(0)) - cut)


def meta_encoding(body: bytes) -> str | None:
    """The codec a <meta> in the first 1,024 bytes declares, if any."""
    if _UTF8_HEAD.match(body, 0, PRESCAN_BYTES):
        return UTF8
    return prescan(body)


def prescan(body: bytes) -> str | None:
    """meta_encoding(body) always by w3lib's prescan, without the regex
    shortcut for the usual UTF-8 head: what that shortcut is checked against."""
    raw = body[:PRESCAN_BYTES]
    found = html_body_declared_encoding(raw)
    if found is None:
        if b"harset" not in (lower := raw.lower()) and b"ncoding" not in lower:
            return None  # no declaration at all: the usual undeclared page (bytes: ASCII case folding is cheap)
        read = False
    else:
        # w3lib read the first declaration that names a label: the first
        # charset= or encoding= whose name resolves to what it found
        labels = (m for m in _DECLARED.finditer(raw.decode("latin-1")) if resolve_encoding(m.group(1)) == found)
        read = _is_label(next(labels, None))
    if not read:
        # HTML 13.2.3.2: a <meta> whose label is no encoding ('bogus', or
        # 'latin-1': Python's name, not the standard's) is passed over for
        # the next ("if charset is failure, ... next byte"); w3lib stops at
        # it. Blotted, such labels are none to w3lib, whose scan goes on.
        found = html_body_declared_encoding(_DECLARED.sub(_blot_unknown, raw.decode("latin-1")))
        if found is None:
            return None
    if found == USER_DEFINED:  # HTML 13.2.3.2, the prescan: x-user-defined means windows-1252
        return DEFAULT
    if found.startswith("utf-16"):
        return UTF8
    return REPLACEMENT if found in _REPLACEMENT_CODECS else found if found in _STANDARD_CODECS else None


def sniff(body: bytes, content_type: bytes | str | None = None) -> str:
    """The Python codec name a browser would decode `body` with."""
    return (bom_encoding(body) or header_encoding(content_type) or meta_encoding(body)
            or (UTF8 if _is_utf8(body) else DEFAULT))


def _is_utf8(body: bytes) -> bool:
    if body.isascii():
        return True  # decoded the same either way: UTF-8 keeps the fast path
    try:
        # final=False: a body cut inside a character (a size limit) is still UTF-8
        codecs.getincrementaldecoder("utf-8")().decode(body, False)
    except UnicodeDecodeError:
        return False
    return True


def decode(body: bytes, content_type: bytes | str | None = None) -> tuple[str, str]:
    """(codec, text): `body` decoded as a browser would, BOM removed,
    undecodable bytes as U+FFFD (the standard's replacement)."""
    encoding = sniff(body, content_type)
    if encoding == REPLACEMENT:
        return encoding, "\ufffd" if body else ""
    if body[:1] in (b"\xef", b"\xfe", b"\xff") and bom_encoding(body) == encoding:
        for bom, name in _BOMS:
            if name == encoding and body.startswith(bom):
                body = body[len(bom):]
                break
    return encoding, to_unicode(body, encoding)


def query_encoding(encoding: str) -> str:
    """The encoding of a URL query written in a document of `encoding`."""
    if encoding == REPLACEMENT:
        return UTF8  # URL Standard 4.4, "get an output encoding"
    name = codecs.lookup(encoding).name
    return UTF8 if name in _QUERY_AS_UTF8 else name
