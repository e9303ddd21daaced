"""Table 1 of seed 000 next to dustless's measurement on the test web (the README's table).

Starts the test web (``dirty`` profile), crawls it with policy ``standard`` (which keeps the
spellings the paper's factors differ in apart), runs ``dustless evaluate --fetch --truth`` (the
paper's reading: the normalized forms are requested, so coverage loss is measured) and prints
a Markdown table: the paper's redundancy R and coverage loss L beside ours, with the counts.

    .venv/bin/python bench/table1_testweb.py [--sites 12] [--pages-per-site 30] [--seed 1]

Everything runs on 127.0.0.1 through the ``dustless`` command, as a user would run it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from dustless.analysis import PAPER_TABLE_1

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
            "dirty",
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
        if word == "seed" and len(seeds) == args.sites:
            break
    return proc, seeds


def _truth_cells(detail: dict[str, object]) -> str:
    """Wrong merges, their share of all merges, wrong splits (pairs, by the truth file)."""
    share = f"{detail['wrong_merge_share']:.2f}" if detail["merged_pairs"] else "–"
    return f"{detail['false_positives']} | {share} | {detail['false_negatives']}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=12)
    parser.add_argument("--pages-per-site", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dustless-table1-"))
    truth, out = work / "truth.tsv", work / "crawl"
    proc, seeds = _start_testweb(args, truth)
    try:
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
                "--delay",
                "0.01",
                "--delay-factor",
                "0",
                "--quiet",
            ],
            check=True,
        )
        evaluated = subprocess.run(
            [
                *DUSTLESS,
                "evaluate",
                str(out),
                "--fetch",
                "--truth",
                str(truth),
                "--json",
                "--delay",
                "0.01",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    result = json.loads(evaluated.stdout)
    paper = {(p.factor, p.method): p for p in PAPER_TABLE_1}
    print(
        "| factor | method | paper R | paper L | dustless R | dustless L | candidate URLs "
        "| sets | requests | downloads | unique docs | wrong merges (pairs) | wrong / merged "
        "| wrong splits (pairs) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    previous = None
    details = {(d["factor"], d["method"]): d for d in result["details"]}
    for row in result["rows"]:
        if row["sets"] == 0:
            continue  # no URLs differ in this factor on this web (e.g. fragments under standard)
        p = paper.get((row["factor"], row["method"]))
        factor = row["factor"] if row["factor"] != previous else ""
        previous = row["factor"]
        loss = f"{row['coverage_loss_rate']:.2f}" + ("" if row["coverage_loss_measured"] else "*")
        print(
            f"| {factor} | {row['method']} | {p.redundancy_rate if p else '–'} | "
            f"{p.coverage_loss_rate if p else '–'} | {row['redundancy_rate']:.2f} | {loss} | "
            f"{row['candidate_urls']} | {row['sets']} | {row['requests']} | {row['downloads']} | "
            f"{row['unique_documents']} | {_truth_cells(details[row['factor'], row['method']])} |"
        )
    print(f"\nrecommended policy at --max-loss 0.01: `{result['recommended_policy']}`")
    print("(* an estimate: a normalized form that could not be requested counts as lost)")
    print(f"crawl directory: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
