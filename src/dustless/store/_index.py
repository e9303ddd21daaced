"""``OUTDIR/indexes/``: a CDXJ index of the crawl's WARC files, kept in step with them.

Layout: sorted CDXJ *segments* (``seg-00000012-L1.cdxj``) and ``index.json``, the list of
live segments and, per WARC file, the byte up to which its records are indexed. A replay
tool reads the directory as it is (pywb merges every ``.cdxj`` of a collection's index
directory); ``dustless export --format wacz`` merges the segments into one file.

How it stays in step with the WARC files and the crawl DB (both kept by ``durable_commit``):

* ``sync()`` indexes the *complete* records found past each file's indexed end and stops at
  the first incomplete one, so a line never points at a record that is not on disk. The
  crawl calls it right after every durable commit: the WARC bytes the DB now points at
  were fsynced before the DB commit, so every record the DB points at is indexed at once.
* A crash between the DB commit and the ``sync`` (or during it) loses no line: the next
  ``sync`` — the resumed crawl's first commit, or an export — scans from the indexed end.
* Files are written beside their final name, fsynced, then ``index.json`` is replaced
  atomically, then renamed: a crash leaves either the old or the new index, and stray files
  that ``index.json`` does not list are removed (or finished) when the index is opened.
* Each sync writes one small segment; every ``fanout`` segments of a level merge into one
  of the next (an LSM tree): the cost per record stays O(log n) however long the crawl.

Measured (``bench/cdxj_bench.py``): see ``docs/archives.md``.
"""

from __future__ import annotations

import contextlib
import fcntl
import heapq
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from dustless.store._cdxj import CdxjEntry, scan_entries

__all__ = ["INDEX_DIR", "CdxjIndex"]

INDEX_DIR = "indexes"  # OUTDIR/indexes, beside OUTDIR/warc
_STATE = "index.json"
_LOCK = ".lock"
_SEG_RE = re.compile(r"^seg-(\d{8})-L(\d+)\.cdxj$")
_WARC_RE = re.compile(r"\.warc(\.gz)?$")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_lines(path: Path, lines: Iterator[str]) -> int:
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line if line.endswith("\n") else line + "\n")
            n += 1
        f.flush()
        os.fsync(f.fileno())
    return n


class CdxjIndex:
    """The CDXJ index of the WARC files in ``warc_dir``, kept in ``directory``."""

    def __init__(self, directory: str | Path, warc_dir: str | Path, *, fanout: int = 16) -> None:
        self.directory = Path(directory)
        self.warc_dir = Path(warc_dir)
        self.fanout = max(2, fanout)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_file: IO[bytes] | None = None
        self.ends: dict[str, int] = {}
        self.segments: list[tuple[int, int]] = []  # (seq, level), oldest first
        self._seq = 0
        self._load()

    @classmethod
    def beside(cls, warc_dir: str | Path) -> CdxjIndex:
        """The index of ``OUTDIR/warc``: ``OUTDIR/indexes``."""
        warc = Path(warc_dir)
        return cls(warc.parent / INDEX_DIR, warc)

    # -- state ---------------------------------------------------------------------------------
    @staticmethod
    def _name(seq: int, level: int) -> str:
        return f"seg-{seq:08d}-L{level}.cdxj"

    def _load(self) -> None:
        path = self.directory / _STATE
        if path.exists():
            try:
                state = json.loads(path.read_text("utf-8"))
                self.ends = {str(k): int(v) for k, v in state["ends"].items()}
                self.segments = [(int(s), int(lv)) for s, lv in state["segments"]]
                self._seq = int(state["seq"])
            except (ValueError, KeyError, TypeError):
                self.ends, self.segments, self._seq = {}, [], 0  # unreadable: rebuilt
        live = {self._name(s, lv) for s, lv in self.segments}
        for p in self.directory.iterdir():
            if p.name.endswith(".cdxj.tmp") and p.name[:-4] in live:
                os.replace(p, p.with_name(p.name[:-4]))  # listed, rename not yet done
            elif (p.name.endswith(".tmp") or _SEG_RE.match(p.name)) and p.name not in live:
                p.unlink()  # written but never listed, or merged away
        if any(not (self.directory / n).exists() for n in live):
            self.ends, self.segments = {}, []  # a listed segment is gone: rebuild
            for p in self.directory.glob("seg-*.cdxj"):
                p.unlink()

    def _save(self) -> None:
        state = {"version": 1, "seq": self._seq, "ends": self.ends, "segments": self.segments}
        tmp = self.directory / (_STATE + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(state, f, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.directory / _STATE)
        _fsync_dir(self.directory)

    # -- lock ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, *, wait: bool = True) -> Iterator[bool]:
        """Hold the index's lock (one writer at a time); yields False if busy and not waiting."""
        f = open(self.directory / _LOCK, "ab")  # noqa: SIM115 - closed below
        try:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            f.close()

    # -- writing -------------------------------------------------------------------------------
    def sync(
        self,
        *,
        wait: bool = True,
        known: tuple[Mapping[str, tuple[int, int]], Sequence[CdxjEntry]] | None = None,
    ) -> int:
        """Index every complete record past the indexed ends; the number of lines added.

        ``wait=False`` (the crawl's commit): when an export holds the lock, skip this time;
        the next sync catches up. ``known`` (``WarcWriter.take_index``): the entries of the
        records the writer wrote and the byte span they cover per file; a span that starts
        where the index ends is taken as it is, not read back from disk (~60 µs a record).
        """
        with self.locked(wait=wait) as ok:
            if not ok:
                return 0
            self._load()  # another process may have synced since
            return self._sync(known)

    @contextlib.contextmanager
    def synced(self) -> Iterator[int]:
        """Lock, catch up, and hold the lock while the caller reads :meth:`lines` and copies
        the WARC bytes up to :attr:`ends` (an export): yields the lines just added."""
        with self.locked():
            self._load()
            yield self._sync()

    def _sync(
        self, known: tuple[Mapping[str, tuple[int, int]], Sequence[CdxjEntry]] | None = None
    ) -> int:
        lines: list[str] = []
        ends = dict(self.ends)
        spans, entries = known if known is not None else ({}, ())
        by_file: dict[str, list[CdxjEntry]] = {}
        for e in entries:
            by_file.setdefault(e.filename, []).append(e)
        names = sorted(p.name for p in self.warc_dir.iterdir() if _WARC_RE.search(p.name))
        for name in names:
            size = (self.warc_dir / name).stat().st_size
            start = ends.get(name, 0)
            if size < start:  # the file lost indexed records: start over
                self._reset()
                return self._sync()
            span = spans.get(name)
            if span is not None and span[0] == start and span[1] <= size:
                lines += [e.line() for e in by_file.get(name, ())]
                start = ends[name] = span[1]
            if size == start:
                continue
            for end, entry in scan_entries(self.warc_dir / name, start):
                ends[name] = end
                if entry is not None:
                    lines.append(entry.line())
        if ends == self.ends:
            return 0
        if lines:
            lines.sort()
            self._seq += 1
            seg = (self._seq, 0)
            _write_lines(self.directory / self._name(*seg), iter(lines))
            self.segments.append(seg)
        self.ends = ends
        self._save()
        self._finish_renames()
        self._compact()
        return len(lines)

    def _finish_renames(self) -> None:
        for seq, level in self.segments:
            tmp = self.directory / (self._name(seq, level) + ".tmp")
            if tmp.exists():
                os.replace(tmp, tmp.with_name(tmp.name[:-4]))

    def _compact(self) -> None:
        level = 0
        while True:
            group = [s for s in self.segments if s[1] == level]
            if len(group) < self.fanout:
                return
            self._seq += 1
            merged = (self._seq, level + 1)
            paths = [self.directory / self._name(*s) for s in group]
            _write_lines(self.directory / self._name(*merged), self._merge(paths))
            self.segments = [s for s in self.segments if s not in group] + [merged]
            self.segments.sort()
            self._save()
            self._finish_renames()
            for p in paths:
                p.unlink()
            level += 1

    def _reset(self) -> None:
        for seq, level in self.segments:
            (self.directory / self._name(seq, level)).unlink(missing_ok=True)
        self.ends, self.segments = {}, []

    def rebuild(self) -> int:
        """Drop the index and index every WARC file from its first byte."""
        with self.locked():
            self._load()
            self._reset()
            self._save()
            return self._sync()

    # -- reading -------------------------------------------------------------------------------
    def segment_paths(self) -> list[Path]:
        return [self.directory / self._name(s, lv) for s, lv in self.segments]

    @staticmethod
    def _merge(paths: list[Path]) -> Iterator[str]:
        files = [open(p, encoding="utf-8") for p in paths]  # noqa: SIM115 - closed below
        try:
            yield from heapq.merge(*files)
        finally:
            for f in files:
                f.close()

    def lines(self) -> Iterator[str]:
        """Every line of the index, sorted (hold :meth:`locked` while reading)."""
        return self._merge(self.segment_paths())

    def count(self) -> int:
        return sum(1 for _ in self.lines())
