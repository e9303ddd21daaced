"""The variant factors of ``evaluate`` on URL lists (issue 25): printer, mobile and AMP
parameters, paths and hosts, the query form of a page, the crawl's own evidence, the
composite form the unexplained line merges with, and soft 404s read as no document."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dustless.analysis._evaluate import Observations
from dustless.analysis._factors import build_factors, composite_key
from dustless.analysis._unexplained import SOFT404_PATHS, unexplained, without_soft404
from dustless.analysis._variants import (
    CrawlEvidence,
    crawl_evidence,
    query_to_path_method,
    remove_variant_host,
    remove_variant_path,
    variant_params_method,
)

H = "http://a.test"


def _factor(name: str, evidence: CrawlEvidence | None = None):  # type: ignore[no-untyped-def]
    return next(f for f in build_factors(evidence=evidence) if f.name == name)


@pytest.mark.parametrize(
    ("url", "form"),
    [
        (f"{H}/a.html?print=1", f"{H}/a.html"),
        (f"{H}/a.html?format=print&x=1", f"{H}/a.html?x=1"),
        (f"{H}/a.html?x=1&view=print", f"{H}/a.html?x=1"),
        (f"{H}/a.html?output=print", f"{H}/a.html"),
        (f"{H}/a.html?mobile=1", f"{H}/a.html"),
        (f"{H}/a.html?m=1", f"{H}/a.html"),
        (f"{H}/a.html?device=mobile", f"{H}/a.html"),
        (f"{H}/a.html?amp=1", f"{H}/a.html"),
        (f"{H}/a.html?outputType=amp", f"{H}/a.html"),
        # a view or a format that is no template variant stays: another factor's, or none
        (f"{H}/a.html?view=grid", f"{H}/a.html?view=grid"),
        (f"{H}/a.html?format=pdf", f"{H}/a.html?format=pdf"),
        (f"{H}/a.html?m=march", f"{H}/a.html?m=march"),
        (f"{H}/a.html", f"{H}/a.html"),
    ],
)
def test_variant_params_by_name_and_value(url: str, form: str) -> None:
    assert variant_params_method(CrawlEvidence())(url) == form
    assert _factor("variant-params").candidate_key()(url) == form


@pytest.mark.parametrize(
    ("url", "form"),
    [
        (f"{H}/print/doc/a.html", f"{H}/doc/a.html"),
        (f"{H}/amp/doc/a.html?x=1", f"{H}/doc/a.html?x=1"),
        (f"{H}/mobile/a.html", f"{H}/a.html"),
        (f"{H}/m/a.html", f"{H}/a.html"),
        (f"{H}/print/", f"{H}/print/"),  # the prefix alone is a page of its own
        (f"{H}/printing/a.html", f"{H}/printing/a.html"),
        (f"{H}/doc/print/a.html", f"{H}/doc/print/a.html"),  # a prefix only
        (f"{H}/amp/print/a.html", f"{H}/a.html"),
        (f"{H}/print/print/", f"{H}/print/"),
    ],
)
def test_variant_paths(url: str, form: str) -> None:
    assert remove_variant_path(url) == form


@pytest.mark.parametrize(
    ("url", "form"),
    [
        ("http://m.a.test:8080/x.html", "http://a.test:8080/x.html"),
        ("http://mobile.a.test/", "http://a.test/"),
        ("http://amp.a.test/x?y=1", "http://a.test/x?y=1"),
        ("http://print.a.test/x", "http://a.test/x"),
        ("http://m.test/x", "http://m.test/x"),  # nothing left of a domain
        ("http://www.a.test/x", "http://www.a.test/x"),  # www is a factor of its own
        ("http://mx.a.test/x", "http://mx.a.test/x"),
    ],
)
def test_variant_hosts(url: str, form: str) -> None:
    assert remove_variant_host(url) == form


def test_query_to_path_only_where_the_crawl_has_both_forms() -> None:
    outcome: dict[str, str | None] = {
        f"{H}/doc/a.html": "A",
        f"{H}/index.php?page=doc/a.html": "A",
        f"{H}/index.php?page=doc/b.html&x=1": "B",
        "http://b.test/index.php?page=doc/a.html": "C",  # b.test never shows the path form
    }
    ev = crawl_evidence(outcome)
    assert ev.query_forms == {"a.test": frozenset({("/index.php", "page")})}
    rewrite = query_to_path_method(ev)
    assert rewrite(f"{H}/index.php?page=doc/a.html") == f"{H}/doc/a.html"
    assert rewrite(f"{H}/index.php?page=doc/b.html&x=1") == f"{H}/doc/b.html?x=1"
    # the session in the script's path goes with the query form
    assert rewrite(f"{H}/index.php;jsessionid=AB12?page=doc/a.html") == f"{H}/doc/a.html"
    assert rewrite("http://b.test/index.php?page=doc/a.html") == (
        "http://b.test/index.php?page=doc/a.html"
    )
    assert rewrite(f"{H}/other.php?page=doc/a.html") == f"{H}/other.php?page=doc/a.html"


def test_parameters_the_crawl_shows_irrelevant() -> None:
    outcome: dict[str, str | None] = {
        f"{H}/a.html": "A",
        f"{H}/a.html?src=1&tab=2": "A",
        f"{H}/b/": "B",
        f"{H}/b/index.html?tab=3&src=4": "B",
        f"{H}/c.html;jsessionid=FF?tab=1": "C",
        f"{H}/c.html;jsessionid=EE": "C",
        # `page` changes the document: never irrelevant
        f"{H}/list": "L1",
        f"{H}/list?page=2": "L2",
        f"{H}/list?page=3": "L3",
        f"{H}/d.html": "D",
        f"{H}/d.html?page=2": "D2",
    }
    ev = crawl_evidence(outcome)
    assert ev.params == {"a.test": frozenset({"src", "tab"})}
    key = _factor("variant-params", ev).candidate_key()
    assert key(f"{H}/a.html?tab=9&x=1") == f"{H}/a.html?x=1"
    assert key(f"{H}/list?page=2") == f"{H}/list?page=2"
    assert key("http://b.test/a.html?tab=9") == "http://b.test/a.html?tab=9"  # host's own


def test_one_path_that_answers_a_parameter_otherwise_is_no_veto() -> None:
    outcome: dict[str, str | None] = {f"{H}/search?tag=x": "S", f"{H}/search?tag=x&ref=1": "N"}
    for k in range(5):
        outcome[f"{H}/p{k}.html"] = f"P{k}"
        outcome[f"{H}/p{k}.html?ref={k}"] = f"P{k}"
    assert crawl_evidence(outcome).params == {"a.test": frozenset({"ref"})}
    outcome[f"{H}/p0.html?ref=9"] = "other"  # now seen both ways on p0: changed there
    outcome[f"{H}/q.html"] = "Q"
    outcome[f"{H}/q.html?ref=1"] = "R"
    assert crawl_evidence(outcome).params == {}


def test_one_sighting_is_no_evidence() -> None:
    outcome: dict[str, str | None] = {f"{H}/a.html": "A", f"{H}/a.html?tab=2": "A"}
    assert crawl_evidence(outcome).params == {}


def test_composite_key_relates_what_no_single_factor_does() -> None:
    seen: dict[str, str | None] = {
        f"{H}/d/": "A",
        f"{H}/d/?a=1&b=2": "A",
        f"{H}/e.html": "E",
        f"{H}/e.html?b=1&a=3": "E",
    }
    factors = build_factors(evidence=crawl_evidence(seen))
    key = composite_key(factors)
    forms = {
        key(u)
        for u in (
            f"{H}/d/",
            f"{H}/d/index.html?b=3&a=2",
            "http://m.a.test/print/d/;jsessionid=1F?utm_source=x",
            "http://www.a.test/d/index.html?print=1",
        )
    }
    assert len(forms) == 1
    assert key(f"{H}/e.html") != key(f"{H}/d/")


def _obs(outcome: dict[str, str | None]) -> Observations:
    return Observations(
        outcome=outcome,
        members=None,
        fragment_outcome={},
        fragment_members=None,
        downloaded=sum(h is not None for h in outcome.values()),
        probe_fetches=0,
        redirects={},
    )


def test_a_soft_404_read_from_content_is_no_document() -> None:
    broken = {f"{H}/gone/{i}.html": "NOTFOUND" for i in range(SOFT404_PATHS + 1)}
    spellings = 12
    outcome: dict[str, str | None] = {
        **broken,
        f"{H}/print/gone/0.html": "NOTFOUND",
        f"{H}/a.html": "A",
        f"{H}/a.html?print=1": "A",
        # a page with many unexplained parameter spellings is a page, not a soft 404
        **{f"{H}/p.html?zz={i}": "P" for i in range(spellings)},
        # a copy on another site, and on a third: one path a host, no soft 404
        "http://b.test/copy.html": "A",
        "http://c.test/copy.html": "A",
    }
    factors = build_factors()
    obs = without_soft404(_obs(outcome), composite_key(factors))
    assert all(obs.outcome[u] is None for u in broken)
    assert obs.outcome[f"{H}/print/gone/0.html"] is None
    assert obs.outcome[f"{H}/a.html"] == "A"
    assert obs.outcome["http://c.test/copy.html"] == "A"
    assert obs.outcome[f"{H}/p.html?zz=0"] == "P"
    assert obs.soft404_classes == 1
    assert obs.downloaded == 4 + spellings
    u = unexplained(obs, factors)
    assert u.soft404_classes == 1
    assert u.soft404_fetches == len(broken) + 1
    # The page's own spellings and the copies are unexplained duplicates; the soft 404's
    # are none.
    assert u.duplicates == 3 + spellings - 1
    assert u.unexplained == 2 + spellings - 1


def test_the_variant_rules_the_site_policy_writes_do_what_the_methods_do() -> None:
    from dustless.analysis._sitepolicy import _rule, variant_rules
    from dustless.rules import RuleSet, SiteScript

    outcome: dict[str, str | None] = {
        f"{H}/doc/a.html": "A",
        f"{H}/doc/a.html?print=1": "A",
        f"{H}/print/doc/a.html": "A",
        f"{H}/amp/print/doc/a.html": "A",
        "http://m.a.test/doc/a.html": "A",
        f"{H}/index.php?page=doc/a.html": "A",
        f"{H}/doc/b.html": "B",
        f"{H}/doc/b.html?tab=1": "B",
        f"{H}/doc/a.html?tab=2": "A",
    }
    ev = crawl_evidence(outcome)
    methods = {
        f.name: f.candidate_key()
        for f in build_factors(evidence=ev)
        if f.name in ("variant-params", "variant-paths", "variant-hosts", "query-to-path")
    }
    rules = variant_rules(outcome, methods, ev)
    assert {(r.host, r.factor, r.element, r.identity, r.name, r.to) for r in rules} == {
        ("a.test", "variant-params", "dropParam", "a.test", "print", ""),
        ("a.test", "variant-params", "dropParam", "a.test", "tab", ""),
        ("a.test", "variant-paths", "stripPrefix", "a.test", "/print/", ""),
        ("a.test", "variant-paths", "stripPrefix", "a.test", "/amp/print/", ""),
        ("a.test", "variant-hosts", "hostRedirect", "m.a.test", "", "a.test"),
        ("a.test", "query-to-path", "queryToPath", "a.test", "/index.php?page", "/{x}"),
    }
    by_identity: dict[str, list[object]] = {}
    for r in rules:
        by_identity.setdefault(r.identity, []).append(_rule(r, 1, 0.0))
    ruleset = RuleSet(
        tuple(SiteScript(f"t {h}", (h,), rules=tuple(rs)) for h, rs in by_identity.items())  # type: ignore[arg-type]
    )
    for url in outcome:
        assert ruleset.apply(url) in (f"{H}/doc/a.html", f"{H}/doc/b.html"), url
    # The query form keeps the page's other parameters (a substitution would have made
    # "/doc/a.html&x=1" of it); a prefix deeper in the path is left alone.
    assert ruleset.apply(f"{H}/index.php?page=doc/a.html&x=1") == f"{H}/doc/a.html?x=1"
    assert ruleset.apply(f"{H}/doc/print/c.html") == f"{H}/doc/print/c.html"


_SEGMENTS = st.sampled_from(["print", "amp", "m", "doc", "a.html", "index.php", "x;jsessionid=AB"])
_PARAMS = st.sampled_from(
    ["print=1", "view=print", "view=grid", "m=1", "page=doc/a.html", "tab=2", "utm_source=x", "q"]
)


@given(
    host=st.sampled_from(["a.test", "m.a.test", "www.a.test", "print.a.test"]),
    segments=st.lists(_SEGMENTS, max_size=4),
    params=st.lists(_PARAMS, max_size=4),
)
def test_every_variant_method_and_the_composite_form_are_idempotent(
    host: str, segments: list[str], params: list[str]
) -> None:
    url = f"http://{host}/" + "/".join(segments) + ("?" + "&".join(params) if params else "")
    ev = crawl_evidence({f"{H}/doc/a.html": "A", f"{H}/index.php?page=doc/a.html": "A"})
    factors = build_factors(evidence=ev)
    for f in factors:
        key = f.candidate_key()
        once = key(url)
        assert key(once) == once, (f.name, url)
    composite = composite_key(factors)
    assert composite(composite(url)) == composite(url)
