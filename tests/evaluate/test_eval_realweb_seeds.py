"""``evaluate`` on random seeds of the ``real`` test web, judged by each web's own truth (issue 25).

Each seed is a small real web of its own (``dustless testweb --profile real``: printer,
mobile and AMP variants, ``index.php?page=`` forms, sessions in the path, tracking and noise
parameters, sort/view links, ``www`` twins, soft 404s), crawled with ``--policy standard``.
Over every seed:

* the factors explain ≥ 90 % of the duplicate fetches (the truth's "unexplained" line);
* each factor's redundancy, read from near-duplicate content, is within ±0.05 of the truth's
  over all the seeds' sets (a few sets a seed make one seed's rate jump by 0.25 a set);
* the policy recommended from content at ``--max-loss 0.01`` loses ≤ 1 % by the truth.

Seeds are drawn per run; ``DUSTLESS_REALWEB_SEEDS=3,17`` replays some (a failure prints the
command).
"""

from __future__ import annotations

import os
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.support import require

from dustless.analysis._evaluate import evaluate_crawl
from dustless.analysis._truth import parse_truth
from dustless.crawl import run_crawl
from dustless.crawl.config import CrawlConfig
from dustless.store import open_crawl
from dustless.testweb._corpus import load_corpus
from testweb_fixture import start_testweb

pytestmark = pytest.mark.slow

SEEDS_ENV = "DUSTLESS_REALWEB_SEEDS"
SEEDS = 20
SITES, PAGES = 1, 12  # one small site a seed: 20 webs in about a minute on a loaded 2-core machine
EXPLAINED = 0.90
TOLERANCE = 0.05
MAX_LOSS = 0.01


def _seeds() -> list[int]:
    given = os.environ.get(SEEDS_ENV, "").strip()
    if given:
        return [int(s) for s in given.split(",") if s.strip()]
    return random.SystemRandom().sample(range(1, 100_000), SEEDS)


def _resolve(web: Any) -> tuple[str, ...]:
    args = web.resolve_args
    return tuple(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--resolve")


def _start(where: Path, seed: int) -> Any:
    return start_testweb(where, profile="real", seed=seed, sites=SITES, pages_per_site=PAGES)


#: (factor, method) -> [content downloads, content documents, truth downloads, truth documents]
Pooled = dict[tuple[str, str], list[int]]


def _check(out: Path, truth_path: Path, pooled: Pooled) -> list[str]:
    """What is wrong with this seed's evaluation (nothing: an empty list); its rows' counts
    are added to ``pooled``."""
    truth = parse_truth(truth_path.read_text(encoding="utf-8").splitlines())
    with open_crawl(out) as db:
        by_truth = evaluate_crawl(db, truth=truth, max_loss=MAX_LOSS)
        by_content = evaluate_crawl(db, max_loss=MAX_LOSS)
    problems = []
    u = by_truth.unexplained
    assert u is not None
    if u.unexplained > (1 - EXPLAINED) * u.duplicates:
        problems.append(
            f"unexplained {u.unexplained} of {u.duplicates} duplicate fetches; e.g. {u.examples}"
        )
    truth_rows = {(r.factor, r.method): r for r in by_truth.rows}
    for r in by_content.rows:
        t = truth_rows[r.factor, r.method]
        sums = pooled.setdefault((r.factor, r.method), [0, 0, 0, 0])
        for k, n in enumerate((r.downloads, r.unique_documents, t.downloads, t.unique_documents)):
            sums[k] += n
    for factor, method in by_content.recommendation.choices:
        loss = truth_rows[factor, method].coverage_loss_rate
        if loss > MAX_LOSS + 1e-12:
            problems.append(f"recommended {factor} {method} loses {loss:.3f} by the truth")
    return problems


def _rate(downloads: int, documents: int) -> float:
    return (downloads - documents) / downloads if downloads else 0.0


def _redundancy_problems(pooled: Pooled) -> list[str]:
    """Each factor's redundancy over all seeds' sets, by content against the truth (pooled:
    a factor with two sets on one seed moves its rate there by 0.25 a set)."""
    problems = []
    for (factor, method), (dc, uc, dt, ut) in pooled.items():
        content, true = _rate(dc, uc), _rate(dt, ut)
        if abs(content - true) > TOLERANCE + 1e-12:
            problems.append(
                f"{factor} {method}: redundancy {content:.3f} by content, {true:.3f} by the truth "
                f"({dc} and {dt} downloads in its sets)"
            )
    return problems


def test_factors_explain_the_real_webs_duplicates(tmp_path: Path) -> None:
    found = load_corpus()
    require(not found.missing, f"Debian documentation packages missing: {found.missing}")
    seeds = _seeds()
    print(f"real web seeds: {','.join(map(str, seeds))}")
    failures: list[str] = []
    pooled: Pooled = {}
    # The webs start in their own processes while the crawls run here, one web per seed (a
    # web's truth log must hold only what its own crawl asked for).
    with ThreadPoolExecutor(max_workers=3) as pool:
        webs = [pool.submit(_start, tmp_path / f"web{s}", s) for s in seeds]
        try:
            for seed, started in zip(seeds, webs, strict=True):
                web = started.result()
                out = tmp_path / f"crawl{seed}"
                config = CrawlConfig(
                    seeds=tuple(web.seeds),
                    resolve=_resolve(web),
                    policy="standard",
                    delay=0.0,
                    delay_factor=0.0,
                    concurrency=16,
                    progress=False,
                )
                try:
                    assert run_crawl(config, out).finished
                finally:
                    web.stop()
                failures += [f"seed {seed}: {p}" for p in _check(out, web.truth_path, pooled)]
        finally:
            for started in webs:
                started.result().stop()
    problems = [*failures, *(f"over all seeds: {p}" for p in _redundancy_problems(pooled))]
    for (factor, method), (dc, uc, dt, ut) in sorted(pooled.items()):
        if dt:
            print(f"  {factor} {method}: R {_rate(dc, uc):.3f} content, {_rate(dt, ut):.3f} truth")
    failed = sorted({int(f.split(":")[0].split()[1]) for f in failures}) if failures else seeds
    assert not problems, (
        "\n".join(problems)
        + f"\nreplay: {SEEDS_ENV}={','.join(map(str, failed))} .venv/bin/python -m pytest "
        "tests/evaluate/test_eval_realweb_seeds.py -x -q"
    )
