"""The crawl process's C heap: freed memory kept for the next page instead of handed back.

glibc's malloc returns the top of its heap to the kernel as soon as 128 KiB of it is free
(``M_TRIM_THRESHOLD``) and grows it by no more than asked (``M_TOP_PAD``). A crawl frees
and allocates about the same few MiB for every batch of pages (bodies, parse trees, WARC
records, SQLite pages), so its heap was shrunk and grown again all the time: ~2 ``brk``
calls and 4–10 page faults a page, each fault a fresh zeroed page. Keeping up to 32 MiB of
free top and growing 8 MiB at a time: ~3 faults a page and ~5 % less CPU per page on the
test web (whole crawls of 5,000 pages, before/after interleaved: 0.551 → 0.523 ms; ``--store
none`` 0.467 → 0.424), peak RSS unchanged (75–78 MB). Memory still goes back to the kernel,
in larger steps; big blocks (``mmap``) are not concerned.

Only glibc has these knobs (``mallopt(3)``); elsewhere this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["keep_heap"]

# mallopt(3) parameters (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
TRIM_THRESHOLD = 32 << 20  # free top kept before it is trimmed
TOP_PAD = 8 << 20  # extra grown each time the heap grows


def keep_heap() -> bool:
    """Set the heap's trim threshold and top pad (process-wide); ``True`` if glibc took them."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        gnu = libc.gnu_get_libc_version  # glibc only: musl's mallopt ignores these
    except (OSError, AttributeError):
        return False
    del gnu
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and bool(mallopt(_M_TOP_PAD, TOP_PAD))
