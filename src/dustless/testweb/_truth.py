"""The truth file: which URL is which resource (I/O, one small class).

Format: a header line, then one line per URL, ``url<TAB>status<TAB>resource-id``, where the
resource id of an answer that is no resource — a 404, a 5xx, a redirect, a soft 404 — is
``-``: every such URL is a non-resource of its own, never one shared "404" resource. (Files
written before had no header and named them ``404``, ``redirect`` …; readers treat a
non-2xx status as no resource, so both read the same.) At start it holds
every resource's canonical URL and every spelling a page links to; while serving, every URL
served for the first time is appended and flushed, so traps and session ids are covered too.
The ``real`` profile adds a fourth column, what each answer is: ``doc``, ``trap``,
``soft404``, ``notfound``, ``redirect>URL``, ``robots``, ``error`` (``truth_kind``).
Change rates go to the companion file ``FILE.rates``: ``resource-id<TAB>period<TAB>salt``: the
page changes as a Poisson process of rate ``1/period`` a day (period 0: never), its draws
salted by the third column (``dustless.testweb.change_count`` replays them).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from dustless.testweb._web import TruthRow

__all__ = ["HEADER", "TruthWriter", "rates_path", "read_rates", "read_truth"]

HEADER = "url\tstatus\tresource-id\n"


def rates_path(path: Path) -> Path:
    return Path(str(path) + ".rates")


class TruthWriter:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._seen: set[str] = set()
        self._file: TextIO | None = None
        if path is not None:
            self._file = path.open("w", encoding="utf-8", newline="\n")
            self._file.write(HEADER)

    @property
    def enabled(self) -> bool:
        return self._file is not None

    def start(self, rows: Iterable[TruthRow], rates: Iterable[tuple[str, int, int]]) -> None:
        if self._file is None or self.path is None:
            return
        for row in rows:
            if row.url not in self._seen:
                self._seen.add(row.url)
                self._file.write(row.line())
        self._file.flush()
        with rates_path(self.path).open("w", encoding="utf-8", newline="\n") as f:
            for rid, period, phase in rates:
                f.write(f"{rid}\t{period}\t{phase}\n")

    def served(self, url: str, status: int, rid: str, kind: str = "") -> None:
        if self._file is None or url in self._seen:
            return
        self._seen.add(url)
        self._file.write(TruthRow(url, status, rid, kind).line())
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_truth(path: Path) -> list[TruthRow]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # a line still being written
            if line == HEADER or line.startswith("#"):
                continue
            url, status, rid, *kind = line[:-1].split("\t")
            rows.append(TruthRow(url, int(status), rid, kind[0] if kind else ""))
    return rows


def read_rates(path: Path) -> dict[str, tuple[int, int]]:
    out = {}
    with rates_path(path).open(encoding="utf-8") as f:
        for line in f:
            rid, period, phase = line.rstrip("\n").split("\t")
            out[rid] = (int(period), int(phase))
    return out
