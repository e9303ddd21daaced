"""Host aliases between any two hosts of a site (``m.``, ``print.``, ``amp.``, ``www.``), learned
by the live learner from equal pages and trusted cross-host canonicals — never both ways.

Pure tests with made-up pages, as in ``test_live_learner.py``; the crawl over real servers is
``test_learn_twin.py``, ``test_learn_mobile.py`` and ``test_learn_seeds.py``.
"""

from __future__ import annotations

import itertools

from dustless.rules import HostRedirect, LiveLearner, LiveRules, PageFacts, rule_spec
from dustless.rules._learn_live import site_of_authority

H, M, P, W = "http://a.test", "http://m.a.test", "http://print.a.test", "http://www.a.test"
_ids = itertools.count(1)


def page(key: str, content: str, canonical: str | None = None) -> PageFacts:
    return PageFacts(key, next(_ids), True, False, sha1=content, canonical=canonical)


def aliases(learner: LiveLearner) -> set[tuple[str, str]]:
    return {(h, r.to) for h, _, r in learner.active() if isinstance(r, HostRedirect)}


def test_the_mobile_and_printer_hosts_belong_to_the_site_of_the_main_host():
    assert site_of_authority("m.a.test:8080") == "a.test:8080"
    assert site_of_authority("print.a.test") == "a.test"
    assert site_of_authority("www.a.test") == "a.test"
    assert site_of_authority("m.test") == "m.test"  # a domain of its own, not a label
    assert site_of_authority("docs.a.test") == "docs.a.test"


def test_a_mobile_host_is_learned_an_alias_of_the_main_host_even_with_more_pages():
    learner = LiveLearner()
    facts = [page(M + f"/p{i}", f"P{i}") for i in range(6)]  # more pages on m.
    facts += [page(H + f"/p{i}", f"P{i}") for i in range(2)]
    learner.observe(facts)
    learner.learn()
    assert aliases(learner) == {("m.a.test", "a.test")}
    live = LiveRules()
    live.set(learner.ruleset)
    assert live.apply(M + "/p9") == H + "/p9"


def test_two_twins_alias_the_main_host_and_never_each_other():
    learner = LiveLearner()
    facts = [page(u + f"/p{i}", f"P{i}") for u in (M, P) for i in range(4)]
    learner.observe(facts)
    assert not learner.learn()  # m. and print. hold the same pages: neither is the site
    learner.observe([page(H + f"/p{i}", f"P{i}") for i in range(2)])
    learner.learn()
    assert aliases(learner) == {("m.a.test", "a.test"), ("print.a.test", "a.test")}


def test_trusted_cross_host_canonicals_hint_an_alias_and_wrong_ones_merge_nothing():
    learner = LiveLearner()
    # The main host's pages at their own canonical URLs: trusted declarations.
    facts = [page(H + f"/p{i}", f"P{i}", canonical=H + f"/p{i}") for i in range(2)]
    facts += [page(M + "/p0", "P0", canonical=H + "/p0")]
    # A section of the mobile host whose pages all declare the home page canonical.
    facts += [page(H + "/", "HOME", canonical=H + "/")]
    facts += [page(M + f"/w/q{i}", f"Q{i}", canonical=H + "/") for i in range(5)]
    learner.observe(facts)
    learner.learn()
    assert learner.trust("m.a.test")[1] == 5  # refuted by the home page fetched
    assert not aliases(learner)  # one fetched pair: not enough, and no claim counts
    learner.observe([page(M + "/p1", "P1", canonical=H + "/p1")])
    learner.learn()
    assert aliases(learner) == {("m.a.test", "a.test")}
    live = LiveRules()
    live.set(learner.ruleset)
    assert live.apply(M + "/w/q0") == H + "/w/q0"  # its own path, never the home page


def test_a_host_gets_one_alias_only():
    learner = LiveLearner()
    learner.observe([page(W + f"/p{i}", f"P{i}") for i in range(4)])
    learner.observe([page(M + f"/p{i}", f"P{i}") for i in range(2)])
    learner.learn()
    assert aliases(learner) == {("m.a.test", "www.a.test")}
    learner.observe([page(H + f"/p{i}", f"P{i}") for i in range(6)])
    learner.learn()
    found = aliases(learner)
    assert [to for h, to in found if h == "m.a.test"] == ["www.a.test"]  # not a second one


def test_an_alias_learned_in_both_orders_is_in_force_one_way_only():
    learner = LiveLearner()
    learner.observe([page(W + f"/p{i}", f"P{i}") for i in range(3)])
    learner.observe([page(H + f"/p{i}", f"P{i}") for i in range(2)])
    learner.learn()
    assert aliases(learner) == {("a.test", "www.a.test")}  # www has more pages
    # The other order, from another worker or an older crawl's DB: refused.
    back = HostRedirect("a.test")
    assert not learner.adopt("www.a.test", rule_spec(back), back, _evidence())
    # And the bare host gaining pages does not turn it round.
    learner.observe([page(H + f"/q{i}", f"Q{i}") for i in range(6)])
    learner.observe([page(W + f"/q{i}", f"Q{i}") for i in range(2)])
    learner.learn()
    assert aliases(learner) == {("a.test", "www.a.test")}


def _evidence():
    from dustless.rules import LiveEvidence

    return LiveEvidence(4, 4, 2, 1)


def _two_twins() -> LiveLearner:
    learner = LiveLearner()
    learner.observe([page(u + f"/p{i}", f"P{i}") for u in (H, M, W) for i in range(4)])
    learner.learn()
    assert aliases(learner) == {("m.a.test", "a.test"), ("www.a.test", "a.test")}
    return learner


def test_two_twins_differing_retract_only_the_one_the_main_hosts_page_differs_from():
    # The mobile host serves the main host's /x; the www twin another document there (a
    # subtree of its own). The pair m./x, www./x cannot say which twin differs: the main
    # host's own /x does, and only the www alias goes (the real web's seed 15 lost both).
    learner = _two_twins()
    learner.observe([page(M + "/x", "X"), page(H + "/x", "X")])
    changes = learner.observe([page(W + "/x", "the twin's own")])
    assert [r.host for r in changes.retracted] == ["www.a.test"]
    assert aliases(learner) == {("m.a.test", "a.test")}


def test_two_twins_differing_without_the_main_hosts_page_retract_both():
    # Nothing to tell which twin differs: both aliases are blamed, so neither merges a page
    # it may not hold (a retraction costs fetches, never a document).
    learner = _two_twins()
    learner.observe([page(M + "/y", "Y")])
    changes = learner.observe([page(W + "/y", "the twin's own")])
    assert {r.host for r in changes.retracted} == {"m.a.test", "www.a.test"}
    assert not aliases(learner)
