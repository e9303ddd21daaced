"""Progress of the long steps of ``export``, ``stats``, ``evaluate`` and ``report``, off a
terminal: periodic lines on stderr (here every millisecond, through the hidden
``DUSTLESS_PROGRESS_INTERVAL``), none with ``--quiet``, stdout untouched."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from dustless.cli._progress import StepProgress

FAST = {"DUSTLESS_PROGRESS_INTERVAL": "0.001"}

# "evaluate: 9 queries run, 1,234 rows read, 3 factors compared, 0s elapsed"
LINE = re.compile(r"^(\w+): (done, )?(\d[\d,]* [a-zA-Z ]+, )*\d+s elapsed$")


def _progress_lines(stderr: str, command: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith(f"{command}: ")]


@pytest.mark.parametrize(
    ("command", "extra", "counted"),
    [
        ("evaluate", ["--json"], ["queries run", "rows read", "factors compared"]),
        ("stats", ["--json"], ["queries run", "rows read"]),
        ("export", ["--format", "files", "--json"], ["fetch rows read", "documents written"]),
        ("export", ["--format", "wacz", "--json"], ["WARC files? copied", "pages listed"]),
    ],
)
def test_periodic_progress_off_a_terminal(
    cli: Any, crawled: Path, tmp_path: Path, command: str, extra: list[str], counted: list[str]
) -> None:
    out = ["-o", str(tmp_path / "out")] if command == "export" else []
    proc = cli(command, str(crawled), *out, *extra, env=FAST)
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout)  # stdout is the JSON document alone
    lines = _progress_lines(proc.stderr, command)
    assert lines, proc.stderr
    assert all(LINE.match(ln) for ln in lines), lines
    last = lines[-1]
    assert last.startswith(f"{command}: done, "), lines
    for what in counted:
        assert re.search(rf"[1-9][\d,]* {what}\b", last), (what, last)
    out = ["-o", str(tmp_path / "quiet")] if command == "export" else []
    quiet = cli(command, str(crawled), *out, *extra, "--quiet", env=FAST)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    assert json.loads(quiet.stdout) == json.loads(proc.stdout) or command == "export"


def test_report_progress_and_quiet(cli: Any, crawled: Path, tmp_path: Path) -> None:
    proc = cli("report", str(crawled), "-o", "-", env=FAST)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"<!DOCTYPE html>")
    assert _progress_lines(proc.stderr, "report")[-1].startswith("report: done, ")
    quiet = cli("report", str(crawled), "-o", "-", "--quiet", env=FAST)
    assert quiet.stderr == ""


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_interval_with_a_fake_clock() -> None:
    clock, out = _Clock(), io.StringIO()
    with StepProgress("export", stream=out, interval=10.0, clock=clock) as p:
        p.add("documents written", 999)
        assert out.getvalue() == ""  # not before one interval
        clock.now = 10.0
        p.add("documents written")
        clock.now = 15.0
        p.add("documents written")
        clock.now = 21.0
        p.add("documents written", 1_000)
    assert out.getvalue().splitlines() == [
        "export: 1,000 documents written, 10s elapsed",
        "export: 2,001 documents written, 21s elapsed",
        "export: done, 2,001 documents written, 21s elapsed",
    ]


def test_quiet_and_short_steps_print_nothing() -> None:
    clock, out = _Clock(), io.StringIO()
    with StepProgress("stats", stream=out, interval=10.0, clock=clock, quiet=True) as p:
        clock.now = 100.0
        p.add("queries run")
    with StepProgress("stats", stream=out, interval=10.0, clock=clock) as p:
        clock.now = 105.0
        p.add("queries run")
    assert out.getvalue() == ""


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_live_line_on_a_terminal_is_redrawn_then_erased() -> None:
    clock, out = _Clock(), _Tty()
    with StepProgress("evaluate", stream=out, clock=clock) as p:
        clock.now = 1.0
        p.add("rows read", 5_000)
        clock.now = 2.0
        p.add("rows read", 5_000)
    text = out.getvalue()
    assert "\revaluate: 10,000 rows read, 2s elapsed\x1b[K" in text
    assert text.endswith("\r\x1b[K")
    assert "\n" not in text


def test_counts_have_separators_and_the_right_plural() -> None:
    clock, out = _Clock(), io.StringIO()
    p = StepProgress("export", stream=out, interval=1.0, clock=clock)
    p.add("WARC files copied")
    p.add("queries run")
    p.add("fetch rows read", 12_345)
    assert p.line(3.0) == (
        "export: 1 WARC file copied, 1 query run, 12,345 fetch rows read, 3s elapsed"
    )
