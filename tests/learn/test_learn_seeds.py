"""``crawl --learn`` over many drawn ``real`` test webs: it loses nothing and merges no two
documents, whatever the seed draws (issue 25).

Each run draws ``SEEDS`` seeds at random (``DUSTLESS_SEEDS=3,17`` replays given ones); each is
a small ``real`` web (``dustless testweb --profile real``: www, mobile and printer twins, a
twin that differs in one subtree, wrong canonicals, …), crawled with ``--policy standard`` and
with ``--learn`` on top. By the web's truth, the learning crawl must reach every resource the
standard crawl reaches, and the rules it ends with must give no two resources one identity. A
failing seed is named in the message with the command that replays it.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from dustless.crawl import run_crawl
from dustless.crawl.config import CrawlConfig
from dustless.rules import load_script
from dustless.testweb import read_truth
from dustless.url import Normalizer
from testweb_fixture import start_testweb

pytestmark = pytest.mark.slow

SEEDS, SITES, PAGES = 20, 2, 8
# Seeds a run once found failing, run every time besides the drawn ones: 62063 lost the
# ``www`` twin's differing page to a mobile host aliased to ``www.`` instead of the main host;
# 57453 lost one in some runs to a link refused for its depth while a shorter path to it waited
# as its repeat (``tests/crawl/test_admission_depth.py``).
FOUND = (62063, 57453)


def _seeds() -> list[int]:
    given = os.environ.get("DUSTLESS_SEEDS", "").strip()
    if given:
        return [int(s) for s in given.replace(",", " ").split()]
    return [*FOUND, *random.SystemRandom().sample(range(1, 100_000), SEEDS)]


def _resolve(web: Any) -> tuple[str, ...]:
    args = web.resolve_args
    return tuple(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--resolve")


def _crawl(web: Any, out: Path, **options: Any) -> Path:
    config = CrawlConfig(
        seeds=tuple(web.seeds), resolve=_resolve(web), policy="standard", delay=0.0,
        delay_factor=0.0, progress=False, **options,
    )  # fmt: skip
    assert run_crawl(config, out).finished
    return out


def _reached(out: Path, truth: dict[str, str]) -> set[str]:
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.status BETWEEN 200 AND 299 AND f.state IN ('OK', 'code')"
        ).fetchall()
    return {truth[url] for (url,) in rows if url in truth}


def _one_seed(seed: int, tmp: Path) -> list[str]:
    """What went wrong on ``seed`` (nothing: an empty list)."""
    web = start_testweb(tmp / "web", profile="real", seed=seed, sites=SITES, pages_per_site=PAGES)
    try:
        std = _reached(_crawl(web, tmp / "std"), {})  # read after both crawls: the truth grows
        learned = _crawl(web, tmp / "learn", learn=True)
    finally:
        web.stop()
    truth = {r.url: r.rid for r in read_truth(Path(web.truth_path)) if r.kind == "doc"}
    std, got = _reached(tmp / "std", truth), _reached(learned, truth)
    problems = [f"lost {r}" for r in sorted(std - got)]
    rules = load_script(learned / "learned-rules.xml").rules
    norm = Normalizer("standard").normalize
    groups: dict[str, set[str]] = defaultdict(set)
    for url, rid in truth.items():
        groups[rules.apply(norm(url))].add(rid)
    problems += [f"merged {sorted(r)} as {k}" for k, r in groups.items() if len(r) > 1]
    return problems


# Drawn once per test process, at import; the tests are numbered, not named by seed, so that
# every process collects the same ones (pytest-xdist), and each seed is a test of its own —
# with its own timeout, so a loaded machine cannot push the whole draw past one test's.
_DRAWN = _seeds()


@pytest.mark.parametrize("index", range(len(_DRAWN)))
def test_learning_loses_nothing_and_merges_no_two_documents_on_many_seeds(
    index: int, tmp_path: Path
) -> None:
    seed = _DRAWN[index]
    problems = _one_seed(seed, tmp_path)
    assert not problems, (
        f"seed {seed}: {problems[:4]} (replay: DUSTLESS_SEEDS={seed} pytest {__file__}; or "
        f"dustless testweb --profile real --seed {seed} --sites {SITES} --pages-per-site {PAGES})"
    )
