"""``--log-file``'s progress: ``Progress`` with a logger writes a report every interval to
it, at INFO, even with the display off (``--quiet``), and nothing to the stream."""

from __future__ import annotations

import io
import logging

from dustless.cli._log import open_log
from dustless.crawl.progress import Progress, RunCounters


def _reports(path, level, *, enabled):
    log = open_log(str(path), level)
    stream = io.StringIO()  # not a terminal: without a log, the reports would go here
    progress = Progress(stream, enabled=enabled, interval=10.0, log=log)
    stats = RunCounters(started=0.0)
    for now in (0.0, 5.0, 10.5, 15.0, 21.0):
        stats.fetched = int(now * 3)
        progress.update(stats, now)
    assert log is not None
    for handler in log.handlers:
        handler.flush()
    return stream.getvalue(), path.read_text()


def test_progress_goes_to_the_log_every_interval_even_when_quiet(tmp_path):
    stream, text = _reports(tmp_path / "a.log", "info", enabled=False)
    assert stream == ""
    # The first report one interval after the start, then one each interval: 10.5 and 21.
    assert text.count(" INFO ") == 2
    assert " INFO 31 pages, " in text
    assert " INFO 63 pages, " in text


def test_log_level_warning_keeps_no_progress_and_the_stream_none_either(tmp_path):
    stream, text = _reports(tmp_path / "b.log", "warning", enabled=False)
    assert (stream, text) == ("", "")


def teardown_function() -> None:
    log = logging.getLogger("dustless.cli.log")
    for handler in list(log.handlers):
        log.removeHandler(handler)
        handler.close()


def test_the_crawls_own_records_go_to_the_log_file(tmp_path):
    # An internal error's traceback is logged by the engine (``dustless.crawl.engine``): with
    # --log-file it must reach the file, which the progress line points the user to.
    path = tmp_path / "c.log"
    log = open_log(str(path), "info")
    assert log is not None
    try:
        raise ValueError("boom")
    except ValueError as exc:
        logging.getLogger("dustless.crawl.engine").error("internal error on %s", "u", exc_info=exc)
    for handler in log.handlers:
        handler.flush()
    text = path.read_text()
    assert " ERROR internal error on u" in text
    assert "ValueError: boom" in text
