"""Broken scripts: every error names the file, the line and what was expected."""

from __future__ import annotations

import pytest

from dustless.errors import ScriptError, UsageError
from dustless.rules import load_script, parse_script


def script(url_body: str = "", site_extra: str = "", site_attrs: str = ' title="t"') -> str:
    """A valid script with one list pattern, lines numbered as in the comments."""
    return (
        "<crawlscript>\n"  # 1
        f"<site{site_attrs}>\n"  # 2
        '<identity value="www.web.com"/>\n'  # 3
        '<url type="list" class="c">\n'  # 4
        + (
            url_body
            or '<originalAddr type="url">http://www.web.com/list?c={0}&amp;p={1}</originalAddr>\n'
            "<targetAddr>http://www.web.com/list?c={0}&amp;p={1}</targetAddr>\n"
        )  # 5, 6
        + "</url>\n"  # 7
        + site_extra
        + "</site>\n</crawlscript>\n"
    )


def test_the_helper_script_is_valid():
    assert len(parse_script(script()).rules.sites[0].patterns) == 1


def fails(text: str, line: int, *expected: str) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        parse_script(text, "site.xml")
    err = info.value
    assert isinstance(err, UsageError)
    assert (err.path, err.line) == ("site.xml", line), str(err)
    assert str(err).startswith(f"site.xml:{line}: ")
    for part in expected:
        assert part in str(err)
    return err


ORIG = '<originalAddr type="url">http://www.web.com/list?c={0}</originalAddr>\n'
TARGET = "<targetAddr>http://www.web.com/list?c={0}</targetAddr>\n"

CASES = {
    "unknown element": (
        script(site_extra="<junk/>\n"),
        8,
        "unexpected <junk> in <site>",
        "expected one of <identity>, <url>",
    ),
    "unknown attribute": (
        script(site_attrs=' title="t" lang="ko"'),
        2,
        "unknown attribute 'lang' on <site>",
        "expected title",
    ),
    "missing title": (script(site_attrs=""), 2, "<site> lacks the required attribute 'title'"),
    "bad url type": (
        script().replace('type="list"', 'type="lists"'),
        4,
        "bad type='lists' on <url>",
        "expected 'list' or 'detail'",
    ),
    "bad originalAddr type": (
        script(ORIG.replace('"url"', '"js"') + TARGET),
        5,
        "bad type='js' on <originalAddr>",
        "expected 'url' or 'javascript'",
    ),
    "missing originalAddr type": (
        script(ORIG.replace(' type="url"', "") + TARGET),
        5,
        "lacks the required attribute 'type'",
    ),
    "target placeholder not in original": (
        script(ORIG + "<targetAddr>http://www.web.com/list?c={0}&amp;p={1}</targetAddr>\n"),
        6,
        "targetAddr uses {1}, not in originalAddr",
        "expected only placeholders of originalAddr ({0})",
    ),
    "missing targetAddr": (script(ORIG), 6, "</url> in <url>; expected <targetAddr>"),
    "missing originalAddr": (script(TARGET), 5, "<targetAddr> in <url>; expected <originalAddr>"),
    "two originalAddr": (
        script(ORIG + ORIG + TARGET),
        6,
        "<originalAddr> in <url>; expected <targetAddr>",
    ),
    "empty originalAddr": (
        script('<originalAddr type="url">  </originalAddr>\n' + TARGET),
        5,
        "<originalAddr> is empty; expected an address",
    ),
    "element inside an address": (
        script('<originalAddr type="url"><b/>x</originalAddr>\n' + TARGET),
        5,
        "element <b> inside <originalAddr>; expected text only",
    ),
    "text inside site": (
        script(site_extra="hello\n"),
        2,
        "text 'hello' inside <site>; expected elements only",
    ),
    "missing identity": (
        script().replace('<identity value="www.web.com"/>\n', "\n"),
        4,
        "<url> in <site>; expected <identity>",
    ),
    "identity after url": (
        script(site_extra='<identity value="web.com"/>\n'),
        8,
        "expected the order <identity> then <url> then",
    ),
    "wrong root": ("\n<script/>", 2, "root element is <script>; expected <crawlscript>"),
    "relative originalAddr": (
        script(ORIG.replace("http://www.web.com", "") + TARGET.replace("{0}", "1")),
        5,
        "is not an absolute URL; expected http://host/",
    ),
    "relative targetAddr": (
        script(ORIG + TARGET.replace("http://www.web.com", "")),
        6,
        "targetAddr '/list?c={0}' is not an absolute URL",
    ),
    "placeholders touching": (
        script(ORIG.replace("{0}", "{0}{1}") + TARGET),
        5,
        "placeholders {0} and {1} in originalAddr type='url' touch",
        "expected literal text between two placeholders",
    ),
    "placeholder in host": (
        script(ORIG.replace("www", "{1}") + TARGET),
        5,
        "placeholder in the host",
        "expected placeholders in the path or query only",
    ),
    "placeholder in parameter name": (
        script(ORIG.replace("c={0}", "{0}=1") + TARGET.replace("{0}", "1")),
        5,
        "expected name={n}",
    ),
    "fragment in pattern": (script(ORIG.replace("{0}", "{0}#top") + TARGET), 5, "has a fragment"),
    "javascript pattern that is a URL": (
        script(ORIG.replace('"url"', '"javascript"') + TARGET),
        5,
        "is not a javascript call; expected e.g. javascript:show_detail({0})",
    ),
    "mismatched tag": (
        script().replace("</url>", "</uri>"),
        7,
        "not well-formed XML: mismatched tag; expected </url>",
    ),
    "undefined entity": (
        script().replace("c={0}&amp;", "c={0}&nbsp;"),
        5,
        "undefined entity",
        "expected &amp;",
    ),
    "empty file": ("", 1, "no element found; expected <crawlscript>"),
    "negative support": (
        script(site_extra='<dropParam name="sid" support="-1"/>\n'),
        8,
        "bad support='-1' on <dropParam>; expected a whole number",
    ),
    "fp_rate above one": (
        script(site_extra='<dropParam name="sid" support="3" fp_rate="1.5"/>\n'),
        8,
        "bad fp_rate='1.5' on <dropParam>; expected a fraction between 0 and 1",
    ),
    "fixParam without value": (
        script(site_extra='<fixParam name="lang"/>\n'),
        8,
        "<fixParam> lacks the required attribute 'value'",
    ),
    "substitute that never settles": (
        script(site_extra='<substitute from="a" to="ab"/>\n'),
        8,
        "substitute 'to' 'ab' contains 'from' 'a'",
    ),
    "bad identity": (
        script().replace('www.web.com"/>', 'http://www.web.com/"/>'),
        3,
        "is not a host name; expected e.g. www.web.com",
    ),
    "learned rule before url": (
        script().replace('<url type="list"', '<dropParam name="sid"/>\n<url type="list"'),
        5,
        "unexpected <url> in <site>; expected the order",
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_error_names_line_and_what_was_expected(name):
    text, line, *expected = CASES[name]
    fails(text, line, *expected)


def test_errors_are_reported_in_document_order():
    # Two errors: an unknown element on line 8 (found while checking <site>) and a bad
    # attribute on line 4 (found later, on <url>): the first in the file is reported.
    text = script(site_extra="<junk/>\n").replace('type="list"', 'type="x"')
    fails(text, 4, "bad type='x'")


@pytest.mark.parametrize(
    "doc",
    [
        # Billion laughs: refused at the DOCTYPE, before any entity is declared or expanded.
        '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
        '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\n]>\n'
        "<crawlscript>&lol2;</crawlscript>",
        # External entity (XXE).
        '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n<crawlscript>&e;</crawlscript>',
        '<!DOCTYPE crawlscript SYSTEM "http://example.com/x.dtd">\n<crawlscript/>',
    ],
)
def test_dtds_and_entities_are_refused(doc):
    with pytest.raises(ScriptError, match="DOCTYPE declaration is not allowed") as info:
        parse_script(doc, "evil.xml")
    assert info.value.line == doc[: doc.index("<!DOCTYPE")].count("\n") + 1


def test_ampersands_in_cdata_and_comments_are_left_alone():
    text = script(
        '<originalAddr type="url"><![CDATA[http://www.web.com/list?c={0}&p={1}]]></originalAddr>\n'
        "<targetAddr>http://www.web.com/list?c={0}&amp;p={1}</targetAddr>\n"
    ).replace("<crawlscript>\n", "<crawlscript><!-- a & b -->\n")
    loaded = parse_script(text)
    assert loaded.warnings == ()
    assert loaded.rules.sites[0].patterns[0].original == "http://www.web.com/list?c={0}&p={1}"


def test_euc_kr_script_is_decoded_by_its_declaration():
    text = '<?xml version="1.0" encoding="euc-kr"?>\n' + script().replace('"t"', '"인물정보"')
    loaded = parse_script(text.encode("euc-kr"), "k.xml")
    assert loaded.rules.sites[0].title == "인물정보"


def test_undecodable_bytes_name_their_line():
    data = script().encode("utf-8").replace(b'class="c"', b'class="\xff"')
    with pytest.raises(ScriptError, match=r"k\.xml:4: bytes not valid in utf-8"):
        parse_script(data, "k.xml")


def test_unknown_encoding():
    with pytest.raises(ScriptError, match="unknown encoding 'x-nope'"):
        parse_script(b'<?xml version="1.0" encoding="x-nope"?><crawlscript/>', "k.xml")


def test_missing_file_is_a_script_error(tmp_path):
    path = tmp_path / "absent.xml"
    with pytest.raises(ScriptError, match="cannot read the script") as info:
        load_script(path)
    assert info.value.path == str(path)


def test_pattern_host_outside_the_identities_is_a_warning():
    text = script().replace('value="www.web.com"', 'value="web.com"')
    (warning,) = parse_script(text, "w.xml").warnings
    assert (warning.line, warning.message) == (
        4,
        "pattern host 'www.web.com' is not an identity of site 't'",
    )
