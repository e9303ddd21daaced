"""What ``--warc-bodies as-sent`` costs against ``decoded``: the same crawl of the clean test
web, served gzip'd (``dustless testweb --gzip``: every page gzip level 6, every other one
chunked) and served plain, each mode in the same run of this script, alternated.

Each crawl is a whole ``dustless crawl`` process (start-up included); its CPU time comes
from its own rusage (``os.wait4``), divided by the pages it fetched; the WARC size is the
files' bytes. Run: ``.venv/bin/python bench/warc_bodies_bench.py`` (``--pages`` to scale).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from testweb_fixture import start_testweb

PY = sys.executable


def crawl(web, out: Path, mode: str, pages: int) -> tuple[float, float, int, int]:
    """(CPU seconds, wall seconds, pages fetched, WARC bytes) of one crawl process."""
    cmd = [
        PY, "-m", "dustless", "crawl", *web.seeds, "--out", str(out), *web.resolve_args,
        "--quiet", "--delay", "0", "--delay-factor", "0", "--concurrency", "64",
        "--max-pages", str(pages), "--warc-bodies", mode,
    ]  # fmt: skip
    begun = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - begun
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"crawl failed: {err}")
    stats = subprocess.run(
        [PY, "-m", "dustless", "stats", str(out), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    fetched = json.loads(stats.stdout)["fetches"]
    size = sum(f.stat().st_size for f in (out / "warc").iterdir())
    return usage.ru_utime + usage.ru_stime, wall, fetched, size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    per_site = max(3, args.pages // args.hosts)
    with tempfile.TemporaryDirectory(prefix="warc-bodies-") as tmp:
        root = Path(tmp)
        for served, extra in (("gzip'd", ("--gzip",)), ("plain", ())):
            web = start_testweb(
                root / f"web-{served}",
                profile="clean",
                sites=args.hosts,
                pages_per_site=per_site,
                extra_args=extra,
            )
            try:
                got: dict[str, list[tuple[float, float, int, int]]] = {}
                for r in range(args.rounds):
                    for mode in ("as-sent", "decoded") if r % 2 == 0 else ("decoded", "as-sent"):
                        out = root / f"{served}-{mode}-{r}"
                        got.setdefault(mode, []).append(crawl(web, out, mode, args.pages))
            finally:
                web.stop()
            print(f"pages served {served}:")
            per_page = {}
            for mode, runs in got.items():
                cpu = sum(c for c, _w, _p, _s in runs)
                fetched = sum(p for _c, _w, p, _s in runs)
                size = sum(s for *_x, s in runs) / len(runs)
                per_page[mode] = cpu / fetched * 1e6
                print(
                    f"  {mode:8} {per_page[mode]:7.0f} µs CPU/page  {fetched // len(runs)} pages"
                    f"  WARC {size / 1e6:6.2f} MB"
                )
            print(f"  as-sent / decoded CPU: {per_page['as-sent'] / per_page['decoded']:.3f}x")


if __name__ == "__main__":
    main()
