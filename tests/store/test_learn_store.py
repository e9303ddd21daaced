"""The crawl DB's side of learning while crawling: rules, merges, re-keying (schema V6) — on
SQLite and on PostgreSQL alike (``open_store``)."""

from __future__ import annotations

from dustless.kinds import LinkKind
from dustless.states import NetState
from dustless.store import (
    SCHEMA_VERSION,
    FetchRecord,
    LearnedRuleRow,
    MergeRow,
    NewURL,
    URLState,
)


def rule(host: str, spec: str) -> LearnedRuleRow:
    return LearnedRuleRow(host, "dropParam", spec, 2, 2, 0, "2 pairs fetched", 10.0, 5)


def test_rules_are_kept_once_per_host_and_spec_and_retracted_once(open_store):
    with open_store() as store:
        assert store.schema_version == SCHEMA_VERSION
        store.start_batch("{}", now=1.0)
        first = store.add_learned_rules([rule("a.test", "s1"), rule("b.test", "s1")])
        again = store.add_learned_rules([rule("a.test", "s1")])  # another worker's
        assert again == first[:1]
        store.retract_learned_rules([(first[0], 20.0, "1 of 3 differ")])
        store.retract_learned_rules([(first[0], 30.0, "later")])  # the first one stands
        store.commit()
    with open_store() as store:
        rows = store.learned_rules()
    assert [(r.id, r.host, r.active) for r in rows] == [
        (first[0], "a.test", False),
        (first[1], "b.test", True),
    ]
    assert (rows[0].retracted_at, rows[0].reason) == (20.0, "1 of 3 differ")


def test_merges_are_kept_per_rule_and_base_and_dropped(open_store):
    with open_store() as store:
        m = MergeRow(
            7,
            "http://a.test/x",
            "http://a.test/x?s=1",
            "a.test",
            "a.test",
            2,
            LinkKind.ANCHOR,
            1,
            3,
        )
        store.add_merges(
            [
                m,
                m,
                MergeRow(
                    8,
                    "http://a.test/y",
                    "http://a.test/y?s=2",
                    "a.test",
                    "a.test",
                    1,
                    LinkKind.OTHER,
                    url_id=4,
                ),
            ]
        )
        assert store.merges_of([7]) == [m]
        assert store.merge_counts() == {7: (1, 0), 8: (1, 0)}
        store.drop_merges([7])
        assert store.merge_counts() == {8: (1, 0)}
        assert store.merges_of([8])[0].url_id == 4


def test_rekeying_moves_identities_and_spellings_and_reports_collisions(open_store):
    with open_store() as store:
        store.start_batch("{}", now=1.0)
        store.add_urls(
            [
                NewURL("http://a.test/x?s=1", "http://a.test/x?s=1", "a.test", 1),
                NewURL("http://a.test/x", "http://a.test/x", "a.test", 1),
                NewURL("http://a.test/y?s=2", "http://a.test/y?s=2", "a.test", 1),
            ]
        )
        ids = {u.url: u.id for u in store.queued_of_host("a.test", 10)}
        store.add_spellings([("http://a.test/y?s=2", "http://a.test/Y?s=2")], 8)
        collided = store.rekey_urls(
            [
                (ids["http://a.test/x?s=1"], "http://a.test/x?s=1", "http://a.test/x"),
                (ids["http://a.test/y?s=2"], "http://a.test/y?s=2", "http://a.test/y"),
            ]
        )
        assert collided == [ids["http://a.test/x?s=1"]]
        assert store.contains_identities(["http://a.test/y", "http://a.test/y?s=2"]) == {
            "http://a.test/y"
        }
        assert store.spelling_state("http://a.test/y", ["http://a.test/y"])[1] == [
            "http://a.test/Y?s=2"
        ]
        # A merged row is not claimed, and comes back when asked.
        store.set_url_state([ids["http://a.test/x?s=1"]], URLState.MERGED)
        assert {u.url for u in store.claim_queued(10)} == {"http://a.test/x", "http://a.test/y?s=2"}
        store.set_url_state([ids["http://a.test/x?s=1"]], URLState.QUEUED)
        assert [u.url for u in store.claim_queued(10)] == ["http://a.test/x?s=1"]


def test_a_fetch_keeps_the_canonical_its_page_declared(open_store):
    with open_store() as store:
        store.start_batch("{}", now=1.0)
        store.add_urls([NewURL("http://a.test/x?s=1", "http://a.test/x?s=1", "a.test", 0)])
        (u,) = store.claim_queued(1)
        store.record_fetches(
            [FetchRecord(u.id, 2.0, NetState.OK, 200, canonical="http://a.test/x")]
        )
        assert store.query("SELECT canonical FROM fetches") == [("http://a.test/x",)]
