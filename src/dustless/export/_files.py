"""``export_files``: a crawl's documents as numbered gzip files with crawl-info XML (I/O).

Reads the crawl DB through its reader (``dustless.store.CrawlReader``: a crawl directory,
or a crawl shared on PostgreSQL) and each payload from the WARC record the DB points to (a
``revisit`` record's payload from the response it refers to; on PostgreSQL, in the directory
of the worker that wrote it). One document per URL: its last 2xx fetch with a payload.

Page types and categories: a ``--script`` crawl stored them with each URL (``urls.page_type``,
``category``, ``category_id``, ``category_name``; seed 002 §3.2, §4.1), and they are used as
they are — they hold what only the crawl knew, such as the category a detail page inherits
from its list page. A pattern script given to the export names the site (its title) and
labels the URLs the crawl did not.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dustless.errors import InvalidOption, StoreError

from ._info import DocInfo, crawl_info_xml, doc_paths, java_date

if TYPE_CHECKING:
    from dustless.rules import RuleSet
    from dustless.store import CrawlReader, FetchRow, URLLabelRow, WarcRef

__all__ = ["ExportSummary", "export_files", "fetch_rows"]


@dataclass(frozen=True, slots=True)
class ExportSummary:
    documents: int
    payload_bytes: int
    seed_dirs: int
    missing: int  # documents whose WARC record could not be read (reported, skipped)


def _is_document(row: FetchRow) -> bool:
    return row.status is not None and 200 <= row.status < 300 and row.content_sha1 is not None


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InvalidOption(f"{out} exists and is not an empty directory; choose another -o")


def _describe(
    row: FetchRow,
    file: str,
    rules: RuleSet | None,
    label: URLLabelRow | None = None,
    labelled: bool = False,
) -> DocInfo:
    """Fig. 11 for one document; ``labelled``: the crawl stored labels (a --script crawl),
    so a URL without one is a page no pattern named ("other")."""
    from dustless.url import host_of

    try:
        host = host_of(row.url)
    except ValueError:
        host = row.host
    site, domain, category, page = host, "", "", "other" if labelled else None
    name = None
    if rules is not None:
        sites = rules.sites_for(row.url)
        if sites:
            site = sites[0].title
        m = rules.match(row.url)
        page = "other" if m is None else m.page_type.value
        if m is not None:
            domain, category = m.category, m.category_id
    if label is not None:
        page, name = label.page_type, label.category_name
        domain = label.category if label.category is not None else domain
        category = label.category_id if label.category_id is not None else category
    mime = (row.mime or "").split(";")[0].strip() or "application/octet-stream"
    date = java_date(row.fetched_at)
    return DocInfo(row.url, file, site, domain, category, date, mime, page, name)


def fetch_rows(db: CrawlReader) -> Iterator[FetchRow]:
    """Every fetch row of the crawl, in fetch order (the store's ``export_fetch_rows``: the
    same read on SQLite and PostgreSQL)."""
    from dustless.store import export_fetch_rows

    return export_fetch_rows(db)


def export_files(
    crawl_dir: str | Path | None,
    out: str | Path,
    rules: RuleSet | None = None,
    *,
    db: str | None = None,
    dirs: Mapping[str, Path] | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> ExportSummary:
    """Write every document of the crawl in ``crawl_dir`` under ``out`` (004 §2 layout).

    ``db`` (``postgresql://…``): the crawl workers share there, each payload read from the
    directory of the worker that wrote its WARC file (``dirs``: worker name -> its
    directory on this machine, when not where it crawled). ``progress(what, n)``: told of
    the fetch rows read and the documents written (the CLI's progress line)."""
    from dustless.store import DB_NAME, open_crawl, read_record, url_labels

    dst = Path(out)
    if db is None and (crawl_dir is None or not (Path(crawl_dir) / DB_NAME).is_file()):
        raise InvalidOption(f"{crawl_dir} holds no crawl (no {DB_NAME})")
    _check_out(dst)
    with open_crawl(crawl_dir, db=db, dirs=dirs) as reader:
        stored: dict[int, WarcRef] = {}  # fetch id -> response record (revisits refer to it)
        last: dict[int, FetchRow] = {}  # url id -> its last document fetch
        tick = progress or _no_progress
        for row in fetch_rows(reader):
            tick("fetch rows read", 1)
            if row.warc is not None and row.revisit_of is None:
                stored[row.id] = row.warc
            if _is_document(row):
                last[row.url_id] = row
        labels = url_labels(reader)
        warc_dirs: dict[str, Path] = {}  # file name -> its directory (a worker's, on PostgreSQL)
        numbers: dict[int, int] = {}
        count = size = missing = 0
        for url_id in sorted(last):
            row = last[url_id]
            ref = stored.get(row.revisit_of) if row.revisit_of is not None else row.warc
            if ref is None:
                missing += 1
                continue
            try:
                where = warc_dirs.get(ref.file)
                if where is None:
                    where = warc_dirs[ref.file] = reader.warc_dir(ref.file)
                payload = read_record(where, ref).content()  # decoded, as it was stored
            except StoreError:  # StoreCorrupt: a vanished or torn file; skip it, count it
                missing += 1
                continue
            seed = row.seed_id or 0
            number = numbers.get(seed, 0)
            numbers[seed] = number + 1
            doc_file, xml_file = doc_paths(seed, number, row.mime)
            _write(dst / doc_file, payload, row.fetched_at)
            info = _describe(row, doc_file, rules, labels.get(url_id), bool(labels))
            (dst / xml_file).write_text(crawl_info_xml(info), encoding="utf-8")
            count += 1
            size += len(payload)
            tick("documents written", 1)
    return ExportSummary(count, size, len(numbers), missing)


def _no_progress(what: str, n: int) -> None:
    pass


def _write(path: Path, payload: bytes, fetched_at: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with (
        open(tmp, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=int(fetched_at)) as gz,
    ):
        gz.write(payload)
    os.replace(tmp, path)
