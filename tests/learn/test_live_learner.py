"""The live learner (``dustless.rules.LiveLearner``): evidence in, rules and retractions out.

Pure tests with made-up pages: what the crawl feeds the learner (``crawl/learn.py``) is
covered by the must-hold tests on the test web (``test_live_musthold.py``).
"""

from __future__ import annotations

import itertools

import pytest

from dustless.extract import content_fingerprint
from dustless.rules import (
    AddSlash,
    DropParam,
    FixParam,
    HostRedirect,
    LiveLearner,
    LiveOptions,
    LiveRules,
    NormalizeStep,
    PageFacts,
    Substitute,
    rule_from_spec,
    rule_spec,
)
from dustless.rules._learn_live_index import ContentIndex
from dustless.rules._learn_live_rules import NO_DOCUMENT, Entry, measure, pair_candidates

H = "http://a.test"
_ids = itertools.count(1)


def page(key: str, content: str, canonical: str | None = None) -> PageFacts:
    return PageFacts(key, next(_ids), True, False, sha1=content, canonical=canonical)


def missing(key: str) -> PageFacts:
    return PageFacts(key, next(_ids), False, True)


def moved(key: str, target: str) -> PageFacts:
    return PageFacts(key, next(_ids), False, False, redirect=target)


def specs(learner: LiveLearner, host: str = "a.test") -> set[str]:
    return {rule_spec(r) for h, _, r in learner.active() if h == host}


@pytest.mark.parametrize(
    "rule",
    [
        Substitute("/index.html", "/"),
        DropParam("sid"),
        DropParam("sid", "/a"),
        FixParam("lang", "en", "/b"),
        AddSlash(),
        AddSlash("/dir"),
        HostRedirect("a.test"),
        NormalizeStep("lowercase-path"),
        NormalizeStep("remove-default-document", "index.php"),
    ],
)
def test_a_rule_spec_names_the_rule_without_its_evidence(rule):
    spec = rule_spec(rule)
    assert rule_from_spec(spec) == rule
    again = rule_from_spec(spec, 4, 0.25)
    assert (again.support, again.fp_rate) == (4, 0.25)
    assert rule_spec(again) == spec


def test_an_equal_pair_suggests_the_rules_of_rules_learn():
    def names(a: str, b: str) -> set[str]:
        return {rule_spec(r) for r in pair_candidates(H + a, H + b)}

    assert rule_spec(DropParam("utm_source")) in names("/x?utm_source=a", "/x")
    assert rule_spec(DropParam("jsessionid")) in names("/x;jsessionid=AB12", "/x")
    assert names("/x?a=1&b=2", "/x?b=2&a=1") == {rule_spec(NormalizeStep("sort-query"))}
    case = names("/ASP/X.asp", "/asp/x.asp")
    assert rule_spec(NormalizeStep("lowercase-path")) in case
    assert rule_spec(Substitute("/ASP/X.asp", "/asp/x.asp")) in case
    doc = names("/dir/index.php", "/dir/")
    assert rule_spec(NormalizeStep("remove-default-document", "index.php")) in doc
    assert rule_spec(AddSlash()) in names("/dir", "/dir/")
    assert pair_candidates(H + "/x", "http://b.test/x") == []  # another host: an alias


def test_measure_counts_pairs_and_the_crawler_counterexample():
    docs = [Entry(H + "/x", 1), Entry(H + "/x?s=1", 1), Entry(H + "/y", 2), Entry(H + "/y?s=2", 3)]
    ev = measure(DropParam("s").apply, docs)
    assert (ev.pairs, ev.equal, ev.support, ev.verified) == (2, 1, 1, 1)
    # A spelling that yields nothing merged with a document differs; two such are no pair.
    ev = measure(DropParam("s").apply, [Entry(H + "/x", 1), Entry(H + "/x?s=1", NO_DOCUMENT)])
    assert (ev.pairs, ev.differ) == (1, 1)
    ev = measure(DropParam("s").apply, [Entry(H + "/z", -1), Entry(H + "/z?s=1", NO_DOCUMENT)])
    assert ev.pairs == 0
    # A declaration is not a fetch.
    ev = measure(DropParam("s").apply, [Entry(H + "/x", 1), Entry(H + "/x?s=1", 1, False)])
    assert (ev.equal, ev.verified) == (1, 0)


def test_content_classes_are_near_duplicates_and_never_merge_later():
    index = ContentIndex(capacity=3)
    text = "the quick brown fox jumps over the lazy dog " * 30
    a = content_fingerprint(f"<p>{text} request one</p>".encode(), "text/html")
    b = content_fingerprint(f"<p>{text} request two</p>".encode(), "text/html")
    c = content_fingerprint(b"<p>an entirely different document about gardens</p>", "text/html")
    assert index.classify("sha-a", a) == index.classify("sha-b", b) == 0
    assert index.classify("sha-c", c) == 1
    assert index.classify("sha-c", None) == 1  # the same payload again (a revisit)
    assert index.classify("sha-d", None) == 2
    assert index.classify("sha-e", None) is None  # full: no class, not evidence


def test_a_parameter_is_learned_from_k_independent_equal_groups():
    learner = LiveLearner(LiveOptions(min_support=2))
    # Three spellings of one document: one group, support 1 — not enough.
    learner.observe([page(H + "/x", "X"), page(H + "/x?sid=1", "X"), page(H + "/x?sid=2", "X")])
    assert not learner.learn()
    learner.observe([page(H + "/y", "Y"), page(H + "/y?sid=9", "Y")])
    learned = learner.learn().learned
    assert [rule_spec(r.rule) for r in learned] == [rule_spec(DropParam("sid"))]
    assert learned[0].evidence.support == 2
    assert learned[0].evidence.differ == 0
    assert learner.ruleset.apply(H + "/z?sid=4") == H + "/z"


def test_a_candidate_with_differing_pairs_beyond_the_budget_is_rejected():
    learner = LiveLearner(LiveOptions(max_fp=0.01))
    learner.observe(
        [
            page(H + "/x", "X"),
            page(H + "/x?page=1", "X"),
            page(H + "/y", "Y"),
            page(H + "/y?page=1", "Y"),
            page(H + "/y?page=2", "Y2"),  # the parameter matters here
        ]
    )
    assert not learner.learn()


def test_a_counterexample_beyond_the_budget_retracts_the_rule_for_good():
    learner = LiveLearner()
    learner.observe([page(H + f"/p{i}{q}", f"P{i}") for i in range(3) for q in ("", "?v=1")])
    assert specs(learner) == set()
    assert learner.learn().learned
    spec = rule_spec(DropParam("v"))
    assert specs(learner) == {spec}
    changes = learner.observe([page(H + "/c?v=1", "C1"), page(H + "/c?v=2", "C2")])
    assert [(r.host, r.spec) for r in changes.retracted] == [("a.test", spec)]
    assert "differ" in changes.retracted[0].reason
    assert specs(learner) == set()
    assert learner.is_retracted("a.test", spec)
    # More evidence for it does not bring it back.
    learner.observe([page(H + f"/q{i}{q}", f"Q{i}") for i in range(5) for q in ("", "?v=1")])
    learner.learn()
    assert spec not in specs(learner)


def test_a_spelling_without_document_is_a_counterexample():
    learner = LiveLearner()
    learner.observe(
        [
            page(H + "/A/x.html", "X"),
            page(H + "/a/x.html", "X"),
            page(H + "/B/y.html", "Y"),
            page(H + "/b/y.html", "Y"),
        ]
    )
    learner.learn()
    assert rule_spec(NormalizeStep("lowercase-path")) in specs(learner)
    # A case-sensitive server after all: /C/z.html is a page, /c/z.html a 404.
    changes = learner.observe([page(H + "/C/z.html", "Z"), missing(H + "/c/z.html")])
    assert changes.retracted


def test_canonical_claims_count_only_from_a_trusted_host_and_never_alone():
    learner = LiveLearner()
    # Pages at their own canonical URL: the host's declarations are right so far.
    facts = [page(H + f"/d{i}", f"D{i}", canonical=H + f"/d{i}") for i in range(3)]
    # Tracking spellings declaring their canonical URL, which the crawl has not fetched.
    facts += [page(H + f"/t{i}?utm_source=x", f"T{i}", canonical=H + f"/t{i}") for i in range(4)]
    learner.observe(facts)
    assert learner.trust("a.test") == (3, 0)
    assert not learner.learn()  # declarations alone never merge anything
    learner.observe([page(H + "/t0", "T0", canonical=H + "/t0")])  # one fetched pair
    learned = learner.learn().learned
    assert [rule_spec(r.rule) for r in learned] == [rule_spec(DropParam("utm_source"))]
    assert learned[0].evidence.support >= 4
    assert "declared canonical" in learned[0].sources


def test_a_host_declaring_everything_canonical_to_its_home_page_is_not_trusted():
    B = "http://b.test"
    learner = LiveLearner()
    facts = [page(B + "/", "HOME", canonical=B + "/")]
    facts += [page(B + f"/n{i}", f"N{i}", canonical=B + "/") for i in range(5)]
    facts += [page(B + f"/m{i}?s=1", f"M{i}", canonical=B + f"/m{i}") for i in range(5)]
    learner.observe(facts)
    ok, bad = learner.trust("b.test")
    assert (ok, bad) == (1, 5)
    learner.observe([page(B + "/m0", "M0")])
    assert not learner.learn()  # one fetched pair, the claims do not count


def test_redirects_are_the_servers_word_and_aliases_need_both_hosts_pages():
    W = "http://www.a.test"
    learner = LiveLearner()
    facts = [page(H + f"/d{i}/", f"D{i}") for i in range(3)]
    facts += [moved(H + f"/d{i}", H + f"/d{i}/") for i in range(3)]
    facts += [page(H + f"/p{i}", f"P{i}") for i in range(3)]
    facts += [page(W + f"/p{i}", f"P{i}") for i in range(2)]
    learner.observe(facts)
    learner.learn()
    assert rule_spec(NormalizeStep("add-trailing-slash")) in specs(learner)
    assert specs(learner, "www.a.test") == {rule_spec(HostRedirect("a.test"))}
    live = LiveRules()
    live.set(learner.ruleset)
    assert live.apply(W + "/p9.html") == H + "/p9.html"
    assert live.apply(W + "/d9") == H + "/d9/"  # the alias, then the host's own rules
    assert "a.test" in live.touched
    assert live.apply("http://c.test/x") == "http://c.test/x"
    # An unrelated www site: its pages are not the bare host's.
    other = LiveLearner()
    other.observe([page("http://c.test/p", "C"), page("http://www.c.test/p", "WC")])
    assert not other.learn()


def test_a_redirect_to_another_host_teaches_no_rule_within_the_host_it_leaves():
    # The real web's seed 4: www.a.test's old paths /doc/x redirect to the main host's
    # /research/x, and www.a.test/research/x mirrors it but in a subtree. Within www.a.test
    # that is no evidence that /research/x and /doc/x are one document: such a rule would
    # merge the twin's own pages into the main host's (as an alias would, unchecked by
    # subtree), and the subtree where the twin differs would be lost.
    W = "http://www.a.test"
    learner = LiveLearner()
    facts = [page(H + f"/research/x{i}.html", f"X{i}") for i in range(4)]
    facts += [moved(W + f"/doc/x{i}.html", H + f"/research/x{i}.html") for i in range(4)]
    facts += [page(W + f"/research/x{i}.html", f"X{i}") for i in range(4)]
    learner.observe(facts)
    learner.learn()
    assert specs(learner, "www.a.test") <= {rule_spec(HostRedirect("a.test"))}
    # On the main host, its own redirects are the server's word, as ever.
    main = LiveLearner()
    main.observe([page(H + f"/research/x{i}.html", f"X{i}") for i in range(4)])
    main.observe([moved(H + f"/doc/x{i}.html", H + f"/research/x{i}.html") for i in range(4)])
    main.learn()
    assert specs(main) == {rule_spec(Substitute("/research/", "/doc/"))}


def test_a_host_alias_is_judged_by_spots_not_by_pairs():
    """A ``www`` twin whose dozen pages differ in one subtree: one differing spot among those
    compared keeps its alias (by pairs, the 1 % budget retracted it at the first); hosts that
    differ widely lose theirs at their second differing spot."""
    W = "http://www.a.test"
    twin = LiveLearner()
    twin.observe([page(u + f"/{d}/p{i}", f"{d}{i}") for d in "abc" for i in range(3)
                  for u in (H, W)])  # fmt: skip
    twin.learn()
    alias = rule_spec(HostRedirect("a.test"))
    assert specs(twin, "www.a.test") == {alias}
    changes = twin.observe(
        [page(u + f"/t/q{i}", f"{'W' if u == W else 'T'}{i}") for i in range(12) for u in (H, W)]
    )
    assert not changes.retracted
    assert len(changes.differed) == 12  # every differing pair is still reported (distrusted)
    assert specs(twin, "www.a.test") == {alias}
    # Two differing spots of the five compared are more than a third: retracted.
    changes = twin.observe([page(H + "/u/r", "U"), page(W + "/u/r", "WU")])
    assert [r.spec for r in changes.retracted] == [alias]
    assert "spots" in changes.retracted[0].reason
    # Hosts that differ but for the two pages they were learned on: their first difference.
    wide = LiveLearner()
    wide.observe([page(u + f"/a/p{i}", f"A{i}") for i in range(2) for u in (H, W)])
    wide.learn()
    assert specs(wide, "www.a.test") == {alias}
    changes = wide.observe([page(H + "/b/x", "B"), page(W + "/b/x", "WB")])
    assert [r.spec for r in changes.retracted] == [alias]
