"""``dustless evaluate``: seed 000 §3's metrics on crawl DBs built through the store's API.

The analysis package tests the formulas on plain observations; these tests check the whole
way from a crawl directory — SQL, standard normalization, the normalizer's real steps as the
methods, redirects, probe batches, truth, JSON and text output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.analysis._evaluate import (
    FACTOR_ORDER,
    Evaluation,
    EvaluationRow,
    build_factors,
    evaluate_crawl,
    load_observations,
    unfetched_forms,
)
from dustless.analysis._factors import _factor_key, _step_method
from dustless.analysis._jsonio import from_jsonable, to_jsonable
from dustless.cli.main import main
from dustless.store import open_crawl
from dustless.url import normalize
from stats.crawl_builder import Page, build_crawl

PROBE = json.dumps({"kind": "evaluate-fetch"})
JSON_ROW_FIELDS = {
    "factor",
    "method",
    "candidate_urls",
    "sets",
    "requests",
    "downloads",
    "unique_documents",
    "redundancy_rate",
    "coverage_loss_rate",
    "coverage_loss_measured",
    "true_fp_rate",
    "true_fn_rate",
    "host",
}
# The worked example of seed 000 §3 counts default.asp (IIS) as a default document.
EXAMPLE_DEFAULTS = ("default.asp", "index.htm", "index.html", "default.htm")

# Seed 000 §3's U = {u1 … u10}; documents ㉔–㉜ in the paper (its glyphs are garbled).
EXAMPLE = [
    # u1–u4: two distinct contents; normalizing U1 to u1 loses ㉖, the document of u3.
    Page("http://www.microsoft.com/", doc="24"),
    Page("http://www.microsoft.com/default.asp", doc="24"),
    Page("http://www.microsoft.com/index.htm", doc="26"),
    Page("http://www.microsoft.com/index.html", doc="24"),
    # u5, u6: one document (nasdaq's server ignores path case).
    Page("http://nasdaq.com/asp/ownership.asp", doc="28"),
    Page("http://nasdaq.com/ASP/ownership.asp", doc="28"),
    # The text says only ㉛ (u8) failed, but its own figures ((2−1)+(1−1))/(2+1) count one
    # download in U6 = {u7, u8, u9}: they hold when, of U6, only u7's document was
    # downloaded. So u8 and u9 fail here.
    Page("http://ietf.org/tao.html", doc="30"),
    Page("http://ietf.org/TAO.html", state="code", status=404),
    Page("http://ietf.org/Tao.html", state="cErr", status=None),
    Page("http://www.acm.org/", doc="acm", depth=0),
]


def _row(ev: Evaluation, factor: str, method: str) -> EvaluationRow:
    return next(r for r in ev.rows if (r.factor, r.method) == (factor, method))


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_crawl(tmp_path_factory.mktemp("ev") / "example", EXAMPLE)


@pytest.fixture(scope="module")
def example_eval(example: Path) -> Evaluation:
    with open_crawl(example) as db:
        return evaluate_crawl(db, default_documents=EXAMPLE_DEFAULTS)


def test_worked_example_default_document_gives_0_5_and_0_5(example_eval: Evaluation) -> None:
    none = _row(example_eval, "default-document", "none")
    remove = _row(example_eval, "default-document", "remove")
    # redundancy = (4 − 2) / 4 = 0.5 (000 §3)
    assert (none.requests, none.downloads, none.unique_documents) == (4, 4, 2)
    assert none.redundancy_rate == 0.5
    # coverage loss = 1 − 1/2 = 0.5, measured: u1 was fetched.
    assert remove.coverage_loss_rate == 0.5
    assert remove.coverage_loss_measured
    assert (remove.requests, remove.redundancy_rate) == (1, 0.0)


def test_worked_example_path_case_gives_0_33_and_0(example_eval: Evaluation) -> None:
    none = _row(example_eval, "path-case", "none")
    lower = _row(example_eval, "path-case", "lowercase")
    assert (none.sets, none.candidate_urls, none.downloads) == (2, 5, 3)
    assert round(none.redundancy_rate, 2) == 0.33
    # U5 → u5 and U6 → u7 (their lowercase forms): 1 − 2/2 = 0.
    assert lower.coverage_loss_rate == 0.0
    assert lower.coverage_loss_measured


def test_the_paper_defaults_leave_default_asp_alone(example: Path) -> None:
    with open_crawl(example) as db:
        ev = evaluate_crawl(db)  # index.htm, index.html, default.htm only (000 §4.4)
    none = _row(ev, "default-document", "none")
    assert none.candidate_urls == 3


def test_rows_have_every_factor_and_method_in_order(example_eval: Evaluation) -> None:
    assert tuple(dict.fromkeys(r.factor for r in example_eval.rows)) == FACTOR_ORDER
    assert FACTOR_ORDER == (
        "path-case",
        "trailing-slash",
        "www",
        "default-document",
        "sort-query",
        "fragment",
        "collapse-slashes",
        "tracking-params",
        "path-params",
        "sort-view-params",
        "variant-params",
        "variant-paths",
        "variant-hosts",
        "query-to-path",
    )
    methods = [(r.factor, r.method) for r in example_eval.rows][:3]
    assert methods == [
        ("path-case", "none"),
        ("path-case", "lowercase"),
        ("path-case", "uppercase"),
    ]


def test_a_form_never_requested_is_an_estimate_until_fetched(tmp_path: Path) -> None:
    out = build_crawl(
        tmp_path / "c",
        [
            Page("http://iis.test/Asp/x", doc="A"),
            Page("http://iis.test/ASP/x", doc="A"),
            Page("http://unix.test/Doc", doc="B"),
            Page("http://unix.test/doc", doc="C"),
        ],
    )
    with open_crawl(out) as db:
        before = evaluate_crawl(db, reading="paper")
        crawler = evaluate_crawl(db)
        obs = load_observations(db)
        forms = unfetched_forms(obs, build_factors())
    # As the crawler fetches: /Asp/x gives A; /Doc is fetched for {Doc, doc}, C is lost.
    lower = _row(crawler, "path-case", "lowercase")
    assert lower.coverage_loss_measured
    assert lower.coverage_loss_rate == pytest.approx(1 / 3)
    lower = _row(before, "path-case", "lowercase")
    assert not lower.coverage_loss_measured
    # /asp/x was never requested: counted as lost, so 1 − 1/3 (only unix.test/doc covered).
    assert lower.coverage_loss_rate == pytest.approx(2 / 3)
    assert "http://iis.test/asp/x" in forms
    assert "http://unix.test/DOC" in forms  # the uppercase method's form
    # `evaluate --fetch` records what the forms gave in a probe batch.
    build_crawl(
        out,
        [
            Page("http://iis.test/asp/x", doc="A"),
            Page("http://iis.test/ASP/X", doc="A"),
            Page("http://unix.test/DOC", state="code", status=404),
        ],
        batch_config=PROBE,
    )
    with open_crawl(out) as db:
        after = evaluate_crawl(db, reading="paper")
    lower = _row(after, "path-case", "lowercase")
    upper = _row(after, "path-case", "uppercase")
    assert lower.coverage_loss_measured
    assert lower.coverage_loss_rate == pytest.approx(1 / 3)
    assert upper.coverage_loss_measured
    assert upper.coverage_loss_rate == pytest.approx(2 / 3)
    # The probes are lookups only: the crawl's own sets and "none" rows do not move.
    assert _row(after, "path-case", "none") == _row(before, "path-case", "none")
    assert after.probe_fetches == 3
    assert after.urls == before.urls == 4


def test_a_redirect_counts_with_its_targets_document(tmp_path: Path) -> None:
    pages = [
        Page("http://a.test/pubs", state="code", status=301, location="http://a.test/pubs/"),
        Page("http://a.test/pubs/", doc="P"),
    ]
    out = build_crawl(tmp_path / "c", pages)
    with open_crawl(out) as db:
        ev = evaluate_crawl(db)
        plain = evaluate_crawl(db, follow_redirects=False, reading="paper")
        fallback = evaluate_crawl(db, follow_redirects=False)
    # 000 §4.2: /pubs redirects to /pubs/, which is why the two are the same URL.
    none = _row(ev, "trailing-slash", "none")
    remove = _row(ev, "trailing-slash", "remove")
    assert (none.downloads, none.unique_documents, none.redundancy_rate) == (2, 1, 0.5)
    assert remove.coverage_loss_rate == 0.0
    assert _row(plain, "trailing-slash", "remove").coverage_loss_rate == 1.0
    # The crawler falls back to the next spelling when /pubs gives no document: nothing lost.
    assert _row(fallback, "trailing-slash", "remove").coverage_loss_rate == 0.0
    assert _row(fallback, "trailing-slash", "remove").requests == 2


def test_seed_001_factors(tmp_path: Path) -> None:
    pages = [
        Page("http://a.test/l?a=1&b=2", doc="L"),
        Page("http://a.test/l?b=2&a=1", doc="L"),
        Page("http://a.test/p?utm_source=x", doc="P"),
        Page("http://a.test/p", doc="P"),
        Page("http://a.test//c", doc="C"),
        Page("http://a.test/c", doc="C2"),
        Page("http://a.test/f#one", doc="F"),
        Page("http://a.test/f#two", doc="F"),
    ]
    out = build_crawl(tmp_path / "c", pages)
    with open_crawl(out) as db:
        ev = evaluate_crawl(db)
    assert _row(ev, "sort-query", "none").redundancy_rate == 0.5
    assert _row(ev, "sort-query", "sort").coverage_loss_rate == 0.0
    assert _row(ev, "tracking-params", "none").sets == 1
    assert _row(ev, "tracking-params", "remove").coverage_loss_rate == 0.0
    collapse = _row(ev, "collapse-slashes", "collapse")
    assert collapse.coverage_loss_rate == 0.5
    fragment = _row(ev, "fragment", "none")
    assert (fragment.sets, fragment.redundancy_rate) == (1, 0.5)
    # Fragments differ only in the fragment factor: no other factor sees /f#one and /f#two.
    assert _row(ev, "path-case", "none").sets == 0


def _two_path_case_sets(tmp_path: Path) -> tuple[Path, Path]:
    """A crawl with two path-case sets — one resource (IIS), two resources (Unix) — and its
    truth file."""
    pages = [
        Page("http://iis.test/A", doc="A"),
        Page("http://iis.test/a", doc="A"),
        Page("http://unix.test/B", doc="B1"),
        Page("http://unix.test/b", doc="B2"),
    ]
    out = build_crawl(tmp_path / "c", pages)
    truth = tmp_path / "truth.tsv"
    truth.write_text(
        "url\tstatus\tresource-id\n"
        "http://iis.test/A\t200\tr1\nhttp://iis.test/a\t200\tr1\n"
        "http://unix.test/B\t200\tr2\nhttp://unix.test/b\t200\tr3\n"
    )
    return out, truth


def test_truth_gives_true_fp_and_fn(tmp_path: Path) -> None:
    out, truth = _two_path_case_sets(tmp_path)
    with open_crawl(out) as db:
        from dustless.analysis._truth import parse_truth

        ev = evaluate_crawl(db, truth=parse_truth(truth.read_text().splitlines()))
    none = _row(ev, "path-case", "none")
    lower = _row(ev, "path-case", "lowercase")
    # Two same-resource pairs? One (iis). One different pair (unix).
    assert (none.true_fp_rate, none.true_fn_rate) == (0.0, 1.0)
    assert (lower.true_fp_rate, lower.true_fn_rate) == (1.0, 0.0)
    assert _row(ev, "www", "none").true_fp_rate == 0.0


def test_truth_of_a_redirect_is_its_targets(tmp_path: Path) -> None:
    pages = [
        Page("http://a.test/pubs", state="code", status=301, location="http://a.test/pubs/"),
        Page("http://a.test/pubs/", doc="P"),
        Page("http://a.test/docs", state="code", status=301, location="http://a.test/docs/"),
        Page("http://a.test/docs/", doc="D"),
    ]
    out = build_crawl(tmp_path / "c", pages)
    truth = {
        "http://a.test/pubs": "redirect",  # the test web's spelling of "no resource of its own"
        "http://a.test/pubs/": "p",
        "http://a.test/docs": "redirect",
        "http://a.test/docs/": "d",
    }
    with open_crawl(out) as db:
        ev = evaluate_crawl(db, truth=truth)
    add = _row(ev, "trailing-slash", "add")
    none = _row(ev, "trailing-slash", "none")
    assert (add.true_fp_rate, add.true_fn_rate) == (0.0, 0.0)
    assert none.true_fn_rate == 1.0
    detail = next(d for d in ev.details if (d.factor, d.method) == ("trailing-slash", "none"))
    assert (detail.true_pairs, detail.true_same_pairs) == (2, 2)


def test_recommendation_respects_the_budget(example_eval: Evaluation) -> None:
    rec = example_eval.recommendation
    assert rec.policy == "standard + lowercase-path"
    assert ("path-case", "lowercase") in rec.choices
    assert ("default-document", "remove") not in rec.choices  # loses 0.5


def test_cli_json_has_the_documented_fields(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = ",".join(EXAMPLE_DEFAULTS)
    assert main(["evaluate", str(example), "--json", "--default-documents", docs]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"rows", "recommended_policy"} <= set(data)
    assert all(set(r) == JSON_ROW_FIELDS for r in data["rows"])
    assert {r["factor"] for r in data["rows"]} == set(FACTOR_ORDER)
    dd = next(r for r in data["rows"] if (r["factor"], r["method"]) == ("default-document", "none"))
    assert dd["redundancy_rate"] == 0.5
    assert data["recommended_policy"] == "standard + lowercase-path"
    # The whole evaluation round-trips through JSON for `report`.
    with open_crawl(example) as db:
        ev = evaluate_crawl(db)
    assert from_jsonable(Evaluation, json.loads(json.dumps(to_jsonable(ev)))) == ev


def test_cli_text_is_table_1_shaped(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(example), "--max-loss", "0.6"]) == 0
    out = capsys.readouterr().out
    assert "seed 000 Table 1" in out
    assert "paper R/L" in out
    assert "0.52/0.00" in out
    assert "recommended policy (coverage loss <= 0.6 per method, all hosts)" in out
    assert "remove-default-document" in out  # 0.5 fits a 0.6 budget


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-loss", "2"], "--max-loss"),
        (["--truth", "/nonexistent/t.tsv"], "/nonexistent/t.tsv: cannot read"),
        (["--truth", "BAD_TRUTH"], "BAD_TRUTH:2: not UTF-8 text"),
        (["--default-documents", "a/index.html"], "file names"),
    ],
)
@pytest.mark.parametrize("command", [["evaluate"], ["report", "-o", "unused.html"]])
def test_cli_bad_options(
    example: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
    command: list[str],
) -> None:
    # `report` evaluates too: the same options, checked the same way.
    bad = example.parent / "bad-truth.tsv"  # a truth file with a byte that is no UTF-8
    bad.write_bytes(b"http://a.test/\t200\tr1\nhttp://a.test/caf\xe9\t200\tr2\n")
    args = [str(bad) if a == "BAD_TRUTH" else a for a in args]
    message = message.replace("BAD_TRUTH", str(bad))
    assert main([command[0], str(example), *command[1:], *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_cli_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err


# The fast grouping keys (no URL parsing) group exactly as the normalizer's steps do.
_SEGMENT = st.sampled_from(["a", "A", "Index.html", "index.html", "x.PDF", "", "%C3%A9", "b"])
_HOST = st.sampled_from(["a.test", "www.a.test", "WWW.b.co.kr", "b.co.kr", "www.com", "u:P@a.test"])


@st.composite
def _urls(draw: st.DrawFn) -> str:
    path = "/".join(draw(st.lists(_SEGMENT, max_size=4)))
    tail = draw(st.sampled_from(["", "/", "//", "?q=A", "?a&b", "#F", "/?x#y"]))
    return normalize(f"http://{draw(_HOST)}/{path}{tail}", "rfc3986")


@settings(max_examples=150, deadline=None)
@given(st.lists(_urls(), min_size=2, max_size=6))
def test_fast_keys_group_like_the_normalizer(urls: list[str]) -> None:
    docs = ("index.htm", "index.html", "default.htm")
    steps = {
        "path-case": "lowercase-path",
        "trailing-slash": "remove-trailing-slash",
        "www": "remove-www",
        "fragment": "remove-fragment",
    }
    for factor, step in steps.items():
        fast, slow = _factor_key(factor, docs), _step_method(step, docs)
        for u in urls:
            for v in urls:
                assert (fast(u) == fast(v)) == (slow(u) == slow(v)), (factor, u, v)


def test_cli_reads_the_test_webs_status_0_lines(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = tmp_path / "truth.tsv"
    truth.write_text(
        "http://nasdaq.com/asp/ownership.asp\t200\tn1\n"
        "http://nasdaq.com/ASP/ownership.asp\t200\tn1\n"
        "http://x.test/reset/before.html\t0\treset\n"  # a connection reset: no HTTP status
    )
    assert main(["evaluate", str(example), "--truth", str(truth), "--json"]) == 0
    rows = _rows_by_key(json.loads(capsys.readouterr().out))
    assert rows["path-case", "none"]["true_fn_rate"] == 1.0
    assert rows["path-case", "lowercase"]["true_fn_rate"] == 0.0


def test_cli_shows_the_share_of_wrong_merges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Lowercasing merges the IIS pair rightly and the Unix pair wrongly.
    out, truth = _two_path_case_sets(tmp_path)
    assert main(["evaluate", str(out), "--truth", str(truth), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    details = {(d["factor"], d["method"]): d for d in data["details"]}
    lower = details["path-case", "lowercase"]
    assert (lower["merged_pairs"], lower["false_positives"]) == (2, 1)
    assert lower["wrong_merge_share"] == 0.5
    assert details["path-case", "none"]["wrong_merge_share"] == 0.0
    assert main(["evaluate", str(out), "--truth", str(truth)]) == 0
    text = capsys.readouterr().out
    assert "wrong/merged" in text
    assert re.search(r"lowercase +[0-9]+ +2 +1 +0\.500", text)
    assert all(len(line) <= 100 for line in text.splitlines())


def _rows_by_key(
    data: dict[str, list[dict[str, object]]],
) -> dict[tuple[object, object], dict[str, object]]:
    return {(r["factor"], r["method"]): r for r in data["rows"]}


@pytest.mark.parametrize("reading", ["paper", "crawler"])
def test_worked_examples_come_out_exactly_with_exact_content(example: Path, reading: str) -> None:
    with open_crawl(example) as db:
        ev = evaluate_crawl(
            db, default_documents=EXAMPLE_DEFAULTS, content="exact", reading=reading
        )
    assert ev.content == "exact"
    none = _row(ev, "default-document", "none")
    remove = _row(ev, "default-document", "remove")
    assert (none.redundancy_rate, remove.coverage_loss_rate) == (0.5, 0.5)
    path = _row(ev, "path-case", "none")
    assert round(path.redundancy_rate, 2) == 0.33
    assert _row(ev, "path-case", "lowercase").coverage_loss_rate == 0.0
    # Per host: the sets of www.microsoft.com and of nasdaq.com, each on its own.
    hosts = {r.host for r in ev.host_rows if r.sets}
    assert {"www.microsoft.com", "nasdaq.com", "ietf.org"} <= hosts
    ms = next(
        r
        for r in ev.host_rows
        if (r.host, r.factor, r.method) == ("www.microsoft.com", "default-document", "none")
    )
    assert ms.redundancy_rate == 0.5
