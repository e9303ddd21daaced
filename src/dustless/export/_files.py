"""``export_files``: a crawl's documents as numbered gzip files with crawl-info XML (I/O).

Reads the crawl DB through the store's API and each payload from the WARC record the DB
points to (a ``revisit`` record's payload from the response it refers to). One document per
URL: its last 2xx fetch with a payload.

Page types and categories: a ``--script`` crawl stored them with each URL (``urls.page_type``,
``category``, ``category_id``, ``category_name``; seed 002 §3.2, §4.1), and they are used as
they are — they hold what only the crawl knew, such as the category a detail page inherits
from its list page. A pattern script given to the export names the site (its title) and
labels the URLs the crawl did not.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from dustless.errors import InvalidOption, StoreError

from ._info import DocInfo, crawl_info_xml, doc_paths, java_date

if TYPE_CHECKING:
    from dustless.rules import RuleSet
    from dustless.store import FetchRow, WarcRef

__all__ = ["ExportSummary", "export_files"]


@dataclass(frozen=True, slots=True)
class ExportSummary:
    documents: int
    payload_bytes: int
    seed_dirs: int
    missing: int  # documents whose WARC record could not be read (reported, skipped)


class _Label(NamedTuple):
    """What a ``--script`` crawl stored about a URL (``urls`` columns of migration v2)."""

    page_type: str
    category: str | None
    category_id: str | None
    category_name: str | None


_LABELS_SQL = (
    "SELECT id, page_type, category, category_id, category_name FROM urls "
    "WHERE page_type IS NOT NULL"
)


def _is_document(row: FetchRow) -> bool:
    return row.status is not None and 200 <= row.status < 300 and row.content_sha1 is not None


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InvalidOption(f"{out} exists and is not an empty directory; choose another -o")


def _describe(
    row: FetchRow,
    file: str,
    rules: RuleSet | None,
    label: _Label | None = None,
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


def export_files(
    crawl_dir: str | Path, out: str | Path, rules: RuleSet | None = None
) -> ExportSummary:
    """Write every document of the crawl in ``crawl_dir`` under ``out`` (004 §2 layout)."""
    from dustless.analysis import open_crawl
    from dustless.store import DB_NAME, WARC_DIR, SQLiteStore, read_record

    src, dst = Path(crawl_dir), Path(out)
    if not (src / DB_NAME).is_file():
        raise InvalidOption(f"{src} holds no crawl (no {DB_NAME})")
    _check_out(dst)
    store = SQLiteStore(src)
    try:
        stored: dict[int, WarcRef] = {}  # fetch id -> response record (revisits refer to it)
        last: dict[int, FetchRow] = {}  # url id -> its last document fetch
        for row in store.iter_fetches():
            if row.warc is not None and row.revisit_of is None:
                stored[row.id] = row.warc
            if _is_document(row):
                last[row.url_id] = row
    finally:
        store.close()
    with open_crawl(src) as db:
        labels = {int(r[0]): _Label(*r[1:]) for r in db.query(_LABELS_SQL)}
    numbers: dict[int, int] = {}
    count = size = missing = 0
    for url_id in sorted(last):
        row = last[url_id]
        ref = stored.get(row.revisit_of) if row.revisit_of is not None else row.warc
        if ref is None:
            missing += 1
            continue
        try:
            payload = read_record(src / WARC_DIR, ref).payload
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
    return ExportSummary(count, size, len(numbers), missing)


def _write(path: Path, payload: bytes, fetched_at: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with (
        open(tmp, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=int(fetched_at)) as gz,
    ):
        gz.write(payload)
    os.replace(tmp, path)
