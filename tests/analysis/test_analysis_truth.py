"""True false-positive / false-negative rates against the test web's truth file."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.analysis import (
    CrawlIndex,
    Factor,
    MethodSpec,
    Observation,
    TruthEntry,
    evaluate_factor,
    parse_truth,
    parse_truth_line,
)
from dustless.analysis._truth import PairCounter
from dustless.errors import InvalidOption

TRUTH_TSV = """\
# url\tstatus\tresource-id
url\tstatus\tresource-id
http://iis.test/Page\t200\tiis-page
http://iis.test/page\t200\tiis-page
http://iis.test/PAGE\t200\tiis-page
http://unix.test/Doc\t200\tunix-Doc
http://unix.test/doc\t200\tunix-doc
http://unix.test/DOC\t404\t-
http://unix.test/Gone\t404\t
http://unix.test/gone\t410\t-

http://day.test/news\t200\tday-news\t0.5
"""


def test_parse_truth_lines() -> None:
    truth = parse_truth(TRUTH_TSV.splitlines(keepends=True))
    assert truth["http://iis.test/PAGE"] == "iis-page"
    assert truth["http://unix.test/DOC"] is None
    assert truth["http://unix.test/Gone"] is None
    assert len(truth) == 9
    assert parse_truth_line("http://day.test/news\t200\tday-news\t0.5\r\n") == TruthEntry(
        "http://day.test/news", 200, "day-news", ("0.5",)
    )
    assert parse_truth_line("   \n") is None


def test_status_zero_is_the_test_webs_connection_reset() -> None:
    # docs/testweb.md: a reset before any byte is written as status 0 (old files named it
    # resource "reset"): no status, and no resource.
    entry = parse_truth_line("http://h.test/reset/before.html\t0\treset\n", 1)
    assert entry == TruthEntry("http://h.test/reset/before.html", None, None, ())


def test_old_truth_files_name_404s_and_redirects_but_they_are_no_resources() -> None:
    old = "http://a.test/x\t404\t404\nhttp://a.test/y\t404\t404\nhttp://a.test/d\t301\tredirect\n"
    assert parse_truth(old.splitlines(keepends=True)) == {
        "http://a.test/x": None,
        "http://a.test/y": None,
        "http://a.test/d": None,
    }
    new = "url\tstatus\tresource-id\nhttp://a.test/x\t404\t-\nhttp://a.test/p\t200\ts:/p\n"
    assert parse_truth(new.splitlines(keepends=True)) == {
        "http://a.test/x": None,
        "http://a.test/p": "s:/p",
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("http://a.test/\t200", "expected url<TAB>status<TAB>resource-id"),
        ("http://a.test/ 200 r", "expected url<TAB>status<TAB>resource-id"),
        ("http://a.test/\tok\tr", "status 'ok' is not a number"),
        ("http://a.test/\t42\tr", "status 42 is not an HTTP status"),
        ("\t200\tr", "empty url"),
    ],
)
def test_bad_truth_lines_name_the_line(line: str, message: str) -> None:
    with pytest.raises(InvalidOption, match="truth line 3: " + message):
        parse_truth_line(line, 3)


def test_a_url_cannot_be_two_resources() -> None:
    with pytest.raises(InvalidOption, match="line 2"):
        parse_truth(["http://a.test/\t200\tx\n", "http://a.test/\t200\ty\n"])


def _lower_path(url: str) -> str:
    head, _, path = url.partition("://")[2].partition("/")
    return url.partition("://")[0] + "://" + head + "/" + path.lower()


def _upper_path(url: str) -> str:
    head, _, path = url.partition("://")[2].partition("/")
    return url.partition("://")[0] + "://" + head + "/" + path.upper()


PATH_CASE = Factor(
    "path-case",
    (
        MethodSpec("none", None),
        MethodSpec("lowercase", _lower_path),
        MethodSpec("uppercase", _upper_path),
    ),
)


def test_truth_rates_per_method() -> None:
    truth = parse_truth(TRUTH_TSV.splitlines())
    index = CrawlIndex.build(Observation(u, True) for u in truth)
    none, lower, upper = evaluate_factor(index, PATH_CASE, truth)
    # Sets: {Page, page, PAGE} (one resource), {Doc, doc, DOC} (two resources and a 404),
    # {Gone, gone} (two 404s: their pair counts for nothing).
    assert none.truth is not None
    assert none.truth.pairs == 3 + 3
    assert none.truth.same_pairs == 3
    # Leaving paths alone merges nothing: no false positive, all 3 same pairs missed.
    assert (none.true_fp_rate, none.true_fn_rate) == (0.0, 1.0)
    # Lowercasing merges everything: the 3 different pairs of the Unix set are false
    # positives, no false negative.
    assert (lower.true_fp_rate, lower.true_fn_rate) == (1.0, 0.0)
    assert upper.truth == lower.truth
    assert lower.truth is not None
    assert lower.truth.false_positives == 3
    assert lower.truth.unknown_urls == 0
    # Of lowercasing's 6 merged pairs (3 in the IIS set, 3 in the Unix set), the Unix 3 are
    # wrong: half its merges are wrong, which the FP rate of 1 does not say.
    assert lower.truth.merged_pairs == 6
    assert lower.truth.wrong_merge_share == 0.5
    assert none.truth.wrong_merge_share == 0.0  # merges nothing, so no merge is wrong


def test_urls_missing_from_the_truth_are_counted_not_guessed() -> None:
    index = CrawlIndex.build(
        [Observation("http://x.test/A", True), Observation("http://x.test/a", True)]
    )
    (row,) = evaluate_factor(index, Factor("f", (MethodSpec("lower", _lower_path),)), {})
    assert row.truth is not None
    assert row.truth.unknown_urls == 2
    assert row.truth.pairs == 0
    assert (row.true_fp_rate, row.true_fn_rate) == (0.0, 0.0)


def _brute_force(
    urls: list[str], forms: list[str], truth: dict[str, str | None]
) -> tuple[int, ...]:
    pairs = same = merged = fp = fn = 0
    known = [(u, f) for u, f in zip(urls, forms, strict=True) if u in truth]
    for (u, fu), (v, fv) in combinations(known, 2):
        ru, rv = truth[u], truth[v]
        if ru is None and rv is None:
            continue
        pairs += 1
        is_same = ru is not None and ru == rv
        is_merged = fu == fv
        same += is_same
        merged += is_merged
        fp += is_merged and not is_same
        fn += is_same and not is_merged
    return pairs, same, merged, fp, fn


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abcd"), st.sampled_from([None, "r1", "r2", "r3", "?"])),
        max_size=12,
    )
)
def test_pair_counter_matches_brute_force(rows: list[tuple[str, str | None]]) -> None:
    urls = [f"u{i}" for i in range(len(rows))]
    forms = [f for f, _ in rows]
    truth = {u: r for u, (_, r) in zip(urls, rows, strict=True) if r != "?"}
    counter = PairCounter()
    counter.add_set(urls, forms, truth)
    rates = counter.rates()
    assert (
        rates.pairs,
        rates.same_pairs,
        rates.merged_pairs,
        rates.false_positives,
        rates.false_negatives,
    ) == _brute_force(urls, forms, truth)
    assert 0.0 <= rates.fp_rate <= 1.0
    assert 0.0 <= rates.fn_rate <= 1.0
