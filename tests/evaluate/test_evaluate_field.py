"""The field findings, reproduced on the test web and judged by its truth.

A ``field`` web (dirty's personalities, www twins whose links name their own host, dynamic
pages, a templated site, Apache's case-respelled 404s, an unrelated www site) is crawled
with the ``standard`` policy; then ``evaluate`` must tell the truth's story per host, on
near-duplicate content, and its site policy must make a crawl that loses nothing.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dustless.analysis._near import near_classes
from dustless.analysis._truth import parse_truth
from dustless.cli.main import main
from dustless.crawl import run_crawl
from dustless.crawl.config import CrawlConfig
from dustless.extract import content_fingerprint, similarity
from testweb_fixture import LoopbackClient, start_testweb

pytestmark = pytest.mark.slow


def _resolve(web: Any) -> tuple[str, ...]:
    args = web.resolve_args
    return tuple(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--resolve")


def _crawl(web: Any, out: Path, rules: tuple[str, ...] = ()) -> Path:
    config = CrawlConfig(
        seeds=tuple(web.seeds),
        resolve=_resolve(web),
        policy="standard",
        delay=0.0,
        delay_factor=0.0,
        concurrency=16,
        progress=False,
        rules=rules,
    )
    assert run_crawl(config, out).finished
    return out


@pytest.fixture(scope="module")
def field(
    _testweb_pool: dict[tuple[Any, ...], Any], tmp_path_factory: pytest.TempPathFactory
) -> SimpleNamespace:
    tmp = tmp_path_factory.mktemp("field")
    web = start_testweb(tmp / "web", profile="field", sites=7, pages_per_site=30)
    _testweb_pool[("field-module", str(tmp))] = web  # stopped at the end of the session
    std = _crawl(web, tmp / "standard")
    return SimpleNamespace(web=web, std=std, tmp=tmp, truth=str(web.truth_path))


def _name(web: Any, host: str) -> str:
    return next(name for name, info in web.sites.items() if info["hosts"][0] == host)


def _evaluate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["evaluate", *args, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _host_rows(data: dict[str, Any], host: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["factor"], r["method"]): r for r in data["host_rows"] if r["host"] == host}


def _resources(crawl: Path, truth: dict[str, str | None]) -> tuple[set[str], int]:
    """The truth's resources a crawl downloaded, and its duplicate document downloads."""
    db = sqlite3.connect(crawl / "crawl.db")
    rows = db.execute(
        "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
        "WHERE f.status BETWEEN 200 AND 299 AND f.state IN ('OK', 'code')"
    ).fetchall()
    db.close()
    rids = [truth.get(url.split("#")[0]) for (url,) in rows]
    found = [r for r in rids if r is not None]
    return set(found), len(found) - len(set(found))


def test_per_factor_redundancy_matches_the_truth_on_alias_and_dynamic_sites(
    field: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    estimate = _evaluate(capsys, str(field.std))
    truth = _evaluate(capsys, str(field.std), "--truth", field.truth)
    assert estimate["evaluation"]["identity"] == "content"
    assert truth["evaluation"]["identity"] == "truth"
    web = field.web
    hosts = [web.site("iis", www="alias-links"), web.site("dynamic")]
    hosts += ["www." + h for h in hosts]
    hosts = [f"{h}:{web.port}" for h in hosts]  # a host as every command names it
    compared = 0
    for host in hosts:
        est, tru = _host_rows(estimate, host), _host_rows(truth, host)
        for key, t in tru.items():
            if t["sets"] == 0:
                continue
            assert abs(est[key]["redundancy_rate"] - t["redundancy_rate"]) <= 0.05, (host, key)
            compared += 1
    assert compared >= 10
    # The www twins are one site: the truth and the near estimate say so, not SHA-1 (finding 2).
    alias = f"{web.site('iis', www='alias-links')}:{web.port}"
    assert _host_rows(truth, alias)["www", "none"]["redundancy_rate"] == pytest.approx(0.5)
    assert _host_rows(estimate, alias)["www", "none"]["redundancy_rate"] == pytest.approx(0.5)
    exact = _evaluate(capsys, str(field.std), "--content", "exact", "--truth", field.truth)
    assert _host_rows(exact, alias)["www", "none"]["redundancy_rate"] == pytest.approx(0.5)
    blind = _evaluate(capsys, str(field.std), "--content", "exact")
    assert _host_rows(blind, alias)["www", "none"]["redundancy_rate"] == 0.0
    # With the truth, an exact estimate that far off is flagged; the near one is not.
    assert truth["disagreements"] == []
    flagged = {(d["host"], d["factor"]) for d in exact["disagreements"]}
    assert (alias, "www") in flagged


def test_no_templated_article_is_merged_and_dynamic_repeats_are_one_document(
    field: SimpleNamespace,
) -> None:
    truth = parse_truth(Path(field.truth).read_text().splitlines(keepends=True))
    db = sqlite3.connect(field.std / "crawl.db")
    rows = db.execute(
        "SELECT u.url, f.content_sha1, f.content_fp FROM fetches f JOIN urls u "
        "ON u.id = f.url_id WHERE f.status BETWEEN 200 AND 299 AND f.state = 'OK' ORDER BY f.id"
    ).fetchall()
    db.close()
    fps = {sha: fp for _, sha, fp in rows if fp is not None}
    classes = near_classes(fps)
    web = field.web
    templated, dynamic = web.site("templated"), web.site("dynamic")
    by_rid: dict[str, set[str]] = defaultdict(set)
    for url, sha, _ in rows:
        rid = truth.get(url)
        if rid is not None:
            by_rid[rid].add(classes.get(sha, sha))
    articles = {r: c for r, c in by_rid.items() if r.startswith(_name(web, templated) + ":")}
    assert len(articles) >= 25
    owner = Counter(c for cs in articles.values() for c in cs)
    assert all(n == 1 for n in owner.values())  # 0 false near-duplicates
    dyn = {r: c for r, c in by_rid.items() if r.startswith(_name(web, dynamic) + ":")}
    repeated = [r for r, c in dyn.items() if sum(1 for u in truth if truth[u] == r) > 1]
    assert len(repeated) >= 10
    assert all(len(dyn[r]) == 1 for r in repeated)


async def test_at_least_95_percent_of_a_dynamic_pages_repeats_are_recognised(
    field: SimpleNamespace,
) -> None:
    web = field.web
    host = web.site("dynamic")
    urls = [web.url(host, "/"), web.url("www." + host, "/")]
    async with LoopbackClient() as client:
        bodies = [(await client.get(urls[i % 2])).body for i in range(60)]
    assert len(set(bodies)) == 60  # every request has other bytes
    fps = [content_fingerprint(b, "text/html") for b in bodies]
    first = fps[0]
    assert first is not None
    same = sum(1 for fp in fps[1:] if fp is not None and similarity(first, fp) >= 0.8)
    assert same / (len(fps) - 1) >= 0.95
    pairs = list(itertools.combinations([f for f in fps if f is not None], 2))
    assert sum(similarity(a, b) >= 0.8 for a, b in pairs) / len(pairs) >= 0.95


def test_the_site_policy_crawl_keeps_every_resource_and_few_duplicates(
    field: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = field.tmp / "site-policy.xml"
    assert main(["evaluate", str(field.std), "--max-loss", "0.01", "--rules-out", str(policy)]) == 0
    captured = capsys.readouterr()
    assert "wrote" in captured.err
    xml = policy.read_text()
    web = field.web
    iis, apache = web.site("iis", www="alias-links"), web.site("apache")
    dyn, other = web.site("dynamic"), web.site("php", www="different")
    # Identities keep the port (the host as every command names it); redirects name a host.
    port = f":{web.port}"
    sites = {
        m.split('"')[1]: block
        for block in xml.split("<site ")[1:]
        for m in [block[block.index("<identity value=") :]]
    }
    assert 'step="lowercase-path"' in sites[iis + port]
    assert apache + port not in sites or 'step="lowercase-path"' not in sites[apache + port]
    # The alias twins fold into one host; the unrelated www site does not.
    assert f'hostRedirect to="{iis}"' in sites["www." + iis + port]
    assert f'hostRedirect to="{dyn}"' in sites["www." + dyn + port]
    assert "www." + other + port not in sites
    assert "hostRedirect" not in sites.get(other + port, "")

    ruled = _crawl(web, field.tmp / "site-policy", rules=(str(policy),))
    truth = parse_truth(Path(field.truth).read_text().splitlines(keepends=True))
    std_resources, std_dups = _resources(field.std, truth)
    got, dups = _resources(ruled, truth)
    assert len(got & std_resources) >= 0.99 * len(std_resources)
    assert std_dups > 100
    assert dups <= 0.40 * std_dups


def test_by_host_text_fits_100_columns_and_lists_hosts(
    field: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", str(field.std), "--by-host", "--truth", field.truth]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert f"Host {field.web.site('iis', www='alias-links')}" in out
    assert "site policy (per host" in out
    assert "Against the truth" in out


def test_rules_learn_learns_the_alias_and_rejects_the_unrelated_www_site(
    field: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    out = field.tmp / "learned.xml"
    assert main(["rules", "learn", str(field.std), "-o", str(out), "-v"]) == 0
    text = capsys.readouterr().out
    xml = out.read_text()
    web = field.web
    iis, other = web.site("iis", www="alias-links"), web.site("php", www="different")
    assert f'<identity value="{iis}"/>' in xml or f'<identity value="www.{iis}"/>' in xml
    assert f'hostRedirect to="www.{iis}"' in xml or f'hostRedirect to="{iis}"' in xml
    assert f"rejected www.{other}: host → {other}" in text
    assert f'hostRedirect to="{other}"' not in xml
    # On exact content the twins look like different sites (the field finding).
    assert main(["rules", "learn", str(field.std), "-o", "-", "--content", "exact", "-v"]) == 0
    exact = capsys.readouterr()
    assert "a different site" in exact.err
    assert iis in exact.err


def test_stats_counts_distinct_documents_as_the_truth_does(
    field: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = parse_truth(Path(field.truth).read_text().splitlines(keepends=True))
    resources, _ = _resources(field.std, truth)
    assert main(["stats", str(field.std), "--json"]) == 0
    near = json.loads(capsys.readouterr().out)
    assert main(["stats", str(field.std), "--json", "--content", "exact"]) == 0
    exact = json.loads(capsys.readouterr().out)
    assert near["content"] == "near"
    assert near["distinct_documents"] == len(resources)
    assert exact["distinct_documents"] > near["distinct_documents"]
    assert near["documents"] == exact["documents"]
    assert main(["stats", str(field.std)]) == 0
    assert "distinct (near-duplicate text" in capsys.readouterr().out


def test_a_truncated_fetch_has_no_content_identity(field: SimpleNamespace) -> None:
    web = field.web
    config = CrawlConfig(
        seeds=(web.url(web.site("dynamic"), "/"),),
        resolve=_resolve(web),
        policy="standard",
        delay=0.0,
        delay_factor=0.0,
        progress=False,
        max_bytes=1500,  # the dynamic site's 200-word pages are larger: tooBig
        max_pages=20,
    )
    out = field.tmp / "truncated"
    assert run_crawl(config, out).finished
    db = sqlite3.connect(out / "crawl.db")
    rows = db.execute("SELECT state, content_sha1, content_fp, revisit_of FROM fetches").fetchall()
    db.close()
    truncated = [r for r in rows if r[0] == "tooBig"]
    assert truncated
    assert all(sha is None and fp is None for _, sha, fp, _ in truncated)
    assert all(fp is not None for state, _, fp, again in rows if state == "OK" and again is None)
