"""Extraction's memory and CPU on pages whose formatting elements lexbor would clone.

Each variant of ``dustless.testweb._clones`` (formatting elements left open, then a
container repeated that closes them) is extracted in a process of its own, through
``extract_links`` as it is (which counts the clones and reads such a page flat) and through
a bare ``selectolax`` Lexbor parse (the peer, measured in the same run): CPU seconds and the
peak memory the call added (``ru_maxrss``). Run by hand:
``.venv/bin/python bench/extract_clones.py [BYTES]`` (default 360,000, the size a user
reported; the bare parse takes gigabytes and seconds a page).
"""

from __future__ import annotations

import json
import subprocess
import sys

from dustless.testweb._clones import CLONE_VARIANTS

_CHILD = """
import json, resource, sys, time
from selectolax.lexbor import LexborHTMLParser
from dustless.extract import extract_links
from dustless.testweb._clones import clone_page
body = clone_page(sys.argv[1], int(sys.argv[2]))
extract_links(b"<p>warm up</p>", "http://h.test/")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.process_time()
if sys.argv[3] == "dustless":
    extract_links(body, "http://h.test/")
else:
    LexborHTMLParser(body.decode())
cpu = time.process_time() - t
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"cpu": cpu, "mb": grown / 1024}))
"""


def _run(variant: str, size: int, how: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, variant, str(size), how],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, float] = json.loads(out)
    return result


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 360_000
    print(f"{'variant':<12} {'dustless s':>10} {'MB':>6} {'lexbor s':>9} {'MB':>7}")
    for variant in CLONE_VARIANTS:
        ours, peer = _run(variant, size, "dustless"), _run(variant, size, "lexbor")
        print(
            f"{variant:<12} {ours['cpu']:>10.3f} {ours['mb']:>6.0f} "
            f"{peer['cpu']:>9.3f} {peer['mb']:>7.0f}"
        )


if __name__ == "__main__":
    main()
