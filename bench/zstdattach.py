# One-shot zstd frames with a dictionary that is referenced, not copied.
#
# zstd prepares a dictionary once (its match tables, a CDict) and, before each
# frame, either attaches those tables (searched in place) or copies them into
# the compressor's own. It copies when the input is larger than a cutoff of
# its strategy (16 KB for levels 2-4: zstd's compress/zstd_compress.c,
# attachDictSizeCutoffs), as a copy is cheaper than an attached search for a
# long input and a small dictionary. WRECK's dictionary is 1 MiB (its tables
# 768 KB at level 3) and its pages 15-60 KB: the copy was a third of a
# page's compression (perf: ZSTD_resetCCtx_usingCDict), and attaching gives
# the same frames' size (bench/docpack_bench.py, 2026-11-24-s8-spidernative:
# level 3, 36 instead of 54 CPU-us a bench page, 114 instead of 152 a real
# one; ratio 27.96 vs 27.95, 8.847 vs 8.848).
#
# The switch (ZSTD_c_forceAttachDict) is in zstd's stable-for-years but
# "experimental" API, which python-zstandard's C backend does not expose; its
# cffi binding of libzstd (zstandard._cffi, shipped in the same wheel) does,
# and that is what this module calls. Where that binding is missing (a
# build without cffi), the library's own ZstdCompressor does the same job,
# copying as before. Either way the frame is a standard one (RFC 8878) with
# its content size and checksum, read by any zstd decompressor with the
# dictionary.
#
# Measured, not used by the spider: in a crawl the attached tables are cold
# in the CPU's cache by the next page, and the copy measured as cheap
# (docs/operating.md, compression level). bench/docpack_bench.py compares.
"""DictCompressor: compress(bytes) -> zstd frame, dictionary attached."""

from __future__ import annotations

import zstandard as zstd

try:  # zstandard's cffi binding of libzstd: see above
    from zstandard._cffi import ffi, lib

    _ATTACH = (lib.ZSTD_c_forceAttachDict, lib.ZSTD_dictForceAttach)
except (ImportError, AttributeError):  # pragma: no cover - a zstandard built without cffi
    ffi = lib = None

# Inputs up to this size reuse one output buffer per compressor (allocated
# once, zeroed by cffi); a larger one gets a buffer of its own.
REUSED_OUTPUT_BYTES = 1 << 20


class DictCompressor:
    """zstd at `level` with `dictionary` (raw zstd dictionary bytes, or None
    for none); frames carry their content size and a checksum. Not for use
    by two threads at once."""

    def __init__(self, level: int, dictionary: bytes | None = None) -> None:
        self.level = level
        self.attached = lib is not None and bool(dictionary)
        if not self.attached:
            d = zstd.ZstdCompressionDict(dictionary) if dictionary else None
            self.compress = zstd.ZstdCompressor(level=level, dict_data=d, write_checksum=True,
                                                write_content_size=True).compress  # type: ignore[method-assign]
            return
        self._cctx = ffi.gc(lib.ZSTD_createCCtx(), lib.ZSTD_freeCCtx)
        for param, value in ((lib.ZSTD_c_compressionLevel, level), (lib.ZSTD_c_checksumFlag, 1),
                             (lib.ZSTD_c_contentSizeFlag, 1), _ATTACH):
            _check(lib.ZSTD_CCtx_setParameter(self._cctx, param, value))
        # copied by libzstd (ZSTD_dlm_byCopy), its tables built at the first frame
        _check(lib.ZSTD_CCtx_loadDictionary(self._cctx, ffi.from_buffer(dictionary), len(dictionary)))
        self._cap = lib.ZSTD_compressBound(REUSED_OUTPUT_BYTES)
        self._out = ffi.new("char[]", self._cap)

    def compress(self, data: bytes) -> bytes:
        """`data` as one zstd frame (ZstdError if zstd fails)."""
        out, cap = self._out, self._cap
        if len(data) > REUSED_OUTPUT_BYTES:
            cap = lib.ZSTD_compressBound(len(data))
            out = ffi.new("char[]", cap)
        n = _check(lib.ZSTD_compress2(self._cctx, out, cap, ffi.from_buffer(data), len(data)))
        return ffi.buffer(out, n)[:]


def _check(result: int) -> int:
    if lib.ZSTD_isError(result):
        raise zstd.ZstdError(ffi.string(lib.ZSTD_getErrorName(result)).decode())
    return result
