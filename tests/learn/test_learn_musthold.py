"""What learned rules must achieve, on the test web's ``dirty`` profile with its truth file as
the judge: a second crawl with the learned rules fetches at least 50 % fewer duplicate
documents than the first crawl under policy ``standard``, with a coverage loss of at most 1 %.

The second crawl runs ``dustless crawl --policy standard --rules FILE`` through the CLI, so
this test also holds the ``--rules`` option to its promise; the figures are printed (``-s``).

With the redirect rules too (``addSlash``, ``hostRedirect``), a redirect whose target has the
redirecting URL's identity is followed as the same document (``dustless.crawl.redirect``), so
no page is lost when the redirecting spelling is met first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from learn import dust_experiment as experiment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def first_crawl(tmp_path_factory: pytest.TempPathFactory):
    # The module's own test web (not the shared pool): the second crawls must meet the very
    # server the first one did, and the truth file must cover what both fetched.
    from testweb_fixture import start_testweb

    work = tmp_path_factory.mktemp("dust")
    web = start_testweb(work / "web", profile="dirty")
    try:
        first = work / "crawl1"
        experiment.crawl(web.seeds, first, web.resolve_args)
        yield web, first, work
    finally:
        web.stop()


def second_crawl(first_crawl, name: str, *learn_options: str) -> experiment.Outcome:
    web, first, work = first_crawl
    rules, second = work / f"{name}.xml", work / name
    experiment.learn(first, rules, *learn_options)
    experiment.crawl(web.seeds, second, web.resolve_args, rules)
    # The option reached the crawl: its stored settings name the file (and --resume reuses it).
    assert experiment.crawl_rules(second) == (str(rules.absolute()),)
    assert experiment.crawl_rules(first) == ()
    outcome = experiment.judge(first, second, rules, Path(web.truth_path))
    print(f"\n{name}:\n" + "\n".join(outcome.lines()))
    return outcome


def test_content_learned_rules_halve_the_duplicates_without_losing_pages(first_crawl):
    outcome = second_crawl(first_crawl, "content", "--no-redirects")
    report = "\n".join(outcome.lines())
    assert outcome.first.duplicates > 100, report  # the dirty web has DUST to remove
    assert outcome.duplicate_reduction >= 0.5, report
    assert outcome.coverage_loss <= 0.01, report
    assert outcome.false_merge_rate <= 0.01, report


def test_all_learned_rules_halve_the_duplicates_without_losing_pages(first_crawl):
    outcome = second_crawl(first_crawl, "all")
    report = "\n".join(outcome.lines())
    assert outcome.duplicate_reduction >= 0.5, report
    assert outcome.false_merge_rate <= 0.01, report
    assert outcome.coverage_loss <= 0.01, report
