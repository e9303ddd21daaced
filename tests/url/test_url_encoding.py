"""resolve(base, reference, encoding): WHATWG URL "encoding-parse" of a link in a page that is
not UTF-8. The query of a special URL is encoded with the page's encoding, the path and the
fragment always as UTF-8; a character the encoding cannot represent becomes ``&#NNNN;``,
percent-encoded whole (``%26%23NNNN%3B``). Every expected value here is what headless
Chromium gives for ``a.href`` (tests/extract/test_link_encoding.py checks more against it),
written in the rfc3986 form ``resolve`` returns."""

import pytest

from dustless.url import normalize, resolve
from dustless.url._encoding import url_codec

BASE = "http://h.test/dir/page.html"


@pytest.mark.parametrize(
    ("encoding", "reference", "expected"),
    [
        # a Korean query from an EUC-KR page: in EUC-KR, as browsers send it
        ("euc-kr", "/search?q=한국", "http://h.test/search?q=%C7%D1%B1%B9"),
        # the path and the fragment are always UTF-8
        (
            "euc-kr",
            "/한국?q=한국#한국",
            "http://h.test/%ED%95%9C%EA%B5%AD?q=%C7%D1%B1%B9#%ED%95%9C%EA%B5%AD",
        ),
        ("euc-kr", "?q=café€", "http://h.test/dir/page.html?q=caf%26%23233%3B%A2%E6"),
        ("ks_c_5601-1987", "?q=한", "http://h.test/dir/page.html?q=%C7%D1"),
        # Shift_JIS: a trail byte can be ASCII ("{", "|"), then written as the rfc3986 form
        ("shift_jis", "?q=日本語", "http://h.test/dir/page.html?q=%93%FA%96%7B%8C%EA"),
        ("shift_jis", "?q=¥‾−－", "http://h.test/dir/page.html?q=%5C~%81%7C%81%7C"),
        ("shift_jis", "?q=＂", "http://h.test/dir/page.html?q=%FAW"),  # IBM, not NEC-selected
        ("shift_jis", "?q=¢", "http://h.test/dir/page.html?q=%26%23162%3B"),  # no best fit
        ("shift_jis", "?q=ｱ", "http://h.test/dir/page.html?q=%B1"),  # halfwidth katakana
        # GB18030: four-byte sequences, GB18030-2022's moved characters
        ("gb18030", "?q=한국", "http://h.test/dir/page.html?q=%836%843%827%F40"),
        ("gb18030", "?q=€ḿ\u9fb4", "http://h.test/dir/page.html?q=%A2%E3%A8%BC%FEY"),
        ("gb18030", "?q=\U0001f600", "http://h.test/dir/page.html?q=%949%FC6"),
        # gbk (also gb2312): gb18030 without four-byte sequences, € as 0x80
        ("gbk", "?q=中€", "http://h.test/dir/page.html?q=%D6%D0%80"),
        ("gb2312", "?q=한", "http://h.test/dir/page.html?q=%26%2354620%3B"),
        # windows-1252 (also the label iso-8859-1); 0x81 is U+0081
        ("windows-1252", "?q=café€", "http://h.test/dir/page.html?q=caf%E9%80"),
        ("iso-8859-1", "?q=\x81ü", "http://h.test/dir/page.html?q=%81%FC"),
        (
            "windows-1252",
            "/search?q=한국",
            "http://h.test/search?q=%26%2354620%3B%26%2344397%3B",
        ),
        ("windows-1252", "http://x.test/p?q=ü", "http://x.test/p?q=%FC"),
        # ASCII is encoded as always; tabs and newlines are dropped first
        ("euc-kr", "/s\ne?q=a b'한", "http://h.test/se?q=a%20b%27%C7%D1"),
        # EUC-JP, Big5, ISO-2022-JP (stateful: escape sequences around the run)
        ("euc-jp", "?q=日本", "http://h.test/dir/page.html?q=%C6%FC%CB%DC"),
        ("big5", "?q=中文€", "http://h.test/dir/page.html?q=%A4%A4%A4%E5%A3%E1"),
        ("iso-2022-jp", "?q=日本", "http://h.test/dir/page.html?q=%1B$BF%7CK%5C%1B(B"),
    ],
)
def test_the_query_is_encoded_with_the_page_encoding(encoding, reference, expected):
    assert resolve(BASE, reference, encoding) == expected
    assert normalize(expected) == expected


@pytest.mark.parametrize(
    ("encoding", "reference", "expected"),
    [
        # UTF-8 wherever the standard says so
        ("utf-8", "?q=한", "http://h.test/dir/page.html?q=%ED%95%9C"),
        ("utf-16le", "?q=한", "http://h.test/dir/page.html?q=%ED%95%9C"),  # output encoding
        ("no-such-label", "?q=한", "http://h.test/dir/page.html?q=%ED%95%9C"),
        ("euc-kr", "ws://w.test/?q=한", "ws://w.test/?q=%ED%95%9C"),  # ws: always UTF-8
        ("euc-kr", "mailto:a@b.test?subject=한", "mailto:a@b.test?subject=%ED%95%9C"),
        ("euc-kr", "#?q=한", "http://h.test/dir/page.html#?q=%ED%95%9C"),  # a fragment
        ("euc-kr", "/a#b?q=한", "http://h.test/a#b?q=%ED%95%9C"),
    ],
)
def test_utf8_where_the_standard_says_so(encoding, reference, expected):
    assert resolve(BASE, reference, encoding) == expected


def test_url_codec_labels():
    assert url_codec("EUC-KR") == "cp949"
    assert url_codec("utf-8") is None
    assert url_codec("UTF-16BE") is None
    assert url_codec("iso-2022-kr") is None  # the replacement encoding: UTF-8
    assert url_codec("garbage") is None


def test_an_unrepresentable_character_never_looks_like_a_parameter_separator():
    # "&#NNNN;" raw would add a parameter to the query; percent-encoded it stays data
    url = resolve(BASE, "?a=한&b=1", "windows-1252")
    assert url == "http://h.test/dir/page.html?a=%26%2354620%3B&b=1"
    assert url.split("?")[1].split("&") == ["a=%26%2354620%3B", "b=1"]
