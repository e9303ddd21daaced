"""A rule learned while links wait for admission: they are admitted under its identities."""

from dustless.crawl.admission import Admission
from dustless.crawl.progress import RunCounters
from dustless.kinds import LinkKind
from dustless.store import AdmitURL


def _url(url: str, host: str, *, given: bool = False) -> AdmitURL:
    return AdmitURL(url, url, host, host, 1, LinkKind.ANCHOR, 1, 1, given=given)


def test_waiting_links_take_the_identities_a_new_rule_gives():
    # Nothing but the pending list is touched: no store, discovery or host table needed.
    adm = Admission(None, None, None, RunCounters(), batch=1, scripted=None)  # type: ignore[arg-type]
    waiting = [
        _url("http://a.test/p?v=1", "a.test"),
        _url("http://a.test/p?v=2", "a.test"),
        _url("http://a.test/q?v=2", "a.test", given=True),  # a seed keeps the user's form
        _url("http://b.test/p?v=2", "b.test"),  # another host: not this rule's
    ]
    for u in waiting:
        adm._add(u)

    def drop_v(u: AdmitURL) -> str | None:
        return u.url.split("?")[0]

    assert adm.rekey({"a.test"}, drop_v) == 2
    assert [u.identity for u in adm._pending] == [
        "http://a.test/p",
        "http://a.test/p",  # one identity now: the crawl DB admits it once, the other merged
        "http://a.test/q?v=2",
        "http://b.test/p?v=2",
    ]
    assert "http://a.test/p" in adm._pending_ids
    assert "http://a.test/p?v=1" not in adm._pending_ids
    assert adm.rekey({"a.test"}, drop_v) == 0  # nothing left to change
