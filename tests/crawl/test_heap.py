"""crawl/_heap.py: memory a crawl frees is kept for the next page, not trimmed and faulted in
again (measured in a fresh process: its own heap, its own page-fault count)."""

import platform
import subprocess
import sys

from support import require

SCRIPT = r"""
import ctypes, resource, sys
from dustless.crawl._heap import keep_heap

if sys.argv[1] == "kept":
    assert keep_heap()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
SIZE, COUNT = 64 << 10, 256  # 16 MiB in blocks under the mmap threshold: the heap's own

def page() -> int:
    # What a page does to the heap: take some MiB, write them, give them back.
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    blocks = [libc.malloc(SIZE) for _ in range(COUNT)]
    for b in blocks:
        ctypes.memset(b, 1, SIZE)
    for b in reversed(blocks):
        libc.free(b)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

page()  # the first time the pages are new either way
print(min(page() for _ in range(5)))
"""


def _faults(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


def test_memory_freed_between_pages_is_not_faulted_in_again() -> None:
    require(platform.libc_ver()[0] == "glibc", "mallopt's knobs are glibc's")
    # 16 MiB is 4,096 pages: trimmed after each round, most fault in again every round.
    assert _faults("trimmed") > 1000
    assert _faults("kept") < 200
