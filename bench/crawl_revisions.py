"""What a crawl costs at each of several revisions of dustless, in the same run.

The crawl of ``bench/crawl_peers.py``'s throughput run (the ``clean`` test web, no politeness
delay, the crawler pinned to its own core) is timed once per revision given, each from a
git worktree of that revision with this checkout's ``.venv`` (its dependencies must cover
every revision). It prints CPU ms a page for each, and each one's CPU against the first:
the figures behind "what each addition cost the crawl" in docs/crawling.md "Speed".

    .venv/bin/python bench/crawl_revisions.py 6fd447c 765cd45 2774f96 HEAD --pages 8000

The machine is shared: run the revisions twice in alternating order if they are close.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crawl_peers import Server, run_dustless  # a sibling script

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("revisions", nargs="+", help="git revisions, the first is the baseline")
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--hosts", type=int, default=50)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="crawl-revisions-") as t:
        tmp = Path(t)
        server = Server(
            tmp, profile="clean", sites=args.hosts, pages=args.pages // args.hosts, extra=[]
        )
        base: float | None = None
        try:
            for i, rev in enumerate(args.revisions):
                tree = tmp / f"rev{i}"
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(tree), rev],
                    check=True,
                )
                try:
                    os.environ["PYTHONPATH"] = str(tree / "src")
                    m = run_dustless(server, tmp, f"crawl{i}", "--policy", "standard")
                finally:
                    os.environ.pop("PYTHONPATH", None)
                    subprocess.run(
                        ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                        check=True,
                    )
                ms = 1000 * m["cpu"] / max(m["pages"], 1)
                base = ms if base is None else base
                print(
                    f"{rev:>12}  {m['pages']:7,} pages  {ms:5.2f} CPU ms/page  "
                    f"{ms / base:5.2f}x the first"
                )
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
