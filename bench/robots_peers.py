"""robots.txt parsing and matching: dustless against protego on 4,231 real files.

Both parse every file of ``../shared/testdata/robots/real`` and answer the same five
questions per file, in the same run of this script, best of ``--repeat`` rounds (the machine
is shared: a ratio measured in one run is the evidence, not the seconds).
Run: ``.venv/bin/python bench/robots_peers.py``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from protego import Protego

from dustless.robots import Robots

DATA = Path(__file__).resolve().parents[2] / "shared" / "testdata" / "robots" / "real"
PROBES = ("/", "/search?q=x", "/wp-admin/", "/a/b/c.html", "/%E3%83%84")


def _ours(bodies: list[bytes]) -> float:
    started = time.perf_counter()
    for body in bodies:
        robots = Robots.parse(body)
        for probe in PROBES:
            robots.allowed("dustless", probe)
    return time.perf_counter() - started


def _protego(bodies: list[bytes]) -> float:
    started = time.perf_counter()
    for body in bodies:
        rp = Protego.parse(body.decode("utf-8", "replace"))
        for probe in PROBES:
            rp.can_fetch("https://example.com" + probe, "dustless")
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = sorted(p for p in DATA.iterdir() if p.is_file())
    bodies = [p.read_bytes() for p in files]
    ours = min(_ours(bodies) for _ in range(args.repeat))
    peer = min(_protego(bodies) for _ in range(args.repeat))
    print(f"robots_peers: {len(files):,} real robots.txt files, {len(PROBES)} questions each")
    print(f"  dustless {ours:6.2f} s   protego {peer:6.2f} s   ratio {peer / ours:.2f}x")


if __name__ == "__main__":
    main()
