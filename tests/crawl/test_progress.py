"""The crawl's progress: a live display on a terminal, a report every N seconds elsewhere."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from dustless.crawl.progress import (
    Progress,
    RunCounters,
    _Rate,
    code_groups,
    format_duration,
    pack_phrases,
    progress_lines,
)


def _busy_stats() -> RunCounters:
    """A crawl like the one that showed `errors: code 1,251`, 1,052 of them 301s."""
    s = RunCounters(started=0.0)
    for _ in range(3_000):
        s.count_state("OK", 200)
    for status, n in ((301, 1_052), (302, 80), (404, 100), (410, 2), (500, 17), (200, 5)):
        for _ in range(n):
            s.count_state("code", status)
    for state, n in (("cTim", 3), ("hErr", 1), ("dTim", 1), ("robots", 12), ("filtered", 40)):
        for _ in range(n):
            s.count_state(state)
    s.fetched = sum(s.states.values())
    s.queued, s.in_flight = 123_456, 32
    s.hosts_polite, s.hosts_backoff, s.hosts_robots, s.hosts_ready = 48, 2, 3, 1
    s.hosts_blocked = 4
    return s


def test_code_is_broken_down_by_status_and_redirects_are_no_errors() -> None:
    s = _busy_stats()
    assert s.codes[301] == 1_052
    assert s.errors == {"404": 100, "410": 2, "500": 17, "cTim": 3, "dTim": 1, "hErr": 1}
    assert "code 1,256 (200 5, 301 1,052, 302 80, 404 100, 410 2, 500 17)" in s.summary()
    groups = code_groups(s.codes)
    assert groups["redirects"] == {301: 1_052, 302: 80}
    assert groups["errors"] == {404: 100, 410: 2, 500: 17}
    assert code_groups({304: 4, 204: 1})["other answers"] == {204: 1, 304: 4}


def test_lines_show_rate_elapsed_waits_and_fit_80_columns() -> None:
    s = _busy_stats()
    lines = progress_lines(s, now=125.0, recent=10.0, width=80)
    text = "\n".join(lines)
    assert all(len(line) <= 80 for line in lines), lines
    for phrase in (
        "4,313 pages",
        "10 pages/s now",
        "35 average",
        "2m05s elapsed",
        "123,456 queued",
        "32 in flight",
        "48 hosts resting (politeness)",
        "2 backing off (server trouble)",
        "3 waiting for robots.txt",
        "OK 3,000",
        "redirects: 301 1,052",
        "302 80",
        "errors: 404 100",
        "cTim 3",
        "skipped: robots 12",
        "4 hosts given up",
    ):
        # Each phrase whole on one line: never wrapped in the middle.
        assert any(phrase in line for line in lines), (phrase, text)
    assert "301" not in text.split("errors:")[1]


@given(
    st.lists(
        st.lists(st.text(alphabet="abc.", min_size=1, max_size=30), min_size=1, max_size=6),
        max_size=8,
    ),
    st.integers(min_value=20, max_value=120),
)
def test_packing_breaks_only_between_phrases(groups: list[list[str]], width: int) -> None:
    lines = pack_phrases(groups, width)
    phrases = [p for g in groups for p in g]
    for line in lines:
        assert len(line) <= width or line.strip() in phrases  # only a phrase too wide alone
    flat = ", ".join(line.strip() for line in lines).replace("   ", ", ")
    assert (flat.split(", ") if lines else []) == phrases  # every phrase whole, in order
    for line in lines[1:]:
        assert line.startswith("  ") or len("  " + line) > width  # one report, one block


def test_recent_rate_follows_the_tail_while_the_average_lags() -> None:
    s = RunCounters(started=0.0)
    rate = _Rate(window=10.0)
    recent = 0.0
    for t in range(0, 101):  # 145 pages/s for 60 s, then 10 pages/s
        s.fetched = 145 * min(t, 60) + 10 * max(t - 60, 0)
        recent = rate.update(s, float(t))
    assert recent == 10.0
    assert s.rate(100.0) > 80


def test_duration_formats() -> None:
    assert [format_duration(x) for x in (0, 45.9, 187, 7_500)] == ["0s", "45s", "3m07s", "2h05m"]


def test_off_a_terminal_a_report_every_interval() -> None:
    out = io.StringIO()  # not a terminal
    p = Progress(out, interval=5.0)
    s = RunCounters(started=0.0)
    with p:
        for t in (0.0, 1.0, 4.9, 5.0, 7.0, 9.9, 10.0, 10.5):
            s.fetched = int(t * 10)
            p.update(s, t)
    reports = [line for line in out.getvalue().splitlines() if not line.startswith(" ")]
    assert len(reports) == 2
    assert reports[0].startswith("50 pages")
    assert all(len(line) <= 80 for line in out.getvalue().splitlines())


def test_quiet_and_interval_zero_write_nothing() -> None:
    for progress in (Progress(io.StringIO(), enabled=False), Progress(io.StringIO(), interval=0)):
        with progress:
            for t in range(30):
                progress.update(RunCounters(), float(t))
        assert not progress.enabled
        assert isinstance(progress.stream, io.StringIO)
        assert progress.stream.getvalue() == ""


def test_a_database_away_is_the_first_thing_said() -> None:
    s = _busy_stats()
    s.db_away = 12.4
    lines = progress_lines(s, now=125.0, recent=0.0, width=80)
    assert lines[0] == "database unavailable, retrying (12s)"
    s.db_away = None
    assert not any("database" in line for line in progress_lines(s, 125.0, 0.0, 80))


def test_a_database_away_says_what_waits_for_it_and_when_fetching_stopped() -> None:
    s = _busy_stats()
    s.db_away, s.db_waiting = 12.4, 340
    text = " ".join(progress_lines(s, now=125.0, recent=0.0, width=200))
    assert "database unavailable, retrying (12s), 340 pages fetched for it" in text
    assert "paused" not in text
    s.db_full = True
    text = " ".join(progress_lines(s, now=125.0, recent=0.0, width=200))
    assert "340 pages fetched for it, fetching paused (buffer full)" in text
