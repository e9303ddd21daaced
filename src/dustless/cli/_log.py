"""``--log-file PATH`` and ``--log-level`` of ``crawl`` and ``recrawl``.

The file gets the periodic progress reports (INFO, every ``--progress-interval`` seconds,
whatever stderr is), the end-of-run summary (INFO) and the warnings (WARNING: a rules file's
bad lines, hosts the address policy refused), each record stamped with its local time, so
that a crawl run under nohup or systemd leaves a readable trace. Appended to, never
truncated: a ``--resume`` continues the same log. stderr keeps what it shows without a log.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["LEVELS", "open_log", "say", "warn"]

# What each level keeps: info (progress, summary, warnings), warning, error (nothing the
# crawl writes yet: kept for scripts that pass one level to every command).
LEVELS = ("info", "warning", "error")

_NAME = "dustless.cli.log"
# The crawl's own loggers (an internal error's traceback: engine.py) write to the same file.
_CRAWL = "dustless.crawl"
_FORMAT = "%(asctime)s %(levelname)s %(message)s"


def open_log(path: str | None, level: str) -> logging.Logger | None:
    """The logger writing to ``path`` (``None``: no log file). An unwritable path raises
    ``OSError`` here, before the crawl starts (the CLI makes it one line)."""
    if path is None:
        return None
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter(_FORMAT, datefmt="%Y-%m-%dT%H:%M:%S%z"))
    for name in (_CRAWL, _NAME):
        log = logging.getLogger(name)
        for old in list(log.handlers):  # one command per process, but tests call main() often
            log.removeHandler(old)
            old.close()
        log.addHandler(handler)
        log.setLevel(level.upper())
        log.propagate = False  # the root logger's handlers (pytest's) are not our file
    return log


def _open() -> logging.Logger | None:
    # Only a logger open_log gave handlers to: logging's last-resort handler would print
    # the warnings of a run without --log-file on stderr a second time.
    log = logging.getLogger(_NAME)
    return log if log.handlers else None


def warn(text: str, *, quiet: bool) -> None:
    """A warning: on stderr unless ``--quiet``, and in the log file when there is one."""
    if not quiet:
        print(text, file=sys.stderr)
    log = _open()
    if log is not None:
        log.warning(text)


def say(lines: list[str], *, quiet: bool) -> None:
    """The end-of-run summary: on stderr unless ``--quiet``, and in the log file (INFO)."""
    if not quiet:
        for line in lines:
            print(line, file=sys.stderr)
    log = _open()
    if log is not None and lines:
        log.info("\n".join(lines))
