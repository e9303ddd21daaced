"""The near-duplicate fingerprint: visible text only, noise left out, resemblance unbiased."""

from __future__ import annotations

import random

from dustless.extract import (
    FINGERPRINT_BYTES,
    NEAR_THRESHOLD,
    content_fingerprint,
    extract_links,
    fingerprint_text,
    is_near,
    main_text,
    similarity,
    visible_text,
)

WORDS = [f"w{chr(97 + i)}{chr(97 + j)}" for i in range(26) for j in range(26)]


def _page(words: list[str], extra: str = "") -> bytes:
    return f"<html><body><p>{' '.join(words)}</p>{extra}</body></html>".encode()


def _text(rng: random.Random, n: int) -> list[str]:
    return ["".join(c for c in rng.choice(WORDS) if c.isalpha()) for _ in range(n)]


def test_markup_scripts_attributes_and_digit_tokens_are_not_text() -> None:
    body = (
        b"<html><head><title>Hello</title><style>p{color:red}</style></head><body>"
        b'<!-- build 42 --><script>var nonce="zz"</script><a href="http://x.test/">World</a>'
        b'<input type="hidden" name="csrf" value="deadbeef"></body></html>'
    )
    assert visible_text(body).split() == ["Hello", "World"]
    a = content_fingerprint(body + b"<p>at 12:05 req 9f2c41</p>", "text/html")
    b = content_fingerprint(body + b"<p>at 17:44 req 0c1d77</p>", "text/html")
    assert a is not None
    assert len(a) == FINGERPRINT_BYTES
    assert a == b  # times and nonces are noise; "at" and "req" remain in both


def test_no_text_no_fingerprint_and_other_types_have_none() -> None:
    assert content_fingerprint(b"<html><body><img src=a.png></body></html>", "text/html") is None
    assert content_fingerprint(b"\x89PNG\r\n", "image/png") is None
    assert content_fingerprint(b"plain words here now", "text/plain") is not None


def test_resemblance_estimate_is_close_to_the_jaccard_of_the_shingles() -> None:
    rng = random.Random(7)
    base = _text(rng, 400)
    for changed in (0, 10, 40, 120, 400):
        other = list(base)
        for i in rng.sample(range(len(base)), changed):
            other[i] = "zz" + other[i]
        sa = {" ".join(base[i : i + 3]) for i in range(len(base) - 2)}
        sb = {" ".join(other[i : i + 3]) for i in range(len(other) - 2)}
        jaccard = len(sa & sb) / len(sa | sb)
        fa, fb = content_fingerprint(_page(base), None), content_fingerprint(_page(other), None)
        assert fa is not None
        assert fb is not None
        assert abs(similarity(fa, fb) - jaccard) < 0.12, (changed, jaccard)


def test_near_means_a_small_change_not_a_shared_template() -> None:
    rng = random.Random(11)
    article = _text(rng, 250)
    ad_a, ad_b = _text(rng, 6), _text(rng, 6)
    a = content_fingerprint(_page(article, f"<div>{' '.join(ad_a)}</div>"), "text/html")
    b = content_fingerprint(_page(article, f"<div>{' '.join(ad_b)}</div>"), "text/html")
    assert a is not None
    assert b is not None
    assert is_near(a, b)
    template = _text(rng, 100)
    one = content_fingerprint(_page(template + _text(rng, 40)), "text/html")
    two = content_fingerprint(_page(template + _text(rng, 40)), "text/html")
    assert one is not None
    assert two is not None
    assert similarity(one, two) < NEAR_THRESHOLD
    assert not is_near(one, two)


def test_text_reads_as_a_browser_renders_broken_markup() -> None:
    # A "<" that opens no tag is text; an entity reads as its character; a template and a
    # noscript are not shown; tags split words as on screen.
    body = (
        b"<p>if a < b and b&gt;c then caf&eacute;</p><template><p>hidden</p></template>"
        b"<noscript>enable scripts</noscript><p>one<b>two</b></p>"
    )
    assert visible_text(body).split() == [
        "if",
        "a",
        "<",
        "b",
        "and",
        "b>c",
        "then",
        "café",
        "one",
        "two",
    ]


def test_the_crawl_reads_the_text_from_the_tree_extraction_parsed() -> None:
    # The crawl fingerprints Extraction.text (no second parse); a reader of stored bodies
    # calls content_fingerprint: both must give the same bytes for the same page.
    rng = random.Random(7)
    pages = [
        _page(_text(rng, 60), "<script>document.write('x')</script><style>p{}</style>"),
        b"<html><head><title>T</title></head><body><div><a href=/a>A</a> text "
        + b"<i>deep</i>" * 5
        + b"</div><!-- note --></body></html>",
        "<p>비정상 문서 <b>한글</b> text</p>".encode("euc-kr"),
        b"<div>" * 3000 + b"nested words here" + b"</div>" * 3000,  # flattened by the guard
    ]
    for body in pages:
        ctype = "text/html; charset=euc-kr" if b"<p>\xba" in body else "text/html"
        extraction = extract_links(body, "http://site.test/a/", ctype, with_text=True)
        assert extraction.text == main_text(body, ctype)
        got = fingerprint_text(extraction.text) if extraction.text is not None else None
        assert got == content_fingerprint(body, "text/html", ctype)
        assert extract_links(body, "http://site.test/a/", ctype).text is None  # not asked
