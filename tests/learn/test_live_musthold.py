"""Learning while crawling, judged by the test web's truth (the ``canonical`` profile: dirty's
sites declaring their canonical URLs, plus sites whose declarations are wrong — every page
canonical to the home page, to a 404, to another site, pagination whose canonical drops
``?page=``).

A ``--learn`` crawl with ``--policy standard`` must fetch at most a quarter of the duplicate
documents a plain ``standard`` crawl fetches, reach every resource that crawl reaches, merge
no two resources with the rules it ends with, and write rules a later crawl reuses.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dustless.cli.main import main
from dustless.crawl import run_crawl
from dustless.crawl.config import CrawlConfig
from dustless.rules import load_script
from dustless.testweb import read_truth
from dustless.url import Normalizer
from testweb_fixture import start_testweb

pytestmark = pytest.mark.slow

MISCONFIGURED = ("canon-home.test", "canon-missing.test", "canon-offsite.test", "canon-paging.test")


def _resolve(web: Any) -> tuple[str, ...]:
    args = web.resolve_args
    return tuple(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--resolve")


def _crawl(web: Any, out: Path, **options: Any) -> Path:
    config = CrawlConfig(
        seeds=tuple(web.seeds),
        resolve=_resolve(web),
        policy="standard",
        delay=0.0,
        delay_factor=0.0,
        progress=False,
        **options,
    )
    assert run_crawl(config, out).finished
    return out


def _documents(out: Path, truth: dict[str, str]) -> tuple[set[str], int]:
    """The truth's resources a crawl downloaded, and its duplicate document downloads."""
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.status BETWEEN 200 AND 299 AND f.state IN ('OK', 'code')"
        ).fetchall()
    rids = [truth[url] for (url,) in rows if url in truth]
    return set(rids), len(rids) - len(set(rids))


@pytest.fixture(scope="module")
def crawls(
    _testweb_pool: dict[tuple[Any, ...], Any], tmp_path_factory: pytest.TempPathFactory
) -> SimpleNamespace:
    tmp = tmp_path_factory.mktemp("canonical")
    web = start_testweb(tmp / "web", profile="canonical", sites=12, pages_per_site=30)
    _testweb_pool[("canonical-module", str(tmp))] = web  # stopped at the end of the session
    std = _crawl(web, tmp / "standard")
    learned = _crawl(web, tmp / "learn", learn=True)
    truth = {r.url: r.rid for r in read_truth(Path(web.truth_path)) if r.status == 200}
    return SimpleNamespace(web=web, tmp=tmp, std=std, learned=learned, truth=truth)


def test_a_learning_crawl_fetches_a_quarter_of_the_duplicates_and_loses_nothing(crawls):
    std, std_dups = _documents(crawls.std, crawls.truth)
    got, dups = _documents(crawls.learned, crawls.truth)
    print(
        f"\nstandard: {len(std)} resources, {std_dups} duplicates; --learn: {len(got)} "
        f"resources, {dups} duplicates ({dups / std_dups:.1%})"
    )
    assert std_dups > 300  # the web has duplicates to avoid
    assert dups <= 0.25 * std_dups
    assert std <= got  # every resource a standard crawl reaches (coverage loss 0)
    with sqlite3.connect(crawls.learned / "crawl.db") as db:
        (rules,) = db.execute(
            "SELECT count(*) FROM learned_rules WHERE retracted_at IS NULL"
        ).fetchone()
        (merged,) = db.execute("SELECT count(*) FROM urls WHERE state = 'merged'").fetchone()
    assert rules >= 20
    assert merged > 0


def _wrong_merges(crawls: SimpleNamespace, hosts: set[str] | None = None) -> list[str]:
    """Pairs of different resources that the rules in force at the end make one identity."""
    rules = load_script(crawls.learned / "learned-rules.xml").rules
    std = Normalizer("standard").normalize
    groups: dict[str, set[str]] = defaultdict(set)
    for url, rid in crawls.truth.items():
        host = url.split("/")[2].split(":")[0]
        if hosts is None or host in hosts:
            groups[rules.apply(std(url))].add(rid)
    return [f"{key}: {sorted(rids)}" for key, rids in groups.items() if len(rids) > 1]


def test_misconfigured_canonical_sites_cause_no_wrong_merge_and_lose_nothing(crawls):
    assert _wrong_merges(crawls, set(MISCONFIGURED)) == []
    std, _ = _documents(crawls.std, crawls.truth)
    got, _ = _documents(crawls.learned, crawls.truth)
    names = {"canon-home", "canon-missing", "canon-offsite", "paging"}  # their resource ids
    assert {r for r in std - got if r.split(":")[0] in names} == set()
    with sqlite3.connect(crawls.learned / "crawl.db") as db:
        rows = db.execute("SELECT host, spec, evidence FROM learned_rules").fetchall()
    for host, spec, evidence in rows:
        if host.split(":")[0] in MISCONFIGURED:
            # Their declarations were refuted by what the crawl fetched: never trusted.
            assert "declared canonical" not in evidence, (host, spec)
            assert '"page"' not in spec, (host, spec)


def test_the_rules_in_force_merge_no_two_resources_anywhere(crawls):
    assert _wrong_merges(crawls) == []


def test_the_learned_rules_file_is_read_by_crawl_rules(crawls):
    path = crawls.learned / "learned-rules.xml"
    rules = load_script(path).rules
    with sqlite3.connect(crawls.learned / "crawl.db") as db:
        (active,) = db.execute(
            "SELECT count(*) FROM learned_rules WHERE retracted_at IS NULL"
        ).fetchone()
    assert sum(len(s.rules) for s in rules.sites) == active
    again = _crawl(crawls.web, crawls.tmp / "with-rules", rules=(str(path),))
    std, std_dups = _documents(crawls.std, crawls.truth)
    got, dups = _documents(again, crawls.truth)
    assert std <= got
    assert dups <= 0.25 * std_dups


def test_stats_and_evaluate_report_the_canonical_declarations(crawls, capsys):
    assert main(["stats", str(crawls.std), "--json"]) == 0
    canonicals = json.loads(capsys.readouterr().out)["canonicals"]
    assert canonicals["declaring"] > 500
    assert canonicals["other_host"] > 0  # canon-offsite
    assert canonicals["non_200"] > 0  # canon-missing's 404s
    assert main(["stats", str(crawls.learned)]) == 0
    text = capsys.readouterr().out
    assert "Rules learned while crawling" in text
    assert "Canonical links (RFC 6596)" in text
    # Every row of the rules table fills its columns, "checked" included (a value was missing).
    table = text.split("Rules learned while crawling", 1)[1].split("\n\n", 1)[0].splitlines()
    header, rule = table[1], next(line for line in table[3:] if "in force" in line)
    assert header.split()[-2:] == ["checked", "state"]
    assert len(re.split(r"\s{2,}", rule.strip())) == len(re.split(r"\s{2,}", header.strip())), rule
    assert main(["evaluate", str(crawls.std), "--json"]) == 0
    rows = {(r["factor"], r["method"]): r for r in json.loads(capsys.readouterr().out)["canonical"]}
    tracking = rows["tracking-params", "remove"]
    assert tracking["merged"] == tracking["declared_same"] > 0
    # Apache's case twins declare themselves apart: lowercasing contradicts them.
    case = rows["path-case", "lowercase"]
    assert case["declared_apart"] > case["kept_apart"]
    assert rows["path-case", "none"]["kept_apart"] == case["declared_apart"]
    assert main(["rules", "show", str(crawls.learned)]) == 0
    shown = capsys.readouterr().out
    assert "rules in force" in shown
    assert "learned at" in shown
