"""The fixture other packages' tests use: it starts, answers and counts."""

import json
import urllib.request

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(url, host):
    req = urllib.request.Request(url, headers={"Host": host})
    with OPENER.open(req, timeout=10) as resp:
        return resp.status, resp.read()


def test_fixture_serves_seeds_and_counts(testweb):
    assert testweb.port > 0
    assert "site1.test" in testweb.hosts
    assert "www.web.com" in testweb.hosts
    assert testweb.seeds[0] == testweb.base_url("site1.test") + "/"
    assert testweb.resolve_args[:2] == ["--resolve", "*.test:127.0.0.1"]
    assert "www.web.com:127.0.0.1" in testweb.resolve_args
    status, body = get(f"http://127.0.0.1:{testweb.port}/", "site1.test")
    assert status == 200
    assert b"<title>site1 home</title>" in body
    stats = testweb.stats()
    assert stats["requests"] == 1
    assert stats["resources_fetched"] == 1
    assert stats["hosts"]["site1.test"]["requests"] == 1
    testweb.reset()
    assert testweb.stats()["requests"] == 0
    rows = testweb.truth()
    assert any(r.url == testweb.seeds[0] and r.rid == "site1:/" for r in rows)


def test_fixture_day_control(testweb):
    assert testweb.day() == 0
    testweb.set_day(5)
    assert testweb.day() == 5
    with OPENER.open(f"http://127.0.0.1:{testweb.port}/__testweb/day", timeout=10) as resp:
        assert json.loads(resp.read()) == {"day": 5}
