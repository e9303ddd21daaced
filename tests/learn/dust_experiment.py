"""What learned rules must achieve: crawl, learn, crawl again with the rules; the truth judges.

Used by ``test_learn_musthold.py`` and runnable by hand to print the figures::

    .venv/bin/python tests/learn/dust_experiment.py [LEARN OPTIONS]   # e.g. --no-redirects

The second crawl is ``dustless crawl --rules FILE``: the learned rules join the ``site-rules``
step of the policy ``standard`` and merge identities (``dustless.crawl.scripted``).
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def crawl_args(seeds: list[str], out: Path, resolve_args: list[str]) -> list[str]:
    return [
        "crawl",
        *seeds,
        "--out",
        str(out),
        "--policy",
        "standard",
        *resolve_args,
        "--allow-private",
        "--delay",
        "0",
        "--delay-factor",
        "0",
        "--quiet",
    ]


def crawl(seeds: list[str], out: Path, resolve_args: list[str], rules: Path | None = None) -> None:
    args = crawl_args(seeds, out, resolve_args)
    if rules is not None:
        args += ["--rules", str(rules)]
    subprocess.run(
        [sys.executable, "-m", "dustless", *args], check=True, timeout=300, capture_output=True
    )


def crawl_rules(crawl_dir: Path) -> tuple[str, ...]:
    """The rule files the crawl's batch was run with (its stored ``CrawlConfig``)."""
    from dustless.crawl import CrawlConfig
    from dustless.store import SQLiteStore

    with SQLiteStore(crawl_dir) as store:
        batches = store.batches()
    return CrawlConfig.from_json(batches[0].config).rules


@dataclass(frozen=True)
class CrawlFigures:
    documents: int  # 2xx downloads with a payload
    resources: int  # distinct truth resource-ids among them
    duplicates: int  # documents - resources: downloads of a resource already downloaded
    distinct_payloads: int
    unknown: int  # documents whose URL the truth file does not know
    resource_ids: frozenset[str]


def documents(crawl_dir: Path) -> list[tuple[str, str]]:
    from dustless.analysis import read_observations

    return [
        (o.url, o.sha1)
        for o in read_observations(crawl_dir)
        if o.sha1 is not None and o.status is not None and 200 <= o.status < 300
    ]


def truth_map(truth_path: Path) -> dict[str, str]:
    from dustless.testweb import read_truth

    return {r.url: r.rid for r in read_truth(Path(truth_path)) if r.status == 200}


def figures(crawl_dir: Path, truth: dict[str, str]) -> CrawlFigures:
    docs = documents(crawl_dir)
    rids = [truth.get(url) for url, _ in docs]
    known = [r for r in rids if r is not None]
    return CrawlFigures(
        documents=len(docs),
        resources=len(set(known)),
        duplicates=len(known) - len(set(known)),
        distinct_payloads=len({s for _, s in docs}),
        unknown=len(rids) - len(known),
        resource_ids=frozenset(known),
    )


def false_merges(crawl_dir: Path, rules_path: Path, truth: dict[str, str]) -> tuple[int, int]:
    """(pairs of crawl-1 documents the rules merge, of which different resources by truth)."""
    from dustless.rules import load_script

    rules = load_script(rules_path).rules
    groups: dict[str, Counter[str]] = {}
    for url, _ in documents(crawl_dir):
        rid = truth.get(url)
        if rid is not None:
            groups.setdefault(rules.apply(url), Counter())[rid] += 1
    pairs = wrong = 0
    for counts in groups.values():
        n = sum(counts.values())
        same = sum(c * (c - 1) // 2 for c in counts.values())
        pairs += n * (n - 1) // 2
        wrong += n * (n - 1) // 2 - same
    return pairs, wrong


@dataclass(frozen=True)
class Outcome:
    first: CrawlFigures
    second: CrawlFigures
    merged_pairs: int
    false_merged_pairs: int

    @property
    def duplicate_reduction(self) -> float:
        return 1 - self.second.duplicates / self.first.duplicates

    @property
    def coverage_loss(self) -> float:
        """Resources the first crawl downloaded that the second one did not reach."""
        lost = self.first.resource_ids - self.second.resource_ids
        return len(lost) / len(self.first.resource_ids)

    @property
    def false_merge_rate(self) -> float:
        return self.false_merged_pairs / self.merged_pairs if self.merged_pairs else 0.0

    def lines(self) -> list[str]:
        f, s = self.first, self.second
        return [
            f"crawl 1 (standard):       {f.documents} documents, {f.resources} resources, "
            f"{f.duplicates} duplicates ({f.distinct_payloads} distinct payloads)",
            f"crawl 2 (learned rules):  {s.documents} documents, {s.resources} resources, "
            f"{s.duplicates} duplicates ({s.distinct_payloads} distinct payloads)",
            f"duplicate reduction:      {self.duplicate_reduction:.1%}",
            f"coverage loss:            {self.coverage_loss:.2%} "
            f"({len(f.resource_ids - s.resource_ids)} of {f.resources} resources)",
            f"false merges (truth):     {self.false_merged_pairs} of {self.merged_pairs} "
            f"merged pairs = {self.false_merge_rate:.2%}",
        ]


def learn(first: Path, rules: Path, *options: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "dustless",
            "rules",
            "learn",
            str(first),
            "-o",
            str(rules),
            *options,
        ],
        check=True,
        timeout=120,
        capture_output=True,
    )


def judge(first: Path, second: Path, rules: Path, truth_path: Path) -> Outcome:
    truth = truth_map(truth_path)
    pairs, wrong = false_merges(first, rules, truth)
    return Outcome(figures(first, truth), figures(second, truth), pairs, wrong)


def run(
    seeds: list[str],
    resolve_args: list[str],
    truth_path: Path,
    work: Path,
    *learn_options: str,
) -> Outcome:
    first, second, rules = work / "crawl1", work / "crawl2", work / "rules.xml"
    crawl(seeds, first, resolve_args)
    learn(first, rules, *learn_options)
    crawl(seeds, second, resolve_args, rules)
    return judge(first, second, rules, truth_path)


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(ROOT / "tests"))
    from testweb_fixture import start_testweb  # type: ignore[import-not-found]

    with tempfile.TemporaryDirectory() as tmp:
        web = start_testweb(Path(tmp), profile="dirty")
        try:
            outcome = run(web.seeds, web.resolve_args, web.truth_path, Path(tmp), *sys.argv[1:])
        finally:
            web.stop()
        print("\n".join(outcome.lines()))
