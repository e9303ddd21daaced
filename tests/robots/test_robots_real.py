"""Every real-world robots.txt of ../shared/testdata/robots/real parses, and answers."""

import support
from dustless.robots import ROBOTS_MAX_BYTES, Robots, robots_for_response

EXPECTED_FILES = 4231
PROBES = ("/", "/search?q=x", "/wp-admin/", "/a/b/c.html", "https://example.com/%E3%83%84")


def test_every_real_file_parses_and_answers():
    directory = support.testdata("robots", "real")
    files = sorted(p for p in directory.iterdir() if p.is_file())
    assert len(files) == EXPECTED_FILES
    with_rules = 0
    for path in files:
        body = path.read_bytes()
        robots = Robots.parse(body)
        for probe in PROBES:
            assert isinstance(robots.allowed("dustless", probe), bool), path.name
        assert isinstance(robots.allowed("Googlebot", "/search"), bool), path.name
        delay = robots.crawl_delay("dustless")
        assert delay is None or delay >= 0
        assert all(isinstance(s, str) for s in robots.sitemaps)
        with_rules += "rules" in repr(robots) and not repr(robots).endswith(" 0 rules>")
        if len(body) > ROBOTS_MAX_BYTES:
            # The fetch rule caps what is parsed; it must hold on the biggest files too.
            assert isinstance(robots_for_response(200, body).allowed("dustless", "/"), bool)
    # Most real files say something: a parser that silently drops everything fails here.
    assert with_rules > len(files) * 0.8


def test_real_file_decisions_are_sensible():
    directory = support.testdata("robots", "real")
    wikipedia = [directory / "en.wikipedia.org"]
    for path in wikipedia:
        robots = Robots.parse(path.read_bytes())
        assert robots.allowed("dustless", "/wiki/Main_Page")
        assert not robots.allowed("dustless", "/w/index.php?title=Special:Search")
