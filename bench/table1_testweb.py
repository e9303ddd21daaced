"""Table 1 of seed 000 next to dustless's measurement on the test web (the README's table).

Starts the test web (``field`` profile by default: dirty's personalities plus www twins whose
links name their own host, dynamic pages, a templated site), crawls it with policy
``standard`` (which keeps the spellings the paper's factors differ in apart), and runs
``dustless evaluate`` three ways: as the crawler fetches (near-duplicate content, the
default), with ``--fetch`` (the paper's reading: the normalized forms are requested), and with
``--truth`` (the truth's resources as the judge, wrong merges, and the rows where the content
estimate is off by more than 0.05). It then writes the per-host site policy
(``--rules-out``), crawls again with it (``crawl --rules``), and prints what that crawl
reached and fetched twice against the ``standard`` crawl, by the truth.

    .venv/bin/python bench/table1_testweb.py [--profile field] [--sites 7] [--pages-per-site 30]

Everything runs on 127.0.0.1 through the ``dustless`` command, as a user would run it.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from dustless.analysis import PAPER_TABLE_1
from dustless.analysis._truth import parse_truth

DUSTLESS = [sys.executable, "-m", "dustless"]


def _start_testweb(
    args: argparse.Namespace, truth: Path
) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [
            *DUSTLESS,
            "testweb",
            "--port",
            "0",
            "--profile",
            args.profile,
            "--seed",
            str(args.seed),
            "--sites",
            str(args.sites),
            "--pages-per-site",
            str(args.pages_per_site),
            "--truth",
            str(truth),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seeds: list[str] = []
    first = proc.stdout.readline()
    if not first.startswith("serving "):
        proc.kill()
        raise SystemExit(f"the test web did not start: {first!r}")
    # The listing ends with the seed lines; the server then serves until terminated.
    for line in proc.stdout:
        word, _, value = line.strip().partition(" ")
        if word == "seed":
            seeds.append(value)
        elif word != "host" and seeds:
            break
        if word == "seed" and len(seeds) == _seed_count(args):
            break
    return proc, seeds


def _seed_count(args: argparse.Namespace) -> int:
    """How many seed lines the server prints: the generated web's seeds (pure, no server)."""
    from dustless.testweb import Profile, WebConfig, build_web

    cfg = WebConfig(
        seed=args.seed,
        sites=args.sites,
        pages_per_site=args.pages_per_site,
        profile=Profile(args.profile),
    )
    return len(build_web(cfg).seeds)


def _dustless(*argv: str) -> str:
    return subprocess.run([*DUSTLESS, *argv], check=True, capture_output=True, text=True).stdout


def _crawl(seeds: list[str], out: Path, *extra: str) -> None:
    subprocess.run(
        [
            *DUSTLESS,
            "crawl",
            *seeds,
            "--out",
            str(out),
            "--policy",
            "standard",
            "--resolve",
            "*.test:127.0.0.1",
            "--resolve",
            "www.web.com:127.0.0.1",
            "--resolve",
            "shopping.naver.test:127.0.0.1",
            "--delay",
            "0.01",
            "--delay-factor",
            "0",
            "--quiet",
            *extra,
        ],
        check=True,
    )


def _resources(crawl: Path, truth: dict[str, str | None]) -> tuple[int, int]:
    """The truth's resources a crawl downloaded, and its duplicate document downloads."""
    db = sqlite3.connect(crawl / "crawl.db")
    rows = db.execute(
        "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
        "WHERE f.status BETWEEN 200 AND 299 AND f.state IN ('OK', 'code')"
    ).fetchall()
    db.close()
    found = [r for (url,) in rows if (r := truth.get(url)) is not None]
    return len(set(found)), len(found) - len(set(found))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="field", choices=("field", "dirty", "mixed"))
    parser.add_argument("--sites", type=int, default=7)
    parser.add_argument("--pages-per-site", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dustless-table1-"))
    truth, out, ruled = work / "truth.tsv", work / "crawl", work / "site-policy-crawl"
    policy = work / "site-policy.xml"
    proc, seeds = _start_testweb(args, truth)
    try:
        _crawl(seeds, out)
        crawler = json.loads(_dustless("evaluate", str(out), "--json"))
        judged = json.loads(_dustless("evaluate", str(out), "--truth", str(truth), "--json"))
        exact = json.loads(
            _dustless("evaluate", str(out), "--truth", str(truth), "--content", "exact", "--json")
        )
        _dustless("evaluate", str(out), "--rules-out", str(policy))
        paper_reading = json.loads(
            _dustless("evaluate", str(out), "--fetch", "--json", "--delay", "0.01")
        )
        _crawl(seeds, ruled, "--rules", str(policy))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    paper = {(p.factor, p.method): p for p in PAPER_TABLE_1}
    fetched = {(r["factor"], r["method"]): r for r in paper_reading["rows"]}
    true = {(r["factor"], r["method"]): r for r in judged["rows"]}
    details = {(d["factor"], d["method"]): d for d in judged["details"]}
    print(
        "| factor | method | paper R | paper L | R | L (crawler) | L (`--fetch`) "
        "| truth R | truth L | sets | wrong merges | wrong / merged |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    previous = None
    for row in crawler["rows"]:
        if row["sets"] == 0:
            continue  # no URLs differ in this factor on this web (e.g. fragments under standard)
        key = (row["factor"], row["method"])
        p = paper.get(key)
        factor = row["factor"] if row["factor"] != previous else ""
        previous = row["factor"]
        f, t, d = fetched[key], true[key], details[key]
        share = f"{d['wrong_merge_share']:.2f}" if d["merged_pairs"] else "–"
        print(
            f"| {factor} | {row['method']} | {p.redundancy_rate if p else '–'} | "
            f"{p.coverage_loss_rate if p else '–'} | {row['redundancy_rate']:.2f} | "
            f"{row['coverage_loss_rate']:.2f} | {f['coverage_loss_rate']:.2f} | "
            f"{t['redundancy_rate']:.2f} | {t['coverage_loss_rate']:.2f} | {row['sets']} | "
            f"{d['false_positives']} | {share} |"
        )
    ev = crawler["evaluation"]
    table = parse_truth(truth.read_text(encoding="utf-8").splitlines(keepends=True))
    std_res, std_dups = _resources(out, table)
    got_res, got_dups = _resources(ruled, table)
    per_host = "; ".join(
        f"{p_['host'].rsplit(':', 1)[0]}: " + ", ".join(f"{f} {m}" for f, m in p_["choices"])
        for p_ in crawler["site_policy"]
        if p_["choices"]
    )
    reached = "all" if got_res == std_res else f"{got_res:,} of the"
    # The README's paragraph under the table, figures and all (markdown, one line).
    print(
        f"\n{ev['urls']:,} URLs requested, {ev['downloaded']:,} with a document; `--fetch` "
        f"requested {paper_reading['evaluation']['probe_fetches']:,} normalized forms. Rows "
        f"where the near estimate and the truth differ by more than 0.05: "
        f"{len(judged['disagreements']) or 'none'} (with `--content exact`: "
        f"{len(exact['disagreements'])}, the `www` twins and dynamic pages). Over all hosts "
        f"`--max-loss 0.01` recommends `{crawler['recommended_policy']}`; per host "
        f"(`evaluate --rules-out`) it chooses {per_host}. A crawl with that site policy "
        f"(`evaluate --rules-out site-policy.xml`, then `crawl --rules site-policy.xml`) "
        f"reached {reached} {std_res:,} resources of the `standard` crawl and fetched "
        f"{got_dups:,} duplicate documents where it fetched {std_dups:,} "
        f"({got_dups / std_dups:.1%})."
    )
    print(f"work directory: {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
