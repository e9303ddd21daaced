"""How many duplicate documents ``crawl --learn`` still fetches on the ``real`` test web.

For each seed: start ``dustless testweb --profile real``, crawl it with ``--policy standard``
and with ``--policy standard --learn``, and count by the truth (its ``doc`` rows) the
resources each crawl reached and the duplicate documents it fetched (fetches of a resource
already fetched). Prints one line per seed, then the median and the worst seed (the highest
learn/standard share of duplicates): the baseline the learner's work is judged by. A seed is
replayed with ``dustless testweb --profile real --seed N --sites K --pages-per-site M``.

    .venv/bin/python bench/learn_realweb.py [SEEDS=5] [--first 1] [--sites 5] [--pages-per-site 500]

Everything runs on 127.0.0.1 through the ``dustless`` command, as a user would run it.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DUSTLESS = [sys.executable, "-m", "dustless"]


def _serve(
    seed: int, args: argparse.Namespace, truth: Path
) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [*DUSTLESS, "testweb", "--profile", "real", "--port", "0", "--seed", str(seed),
         "--sites", str(args.sites), "--pages-per-site", str(args.pages_per_site),
         "--truth", str(truth)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if not first.startswith("serving "):
        proc.kill()
        raise SystemExit(f"seed {seed}: the test web did not start: {first!r}")
    seeds: list[str] = []
    while len(seeds) < args.sites:
        word, _, value = proc.stdout.readline().strip().partition(" ")
        if word == "seed":
            seeds.append(value)
    return proc, seeds


def _crawl(seeds: list[str], out: Path, *extra: str) -> float:
    start = time.monotonic()
    subprocess.run(
        [*DUSTLESS, "crawl", *seeds, "--out", str(out), "--policy", "standard",
         "--resolve", "*.test:127.0.0.1", "--delay", "0.01", "--delay-factor", "0",
         "--quiet", *extra],
        check=True,
    )  # fmt: skip
    return time.monotonic() - start


def _truth(path: Path) -> dict[str, str]:
    """url -> resource id of every URL the truth says is a document."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) >= 4 and fields[3] == "doc":
            out[fields[0]] = fields[2]
    return out


def _count(crawl: Path, truth: dict[str, str]) -> tuple[int, int, int]:
    """(resources reached, duplicate document fetches, fetches) of a crawl, by the truth."""
    db = sqlite3.connect(crawl / "crawl.db")
    rows = db.execute(
        "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
        "WHERE f.status BETWEEN 200 AND 299 AND f.state IN ('OK', 'code')"
    ).fetchall()
    fetches = db.execute("SELECT count(*) FROM fetches").fetchone()[0]
    db.close()
    found = [r for (url,) in rows if (r := truth.get(url)) is not None]
    return len(set(found)), len(found) - len(set(found)), int(fetches)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", type=int, nargs="?", default=5, help="seeds (default 5)")
    parser.add_argument("--first", type=int, default=1, help="first seed (default 1)")
    parser.add_argument("--sites", type=int, default=5)
    parser.add_argument("--pages-per-site", type=int, default=500)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dustless-realweb-"))
    print(f"real test web, {args.sites} sites of {args.pages_per_site} documents; work in {work}")
    print("| seed | docs | standard: reached | dups | fetches | learn: reached | dups | fetches "
          "| dups learn/std | lost | s std | s learn |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    shares: list[tuple[float, int]] = []
    for seed in range(args.first, args.first + args.seeds):
        truth_path = work / f"truth-{seed}.tsv"
        proc, seeds = _serve(seed, args, truth_path)
        try:
            t_std = _crawl(seeds, work / f"std-{seed}")
            t_learn = _crawl(seeds, work / f"learn-{seed}", "--learn")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        truth = _truth(truth_path)
        docs = len(set(truth.values()))
        s_res, s_dup, s_fetch = _count(work / f"std-{seed}", truth)
        l_res, l_dup, l_fetch = _count(work / f"learn-{seed}", truth)
        share = l_dup / s_dup if s_dup else 0.0
        shares.append((share, seed))
        print(f"| {seed} | {docs} | {s_res} | {s_dup} | {s_fetch} | {l_res} | {l_dup} | "
              f"{l_fetch} | {share:.0%} | {s_res - l_res} | {t_std:.0f} | {t_learn:.0f} |",
              flush=True)  # fmt: skip
    median = statistics.median(s for s, _ in shares)
    worst, worst_seed = max(shares)
    print(f"\nduplicates learn/standard: median {median:.0%}, worst {worst:.0%} (seed "
          f"{worst_seed}: replay with dustless testweb --profile real --seed {worst_seed} "
          f"--sites {args.sites} --pages-per-site {args.pages_per_site})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
