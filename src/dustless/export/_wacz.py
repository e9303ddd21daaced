"""``export_wacz``: a crawl as one WACZ 1.1.1 file, and ``check_wacz``, our validator of one.

WACZ 1.1.1 (https://specs.webrecorder.net/wacz/1.1.1/) is a ZIP holding:

* ``archive/*.warc.gz`` — the crawl's WARC files, as they are;
* ``indexes/index.cdx`` — one sorted CDXJ index of their response and revisit records
  (the segments of ``OUTDIR/indexes`` merged; ``filename`` names a file of ``archive/``).
  Past one block of lines it is ``indexes/index.cdx.gz`` (blocks of lines, each its own
  gzip member) with ``indexes/index.idx`` (one line per block: its first key, offset,
  length and sha256), as py-wacz and ArchiveWeb.page write them: ReplayWeb.page then
  loads only the blocks a lookup needs. The names matter: pywb's ``wb-manager add
  --unpack-wacz`` takes only ``indexes/*.cdx`` and ``*.cdx.gz`` (a ``.cdxj`` is skipped,
  and the WACZ replays nothing);
* ``pages/pages.jsonl`` — a header line ``{"format": "json-pages-1.0", …}`` then one line
  per page (``url``, ``ts``, ``title`` when known): every 2xx HTML fetch of the crawl;
* ``datapackage.json`` — a Frictionless data package (``profile: data-package``) listing
  every file above with its ``bytes`` and ``hash`` (``sha256:`` hex), ``wacz_version``;
* ``datapackage-digest.json`` — the sha256 of ``datapackage.json`` (signing is optional).

Every member is stored, not deflated: the spec asks that WARCs and indexes be readable by
byte range inside the ZIP (ReplayWeb.page reads them that way).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gzip
import hashlib
import heapq
import itertools
import json
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from dustless.errors import InvalidOption

if TYPE_CHECKING:
    from dustless.store import CdxjIndex, CrawlReader

__all__ = ["INDEX_BLOCK_LINES", "WACZ_VERSION", "WaczSummary", "check_wacz", "export_wacz"]

WACZ_VERSION = "1.1.1"
_INDEX = "indexes/index.cdx"
_INDEX_GZ = "indexes/index.cdx.gz"
_INDEX_IDX = "indexes/index.idx"
# Lines per block of a compressed index: py-wacz's (cdxj-indexer's) default.
INDEX_BLOCK_LINES = 1024
_PAGES = "pages/pages.jsonl"
_PAGES_HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
_REQUIRED = ("datapackage.json", "datapackage-digest.json", _PAGES)
_COPY = 1 << 20
_SPOOL = 16 << 20  # a member of unknown size is held in memory up to this, then on disk


@dataclass(frozen=True, slots=True)
class WaczSummary:
    path: Path | None  # None: written to a stream (``export -o -``)
    warcs: int
    index_lines: int
    pages: int
    bytes: int


class _Counting:
    """A write-only stream (standard output) that counts what passes. It has no ``tell``,
    so ``zipfile`` writes each member's sizes after its data (APPNOTE 4.3.9, data
    descriptor): a pipe cannot be sought back into."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self.size = 0

    def write(self, data: bytes) -> int:
        self._raw.write(data)
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        self._raw.flush()


def _iso(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Hashing:
    """A file-like sink that hashes and counts what the ZIP writer passes through."""

    def __init__(self, raw: zipfile.ZipFile, name: str, size: int) -> None:
        info = zipfile.ZipInfo(name, _dt.datetime.now(_dt.UTC).timetuple()[:6])
        info.compress_type = zipfile.ZIP_STORED
        # A ZIP64 extra field in the local header only when the central directory has one
        # too (zipfile gives it one past ZIP64_LIMIT): ReplayWeb.page (wabac.js 2.27) finds a
        # member's data at 30 + name + the *central* extra length, so a forced ZIP64 local
        # header made it read 20 bytes early ("not valid JSON": it loaded nothing).
        self._f = raw.open(info, "w", force_zip64=size > zipfile.ZIP64_LIMIT)
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> None:
        self._f.write(data)
        self.sha.update(data)
        self.size += len(data)

    def close(self) -> None:
        self._f.close()


def _add(
    z: zipfile.ZipFile, name: str, chunks: Iterable[bytes], size: int | None = None
) -> dict[str, object]:
    """Add a stored member of ``chunks``; ``size`` is their length when known beforehand.

    Without it the chunks are spooled first (memory, then a temporary file): the member's
    size decides its ZIP64 header before its first byte is written (see ``_Hashing``)."""
    if size is None:
        with tempfile.SpooledTemporaryFile(_SPOOL) as spool:
            for chunk in chunks:
                spool.write(chunk)
            size = spool.tell()
            spool.seek(0)
            return _add(z, name, iter(lambda: spool.read(_COPY), b""), size)
    sink = _Hashing(z, name, size)
    try:
        for chunk in chunks:
            sink.write(chunk)
    finally:
        sink.close()
    return {
        "name": name.rsplit("/", 1)[-1].lower(),
        "path": name,
        "hash": "sha256:" + sink.sha.hexdigest(),
        "bytes": sink.size,
    }


def _file_chunks(path: Path, limit: int) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while limit > 0 and (chunk := f.read(min(_COPY, limit))):
            limit -= len(chunk)
            yield chunk


def _page_lines(reader: CrawlReader) -> Iterator[bytes]:
    from dustless.export._files import fetch_rows

    yield (json.dumps(_PAGES_HEADER) + "\n").encode()
    for row in fetch_rows(reader):
        if row.warc is None or row.status is None or not 200 <= row.status < 300:
            continue
        if row.mime not in ("text/html", "application/xhtml+xml"):
            continue
        page = {"id": f"{row.id}", "url": row.url, "ts": _iso(row.fetched_at)}
        yield (json.dumps(page, ensure_ascii=False) + "\n").encode()


def export_wacz(
    crawl_dir: Path | None,
    out: Path | BinaryIO,
    *,
    title: str | None = None,
    db: str | None = None,
    dirs: Mapping[str, Path] | None = None,
    index_block_lines: int = INDEX_BLOCK_LINES,
    progress: Callable[[str, int], None] | None = None,
) -> WaczSummary:
    """Write ``out`` (a new ``.wacz`` file, or a binary stream such as standard output)
    from the crawl in ``crawl_dir``.

    ``db`` (``postgresql://…``): the crawl workers share there; each worker's directory
    holds its WARC files and their index (``dirs``: worker name -> its directory on this
    machine, when not where it crawled). The archive holds every worker's files, and one
    index: theirs merged. ``index_block_lines``: an index of more lines is written as
    gzip blocks of this many lines with an ``index.idx``. ``progress(what, n)``: told of the
    WARC files copied, the index lines and the pages written (the CLI's progress line)."""
    from dustless.store import DB_NAME, open_crawl

    if db is None and (crawl_dir is None or not (crawl_dir / DB_NAME).exists()):
        raise InvalidOption(f"{crawl_dir} holds no crawl (no {DB_NAME})")
    if isinstance(out, Path) and out.exists():
        raise InvalidOption(f"{out} exists; choose another -o")
    # A file is written beside its name and renamed when whole, so a crash leaves no
    # truncated .wacz; a stream gets the bytes as they come.
    sink = _Counting(out) if not isinstance(out, Path) else None
    tmp = out.with_name(out.name + ".tmp") if isinstance(out, Path) else None
    resources: list[dict[str, object]] = []
    lines = pages = 0
    with open_crawl(crawl_dir, db=db, dirs=dirs) as reader, contextlib.ExitStack() as stack:
        indexes, warcs = _archives(reader.crawl_dirs(), stack)
        target = tmp if tmp is not None else cast(BinaryIO, sink)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            tick = progress or _no_progress
            for p, end in warcs:
                resources.append(_add(z, f"archive/{p.name}", _file_chunks(p, end), end))
                tick("WARC files copied", 1)
            lines = _write_index(z, indexes, index_block_lines, tick, resources)

            def page_bytes() -> Iterator[bytes]:
                nonlocal pages
                for i, line in enumerate(_page_lines(reader)):
                    pages += i > 0
                    if i > 0:
                        tick("pages listed", 1)
                    yield line

            resources.append(_add(z, _PAGES, page_bytes()))
            default_title = reader.source if crawl_dir is None else crawl_dir.resolve().name
            _write_package(z, title or default_title, resources)
    if sink is not None:
        sink.flush()
        return WaczSummary(None, len(warcs), lines, pages, sink.size)
    assert tmp is not None
    assert isinstance(out, Path)
    os.replace(tmp, out)
    return WaczSummary(out, len(warcs), lines, pages, out.stat().st_size)


def _archives(
    crawl_dirs: Iterable[Path], stack: contextlib.ExitStack
) -> tuple[list[CdxjIndex], list[tuple[Path, int]]]:
    """Each crawl directory's index (synced, held open on ``stack``) and its WARC files, each
    with the length its index covers (a crawl still writing may have more), by name."""
    from dustless.store import INDEX_DIR, WARC_DIR, CdxjIndex

    indexes: list[CdxjIndex] = []
    warcs: list[tuple[Path, int]] = []
    for d in crawl_dirs:
        warc_dir = d / WARC_DIR
        if not warc_dir.is_dir():
            raise InvalidOption(
                f"{warc_dir}: no such directory (a worker's directory elsewhere on this "
                "machine: --worker-dir NAME=DIR)"
            )
        index = CdxjIndex(d / INDEX_DIR, warc_dir)
        # A crawl killed since its last commit: the index catches up first (synced).
        stack.enter_context(index.synced())
        indexes.append(index)
        for p in sorted(warc_dir.iterdir()):
            if p.name.endswith((".warc.gz", ".warc")):
                warcs.append((p, index.ends.get(p.name, 0)))
    warcs.sort(key=lambda w: w[0].name)
    return indexes, warcs


def _write_index(
    z: zipfile.ZipFile,
    indexes: list[CdxjIndex],
    block_lines: int,
    tick: Callable[[str, int], None],
    resources: list[dict[str, object]],
) -> int:
    """The indexes merged into one: a plain ``index.cdxj`` when it fits in one block, else
    gzip blocks of ``block_lines`` lines with their ``index.idx``. Returns the lines."""
    merged = heapq.merge(*(index.lines() for index in indexes))
    # The first block decides the form: a whole index in it is one plain file.
    first = list(itertools.islice(merged, block_lines))
    lines = len(first)
    tick("index lines", lines)
    if lines < block_lines:
        resources.append(_add(z, _INDEX, ["".join(first).encode("utf-8")]))
        return lines
    blocks: list[str] = []

    def gz_blocks() -> Iterator[bytes]:
        nonlocal lines
        offset = 0
        block = first
        while block:
            data = gzip.compress("".join(block).encode("utf-8"), mtime=0)
            key_ts = block[0].split(" {", 1)[0]
            digest = "sha256:" + _sha256(data)
            blocks.append(
                f'{key_ts} {{"offset": {offset}, "length": {len(data)}, "digest": "{digest}"}}\n'
            )
            offset += len(data)
            yield data
            block = list(itertools.islice(merged, block_lines))
            lines += len(block)
            tick("index lines", len(block))

    resources.append(_add(z, _INDEX_GZ, gz_blocks()))
    meta = json.dumps({"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"})
    idx = f"!meta 0 {meta}\n" + "".join(blocks)
    resources.append(_add(z, _INDEX_IDX, [idx.encode("utf-8")]))
    return lines


def _write_package(z: zipfile.ZipFile, title: str, resources: list[dict[str, object]]) -> None:
    """``datapackage.json`` listing every resource, and its digest file (WACZ 1.1.1)."""
    now = _iso(_dt.datetime.now(_dt.UTC).timestamp())
    package = {
        "profile": "data-package",
        "wacz_version": WACZ_VERSION,
        "title": title,
        "created": now,
        "modified": now,
        "software": "dustless/0.1",
        "resources": resources,
    }
    data = json.dumps(package, indent=2, ensure_ascii=False).encode("utf-8")
    _add(z, "datapackage.json", [data])
    digest = {"path": "datapackage.json", "hash": "sha256:" + _sha256(data)}
    _add(z, "datapackage-digest.json", [json.dumps(digest, indent=2).encode()])


def _no_progress(what: str, n: int) -> None:
    pass


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_wacz(path: Path) -> list[str]:
    """What is wrong with the WACZ at ``path`` against the 1.1.1 spec; ``[]`` when valid.

    Checks the required files, that every member is stored (not deflated), that
    ``datapackage.json`` lists every file with its size and sha256, that the digest file
    matches, the pages file's format, and that every index line points at a record of an
    archived WARC file whose URL it names.
    """
    problems: list[str] = []
    try:
        z = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        return [f"not a ZIP file: {exc}"]
    with z:
        names = set(z.namelist())
        for name in _REQUIRED:
            if name not in names:
                problems.append(f"missing {name}")
        if not any(n.startswith("archive/") and ".warc" in n for n in names):
            problems.append("no WARC file in archive/")
        if not any(n.startswith("indexes/") for n in names):
            problems.append("no index in indexes/")
        if problems:
            return problems
        for info in z.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                problems.append(f"{info.filename} is compressed in the ZIP (must be stored)")
        raw = z.read("datapackage.json")
        package = json.loads(raw)
        if package.get("profile") != "data-package":
            problems.append("datapackage.json: profile is not data-package")
        if package.get("wacz_version") != WACZ_VERSION:
            problems.append(f"datapackage.json: wacz_version is not {WACZ_VERSION}")
        listed = {r["path"]: r for r in package.get("resources", [])}
        for name in sorted(names - {"datapackage.json", "datapackage-digest.json"}):
            res = listed.get(name)
            if res is None:
                problems.append(f"{name} is not listed in datapackage.json")
                continue
            sha, size = hashlib.sha256(), 0
            with z.open(name) as f:
                while chunk := f.read(_COPY):
                    sha.update(chunk)
                    size += len(chunk)
            if res.get("hash") != "sha256:" + sha.hexdigest():
                problems.append(f"{name}: sha256 differs from datapackage.json")
            if res.get("bytes") != size:
                problems.append(f"{name}: size differs from datapackage.json")
        for name in sorted(set(listed) - names):
            problems.append(f"datapackage.json lists {name}, which is not in the ZIP")
        digest = json.loads(z.read("datapackage-digest.json"))
        if digest.get("path") != "datapackage.json" or digest.get("hash") != (
            "sha256:" + _sha256(raw)
        ):
            problems.append("datapackage-digest.json does not match datapackage.json")
        problems += _check_pages(z.read(_PAGES).decode("utf-8").splitlines())
        problems += _check_index(z, names)
    return problems


def _check_pages(lines: list[str]) -> list[str]:
    if not lines:
        return [f"{_PAGES} is empty"]
    head = json.loads(lines[0])
    out = [] if head.get("format") == "json-pages-1.0" and "id" in head else [f"{_PAGES} header"]
    for n, line in enumerate(lines[1:], 2):
        page = json.loads(line)
        if "url" not in page or "ts" not in page:
            out.append(f"{_PAGES} line {n}: url and ts are required")
    return out


def _index_lines(z: zipfile.ZipFile, name: str) -> Iterator[bytes]:
    with z.open(name) as f:
        if name.endswith(".gz"):  # blocks of lines, each a gzip member: one gzip stream
            with gzip.GzipFile(fileobj=f) as g:
                yield from g
        else:
            yield from f


def _check_idx(z: zipfile.ZipFile, names: set[str]) -> list[str]:
    """Every block ``index.idx`` lists is a gzip member of ``index.cdx.gz`` at its offset,
    of its length and sha256, starting with its key; and the blocks cover the file."""
    if _INDEX_IDX not in names:
        return [f"{_INDEX_GZ} without {_INDEX_IDX}"] if _INDEX_GZ in names else []
    if _INDEX_GZ not in names:
        return [f"{_INDEX_IDX} without {_INDEX_GZ}"]
    out: list[str] = []
    data = z.read(_INDEX_GZ)
    end = 0
    for n, raw in enumerate(z.read(_INDEX_IDX).decode("utf-8").splitlines(), 1):
        if raw.startswith("!meta"):
            continue
        key_ts, _, fields = raw.partition(" {")
        rec = json.loads("{" + fields)
        offset, length = int(rec["offset"]), int(rec["length"])
        block = data[offset : offset + length]
        if offset != end or len(block) != length:
            out.append(f"{_INDEX_IDX} line {n}: block at {offset} does not follow the last")
        elif rec.get("digest") != "sha256:" + _sha256(block):
            out.append(f"{_INDEX_IDX} line {n}: sha256 of the block differs")
        elif not gzip.decompress(block).decode("utf-8").startswith(key_ts + " "):
            out.append(f"{_INDEX_IDX} line {n}: the block does not start with {key_ts}")
        end = offset + length
    if end != len(data):
        out.append(f"{_INDEX_IDX}: its blocks end at {end}, {_INDEX_GZ} at {len(data)}")
    return out


def _check_index(z: zipfile.ZipFile, names: set[str]) -> list[str]:
    from dustless.store import entry_from_head, surt_key

    out: list[str] = _check_idx(z, names)
    index = [n for n in names if n.startswith("indexes/") and n.endswith((".cdxj", ".cdx", ".gz"))]
    for name in index:
        for n, raw in enumerate(_index_lines(z, name), 1):
            key, stamp, data = raw.decode("utf-8").split(" ", 2)
            rec = json.loads(data)
            member = "archive/" + rec["filename"]
            if member not in names:
                out.append(f"{name} line {n}: {rec['filename']} is not in archive/")
                continue
            offset, length = int(rec["offset"]), int(rec["length"])
            with z.open(member) as w:
                w.seek(offset)
                blob = w.read(length)
            try:
                head = gzip.decompress(blob)[: 1 << 16]
            except (OSError, EOFError):
                out.append(f"{name} line {n}: no whole gzip member at {offset}")
                continue
            entry = entry_from_head(head, rec["filename"], offset, length)
            if key != surt_key(rec["url"]):
                out.append(f"{name} line {n}: key {key} is not the SURT of {rec['url']}")
            if entry is None or entry.url != rec["url"] or entry.timestamp != stamp:
                out.append(f"{name} line {n}: the record at {offset} is not {rec['url']}")
    return out
