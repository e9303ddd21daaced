"""Rules files: write → read gives back equal rules; ``render`` is readable."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.rules import (
    AddrType,
    AddSlash,
    DropParam,
    FixParam,
    HostRedirect,
    PageType,
    QueryToPath,
    RuleSet,
    SiteScript,
    StripPrefix,
    Substitute,
    UrlPattern,
    dump_script,
    load_script,
    parse_script,
    render,
)

FIG6 = Path(__file__).parent / "data" / "fig6.xml"

LEARNED = SiteScript(
    "learned: example.com",
    ("example.com", "example.com:8080"),
    rules=(
        Substitute("/story?id=", "/story_", support=12, fp_rate=0.0),
        DropParam("sid", support=40, fp_rate=0.0125),
        FixParam("lang", 'en & "fr" <x>', "/news", support=9, fp_rate=1e-05),
        AddSlash("/dir", support=3),
        AddSlash(),
        HostRedirect("www.example.com", support=1),
        StripPrefix("/amp/", support=7, fp_rate=0.0),
        QueryToPath("/index.php", "page", "/{x}", support=5, fp_rate=0.0),
    ),
)


def test_fig6_round_trips():
    rules = load_script(FIG6).rules
    again = parse_script(dump_script(rules))
    assert again.warnings == ()
    assert again.rules == rules


def test_learned_rules_round_trip_through_a_file(tmp_path):
    rules = load_script(FIG6).rules + RuleSet((LEARNED,))
    path = tmp_path / "rules.xml"
    path.write_text(dump_script(rules), encoding="utf-8")
    loaded = load_script(path)
    assert loaded.warnings == ()
    assert loaded.rules == rules
    # Line numbers point into the written file.
    assert [r.line for r in loaded.rules.sites[1].rules] == [17, 18, 19, 20, 21, 22, 23, 24]


def test_render_lists_patterns_and_rules_with_their_evidence():
    text = render(load_script(FIG6).rules + RuleSet((LEARNED,)))
    assert "site '사이트 이름' (www.web.com) — script" in text
    assert "  list   인물  [url]" in text
    assert "      -> http://www.web.com/detail.aspx?per_id={0}" in text
    assert "site 'learned: example.com' (example.com, example.com:8080) — rules" in text
    lines = text.splitlines()
    drop = next(line for line in lines if "drop parameter 'sid'" in line)
    assert drop.endswith("support     40  fp   1.25%")
    slash = next(line for line in lines if line.strip().startswith("add trailing slash  "))
    assert slash.endswith("support      -  fp       -")
    assert render(RuleSet()) == "no sites\n"


# Text XML 1.0 can carry (no C0 controls but tab/newline/CR; no surrogates or U+FFFE/F).
xml_text = st.text(
    st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11"
        "\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\ufffe\uffff",
    ),
    max_size=12,
)
names = st.text("abcdefghij_-%0123456789", min_size=1, max_size=6)
paths = st.none() | names.map(lambda s: "/" + s)
stats = {
    "support": st.none() | st.integers(0, 10**9),
    "fp_rate": st.none() | st.floats(0.0, 1.0),
}
substitutes = (
    st.tuples(xml_text.filter(str.strip), xml_text)
    .filter(lambda t: t[0] not in t[1])
    .flatmap(lambda t: st.builds(Substitute, st.just(t[0]), st.just(t[1]), **stats))
)
rules = st.one_of(
    substitutes,
    st.builds(DropParam, names, paths, **stats),
    st.builds(FixParam, names, xml_text, paths, **stats),
    st.builds(AddSlash, st.none() | names.map(lambda s: "/" + s), **stats),
    st.builds(HostRedirect, st.sampled_from(["www.a.com", "b.org"]), **stats),
)
originals = st.sampled_from(
    [
        ("http://a.com/l?c={0}&p={1}", AddrType.URL),
        ("http://a.com/x/{0}/y?z=1&amp", AddrType.URL),
        ("javascript:show_detail({0}, '{1}')", AddrType.JAVASCRIPT),
        ('go("{0}")', AddrType.JAVASCRIPT),
    ]
)
patterns = st.builds(
    lambda page_type, original, target, category, key: UrlPattern(
        page_type, original[0], target, original[1], category, key
    ),
    st.sampled_from([PageType.LIST, PageType.DETAIL]),
    originals,
    st.sampled_from(["http://a.com/l?c={0}", "https://b.com/검색/{0}.html"]),
    xml_text,
    st.none() | st.just("{0}"),
)


sites = st.builds(
    SiteScript,
    xml_text.filter(str.strip),
    st.lists(st.sampled_from(["www.a.com", "a.com:81"]), max_size=2).map(lambda i: ("a.com", *i)),
    st.lists(patterns, max_size=2).map(tuple),
    st.lists(rules, max_size=4).map(tuple),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(sites, max_size=3).map(lambda s: RuleSet(tuple(s))))
def test_any_rule_set_round_trips(rule_set):
    loaded = parse_script(dump_script(rule_set))
    assert loaded.rules == rule_set
    assert loaded.warnings == ()
