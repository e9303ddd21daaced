"""Seed 000 §3: candidate sets, redundancy rate (1), coverage loss rate (2), Table 1 rows."""

from __future__ import annotations

import pytest

from dustless.analysis import (
    FACTOR_METHODS,
    PAPER_TABLE_1,
    CrawlIndex,
    Factor,
    MethodRow,
    MethodSpec,
    Observation,
    PaperRow,
    candidate_sets,
    coverage_loss_rate,
    evaluate,
    evaluate_factor,
    recommend,
    redundancy_rate,
)
from dustless.errors import InvalidOption

# --- Methods written with plain string operations, so these tests do not depend on the
# normalizer package: the analysis core only ever sees `url -> normalized url` functions.


def _split(url: str) -> tuple[str, str]:
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}", slash + path


def lower_path(url: str) -> str:
    origin, path = _split(url)
    return origin + path.lower()


def upper_path(url: str) -> str:
    origin, path = _split(url)
    return origin + path.upper()


# The worked example treats default.asp as a default document (IIS); §4.4 then measures
# only index.htm, index.html and default.htm.
EXAMPLE_DEFAULT_DOCUMENTS = ("default.asp", "index.htm", "index.html", "default.htm")


def remove_default_document(url: str) -> str:
    for name in EXAMPLE_DEFAULT_DOCUMENTS:
        if url.endswith("/" + name):
            return url[: -len(name)]
    return url


def add_slash(url: str) -> str:
    _origin, path = _split(url)
    return url if path.endswith("/") else url + "/"


def remove_slash(url: str) -> str:
    _origin, path = _split(url)
    return url[:-1] if len(path) > 1 and path.endswith("/") else url


PATH_CASE = Factor(
    "path-case",
    (
        MethodSpec("none", None),
        MethodSpec("lowercase", lower_path, frozenset({"lowercase-path"})),
        MethodSpec("uppercase", upper_path, frozenset({"uppercase-path"})),
    ),
)
DEFAULT_DOCUMENT = Factor(
    "default-document",
    (
        MethodSpec("none", None),
        MethodSpec("remove", remove_default_document, frozenset({"remove-default-document"})),
    ),
)
TRAILING_SLASH = Factor(
    "trailing-slash",
    (
        MethodSpec("none", None),
        MethodSpec("add", add_slash, frozenset({"add-trailing-slash"})),
        MethodSpec("remove", remove_slash, frozenset({"remove-trailing-slash"})),
    ),
    key=add_slash,
)


def ok(url: str, doc: str) -> Observation:
    return Observation(url, requested=True, success=True, payload_hash=doc)


def failed(url: str) -> Observation:
    return Observation(url, requested=True, success=False)


# --- The worked example of seed 000 §3: U = {u1, …, u10}, scheme omitted in the paper.
U1, U2, U3, U4 = (
    "http://www.microsoft.com/",
    "http://www.microsoft.com/default.asp",
    "http://www.microsoft.com/index.htm",
    "http://www.microsoft.com/index.html",
)
U5, U6 = "http://nasdaq.com/asp/ownership.asp", "http://nasdaq.com/ASP/ownership.asp"
U7, U8, U9 = "http://ietf.org/tao.html", "http://ietf.org/TAO.html", "http://ietf.org/Tao.html"
U10 = "http://www.acm.org/"

EXAMPLE = CrawlIndex.build(
    [
        # Documents ㉔ ㉕ ㉖ ㉗ of u1–u4: two distinct contents (4 − 2 in the numerator), and
        # normalizing to u1 loses ㉖, the document of u3.
        ok(U1, "doc-24"),
        ok(U2, "doc-24"),
        ok(U3, "doc-26"),
        ok(U4, "doc-24"),
        # ㉘ ㉙ of u5, u6: one document (nasdaq's server ignores path case).
        ok(U5, "doc-28"),
        ok(U6, "doc-28"),
        # The text says u7, u8, u9 gave ㉚ ㉛ ㉜ with only ㉛ failing, but its own figures,
        # ((2−1)+(1−1))/(2+1), count a single download in U6 = {u7, u8, u9}: they hold
        # when, of U6, only u7's document was downloaded. So u8 and u9 fail here.
        ok(U7, "doc-30"),
        failed(U8),
        failed(U9),
        ok(U10, "doc-acm"),
    ]
)


def test_example_candidate_sets_by_default_document() -> None:
    sets = candidate_sets(EXAMPLE.urls, remove_default_document)
    # U1 = {u1, u2, u3, u4}; U2 … U7 are singletons and left out.
    assert [s.urls for s in sets] == [(U1, U2, U3, U4)]


def test_example_candidate_sets_by_path_case() -> None:
    sets = candidate_sets(EXAMPLE.urls, lower_path)
    # U5 = {u5, u6}, U6 = {u7, u8, u9}; the other five are singletons.
    assert [s.urls for s in sets] == [(U5, U6), (U7, U8, U9)]


def test_worked_example_default_document_gives_0_5_and_0_5() -> None:
    none, remove = evaluate_factor(EXAMPLE, DEFAULT_DOCUMENT)
    # redundancy = (4 − 2)/4 = 0.5
    assert none.set_redundancy_rate == 0.5
    assert none.redundancy_rate == 0.5
    assert (none.requests, none.downloads, none.unique_documents) == (4, 4, 2)
    assert none.coverage_loss_rate == 0.0
    # Normalizing U1 to u1: coverage loss = 1 − 1/2 = 0.5 (document ㉖ is lost).
    assert remove.requests == 1
    assert remove.normal_documents == 1
    assert remove.coverage_loss_rate == 0.5
    assert remove.coverage_loss_measured
    assert remove.redundancy_rate == 0.0
    assert remove.set_redundancy_rate == 0.5


def test_worked_example_path_case_gives_0_33_and_0() -> None:
    none, lower, _ = evaluate_factor(EXAMPLE, PATH_CASE)
    # redundancy = ((2 − 1) + (1 − 1)) / (2 + 1) = 0.33
    assert none.set_downloads == 3
    assert none.set_unique_documents == 2
    assert round(none.set_redundancy_rate, 2) == 0.33
    assert none.set_redundancy_rate == pytest.approx(1 / 3)
    # Normalizing U5 to u5 and U6 to u7 (lowercase): coverage loss = 1 − 2/2 = 0.
    assert lower.normal_documents == 2
    assert lower.coverage_loss_rate == 0.0
    assert lower.coverage_loss_measured


def test_formulas_on_their_own() -> None:
    assert redundancy_rate(4, 2) == 0.5
    assert redundancy_rate(0, 0) == 0.0
    assert coverage_loss_rate(1, 2) == 0.5
    assert coverage_loss_rate(0, 0) == 0.0
    with pytest.raises(InvalidOption):
        redundancy_rate(2, 3)
    with pytest.raises(InvalidOption):
        coverage_loss_rate(3, 2)


# --- A small synthetic crawl, shaped like Table 1.


def synthetic_crawl() -> list[Observation]:
    """Two factors, with the normalized forms fetched as `evaluate --fetch` would."""
    obs: list[Observation] = []
    # Path case on a case-insensitive (IIS) host: 8 sets /Page{i}, /page{i}, /PAGE{i}, one
    # page each.
    for i in range(8):
        for path in (f"/Page{i}", f"/page{i}", f"/PAGE{i}"):
            obs.append(ok(f"http://iis.test{path}", f"iis-{i}"))
    # … and on a case-sensitive (Unix) host: 2 sets where /Doc{i} and /doc{i} are different
    # pages and /DOC{i} is a 404.
    for i in range(2):
        obs += [
            ok(f"http://unix.test/Doc{i}", f"Doc-{i}"),
            ok(f"http://unix.test/doc{i}", f"doc-{i}"),
        ]
        obs.append(failed(f"http://unix.test/DOC{i}"))
    # Trailing slash: 9 directories /d{i} redirect to /d{i}/ (one page each); /file is a file
    # and /file/ a 404.
    for i in range(9):
        obs += [
            ok(f"http://apache.test/d{i}", f"dir-{i}"),
            ok(f"http://apache.test/d{i}/", f"dir-{i}"),
        ]
    obs += [ok("http://apache.test/file", "file"), failed("http://apache.test/file/")]
    return obs


def synthetic_rows() -> dict[tuple[str, str], MethodRow]:
    index = CrawlIndex.build(synthetic_crawl())
    return {(r.factor, r.method): r for r in evaluate(index, [PATH_CASE, TRAILING_SLASH])}


def test_table_1_shaped_rows() -> None:
    rows = synthetic_rows()

    none = rows["path-case", "none"]
    assert (none.sets, none.candidate_urls, none.requests) == (10, 30, 30)
    assert (none.downloads, none.unique_documents) == (28, 12)
    assert none.redundancy_rate == pytest.approx(16 / 28)
    assert none.coverage_loss_rate == 0.0

    lower = rows["path-case", "lowercase"]
    assert (lower.requests, lower.downloads, lower.unique_documents) == (10, 10, 10)
    assert lower.redundancy_rate == 0.0
    # Each Unix set keeps one of its two pages: 1 − 10/12.
    assert lower.coverage_loss_rate == pytest.approx(1 - 10 / 12)
    assert lower.coverage_loss_measured
    assert lower.duplicates_removed == 16

    upper = rows["path-case", "uppercase"]
    # Uppercasing requests the Unix 404s and keeps neither page: 1 − 8/12. As in Table 1
    # (0.01 vs 0.11), lowercase loses less than uppercase.
    assert upper.coverage_loss_rate == pytest.approx(1 - 8 / 12)
    assert upper.coverage_loss_measured

    slash = rows["trailing-slash", "none"]
    assert (slash.sets, slash.downloads, slash.unique_documents) == (10, 19, 10)
    assert slash.redundancy_rate == pytest.approx(9 / 19)
    add, remove = rows["trailing-slash", "add"], rows["trailing-slash", "remove"]
    # Adding the slash requests /file/, a 404: that page is lost. Removing it loses nothing.
    assert add.coverage_loss_rate == pytest.approx(0.1)
    assert remove.coverage_loss_rate == 0.0
    assert add.redundancy_rate == remove.redundancy_rate == 0.0
    assert add.steps == FACTOR_METHODS["trailing-slash"]["add"]


def test_recommendation_within_the_budget() -> None:
    rows = synthetic_rows().values()
    tight = recommend(rows, 0.01)
    assert tight.choices == (("trailing-slash", "remove"),)
    assert tight.steps == {"remove-trailing-slash"}
    assert tight.duplicates_removed == 9
    loose = recommend(rows, 0.2)
    assert loose.choices == (("path-case", "lowercase"), ("trailing-slash", "remove"))
    assert loose.steps == {"lowercase-path", "remove-trailing-slash"}
    assert loose.coverage_loss == pytest.approx(1 / 6)
    assert recommend(rows, 0.0).choices == (("trailing-slash", "remove"),)
    # Summed losses: 1/6 + 0 fits 0.17, and a budget below 1/6 leaves lowercase out.
    assert recommend(rows, 0.17, combine="sum").choices == loose.choices
    assert recommend(rows, 0.16, combine="sum").choices == tight.choices
    with pytest.raises(InvalidOption):
        recommend(rows, 1.5)


def paper_row(p: PaperRow) -> MethodRow:
    """A row with Table 1's rates: 100 distinct documents in the factor's candidate sets."""
    unique = 100
    base = next(q for q in PAPER_TABLE_1 if q.factor == p.factor and q.method == "none")
    set_downloads = round(unique / (1 - base.redundancy_rate))
    merged = p.method != "none"
    normal = round(unique * (1 - p.coverage_loss_rate))
    return MethodRow(
        factor=p.factor,
        method=p.method,
        steps=FACTOR_METHODS[p.factor][p.method],
        candidate_urls=set_downloads,
        sets=unique,
        requests=unique if merged else set_downloads,
        downloads=normal if merged else set_downloads,
        unique_documents=normal if merged else unique,
        redundancy_rate=p.redundancy_rate,
        normal_documents=normal,
        coverage_loss_rate=p.coverage_loss_rate,
        coverage_loss_measured=True,
        unmeasured_sets=0,
        set_downloads=set_downloads,
        set_unique_documents=unique,
        set_redundancy_rate=base.redundancy_rate,
    )


def test_paper_recommendation_from_table_1() -> None:
    # Seed 000 §5: accepting about 1 % loss picks lowercase path and *add* slash (the text's
    # figures; Table 1 prints the slash losses swapped) and rejects www and default document.
    rows = [paper_row(p) for p in PAPER_TABLE_1]
    assert {r.method: r.redundancy_rate for r in rows if r.factor == "path-case"} == {
        "none": 0.52,
        "lowercase": 0.0,
        "uppercase": 0.0,
    }
    rec = recommend(rows, 0.01)
    assert rec.choices == (("path-case", "lowercase"), ("trailing-slash", "add"))
    assert rec.steps == {"lowercase-path", "add-trailing-slash"}
    assert rec.coverage_loss == 0.01
    # With 10 %, removing `www` (0.09) joins; adding it (0.13) and the default document
    # (0.19) still do not.
    assert ("www", "remove") in recommend(rows, 0.10).choices
    assert len(recommend(rows, 0.10).choices) == 3


def test_coverage_loss_is_an_estimate_until_the_normalized_forms_are_fetched() -> None:
    crawl = [ok("http://u.test/aB", "x"), ok("http://u.test/Ab", "y")]
    _, lower, upper = evaluate_factor(CrawlIndex.build(crawl), PATH_CASE)
    # Neither /ab nor /AB was ever requested: the estimate counts the set as not covered.
    for row in (lower, upper):
        assert not row.coverage_loss_measured
        assert row.unmeasured_sets == 1
        assert row.coverage_loss_rate == 1.0
    # `evaluate --fetch` requests them: /ab answers with the page of /aB, /AB is a 404.
    crawl += [ok("http://u.test/ab", "x"), failed("http://u.test/AB")]
    none, lower, upper = evaluate_factor(CrawlIndex.build(crawl), PATH_CASE)
    assert lower.coverage_loss_measured
    assert upper.coverage_loss_measured
    assert (none.set_downloads, none.set_unique_documents) == (3, 2)
    assert lower.coverage_loss_rate == 0.5
    assert upper.coverage_loss_rate == 1.0


def test_an_unrequested_url_does_not_make_the_none_row_an_estimate() -> None:
    crawl = [
        ok("http://u.test/a", "x"),
        ok("http://u.test/A", "x"),
        Observation("http://u.test/aA", False),
    ]
    crawl.append(Observation("http://u.test/Aa", False))
    none, *_ = evaluate_factor(CrawlIndex.build(crawl), PATH_CASE)
    assert none.coverage_loss_measured
    assert none.coverage_loss_rate == 0.0


def test_a_normalized_form_outside_the_set_recovers_nothing_beyond_it() -> None:
    # The method's form answers 200 with a page never seen in the set (a soft 404, say): as
    # in §3 it counts as a downloaded document, but N_normal is capped at un(D_i) = 1, so
    # the rate stays a rate.
    index = CrawlIndex.build(
        [ok("http://u.test/a", "page"), ok("http://u.test/A", "page"), ok("http://u.test/B", "x")]
    )
    rows = evaluate_factor(
        index, Factor("f", (MethodSpec("odd", lambda u: "http://u.test/B"),), key=lower_path)
    )
    assert rows[0].coverage_loss_rate == 0.0
    assert rows[0].normal_documents == 1


def test_observations_are_validated_and_merged() -> None:
    with pytest.raises(InvalidOption, match="never requested"):
        Observation("http://a.test/", requested=False, success=True, payload_hash="x")
    with pytest.raises(InvalidOption, match="payload hash"):
        Observation("http://a.test/", requested=True, success=True)
    index = CrawlIndex.build(
        [
            Observation("http://a.test/", False),
            failed("http://a.test/"),
            ok("http://a.test/", "h"),
            failed("http://a.test/"),
        ]
    )
    assert len(index) == 1
    assert index.get("http://a.test/") == ok("http://a.test/", "h")
    assert index.get("http://b.test/") is None
    assert "http://a.test/" in index


def test_factor_without_a_changing_method_needs_a_key() -> None:
    with pytest.raises(InvalidOption, match="key"):
        evaluate_factor(EXAMPLE, Factor("f", (MethodSpec("none", None),)))
