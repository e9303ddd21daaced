"""``export_files``: a crawl's documents as numbered gzip files with crawl-info XML (I/O).

Reads the crawl DB through the store's API and each payload from the WARC record the DB
points to (a ``revisit`` record's payload from the response it refers to). One document per
URL: its last 2xx fetch with a payload.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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


def _is_document(row: FetchRow) -> bool:
    return row.status is not None and 200 <= row.status < 300 and row.content_sha1 is not None


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InvalidOption(f"{out} exists and is not an empty directory; choose another -o")


def _describe(row: FetchRow, file: str, rules: RuleSet | None) -> DocInfo:
    from dustless.url import host_of

    try:
        host = host_of(row.url)
    except ValueError:
        host = row.host
    site, domain, category, page = host, "", "", None
    if rules is not None:
        sites = rules.sites_for(row.url)
        if sites:
            site = sites[0].title
        m = rules.match(row.url)
        page = "other" if m is None else m.page_type.value
        if m is not None:
            domain, category = m.category, m.category_id
    mime = (row.mime or "").split(";")[0].strip() or "application/octet-stream"
    return DocInfo(row.url, file, site, domain, category, java_date(row.fetched_at), mime, page)


def export_files(
    crawl_dir: str | Path, out: str | Path, rules: RuleSet | None = None
) -> ExportSummary:
    """Write every document of the crawl in ``crawl_dir`` under ``out`` (004 §2 layout)."""
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
        info = _describe(row, doc_file, rules)
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
