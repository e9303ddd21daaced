"""Where an exported document goes, and its crawl-info XML (pure).

Seed 004 §2: each document is a file of its own, the documents of one party (seed) in one
*seed directory*, split into subdirectories of 10,000 files each, and every name made of
numbers — never of the URL, whose characters a file system may not allow. Seed 002 §3.4.3
(Fig. 11): beside each document, an XML file with what the crawl knew of it::

    <doc type="struct">
    <source>
    <url>http://newprice.empas.com/pd/pd_list.php?cid=010370010</url>
    <file>./Data/제품_노트북_엠포스_/00000000.html</file>
    <site>엠포스</site>
    <domain>제품</domain>
    <category>노트북</category>
    <date>Sun Aug 12 19:55:32 KST 2007</date>
    </source>
    </doc>

dustless adds ``<type>`` (the media type) and, with a pattern script, ``<page>`` (list,
detail or other, 002 §3.2) and, when the crawl read it (``crawl --script``, Fig. 13), the
category's name as ``<categoryName>``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from xml.sax.saxutils import escape

__all__ = ["FILES_PER_DIR", "DocInfo", "crawl_info_xml", "doc_paths", "extension", "java_date"]

FILES_PER_DIR = 10_000  # seed 004 §2: "각 하위 디렉토리가 10,000개의 파일들을 포함"

_EXTENSIONS = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "txt",
    "text/xml": "xml",
    "application/xml": "xml",
    "application/pdf": "pdf",
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
}


@dataclass(frozen=True, slots=True)
class DocInfo:
    """What Fig. 11 says of one document (``file`` relative to the export directory)."""

    url: str
    file: str
    site: str
    domain: str
    category: str
    date: str
    media_type: str
    page: str | None = None  # list / detail / other, with a pattern script
    category_name: str | None = None  # read by a --script crawl (anchor text, Fig. 13)


def extension(mime: str | None) -> str:
    """A file name extension from the media type (names never come from URLs, 004 §2)."""
    base = (mime or "").split(";")[0].strip().lower()
    return _EXTENSIONS.get(base, "bin")


def doc_paths(seed_id: int, number: int, mime: str | None) -> tuple[str, str]:
    """(document, XML) paths relative to the export directory, both made of numbers.

    ``SSSSS/DDDD/NNNNNNNN.html.gz``: seed directory, subdirectory ``number // 10,000``,
    the document's number within its seed directory.
    """
    if seed_id < 0 or number < 0:
        raise ValueError("seed and document numbers are never negative")
    stem = f"{seed_id:05d}/{number // FILES_PER_DIR:04d}/{number:08d}"
    return f"{stem}.{extension(mime)}.gz", f"{stem}.xml"


def java_date(epoch: float) -> str:
    """Fig. 11's date (Java's ``Date.toString``) in UTC: ``Sun Aug 12 10:55:32 UTC 2007``."""
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(epoch))


def crawl_info_xml(info: DocInfo) -> str:
    """The crawl-info XML of one document (Fig. 11, plus ``<type>``, ``<page>`` and
    ``<categoryName>``)."""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<doc type="struct">',
        "<source>",
        f"<url>{escape(info.url)}</url>",
        f"<file>./{escape(info.file)}</file>",
        f"<site>{escape(info.site)}</site>",
        f"<domain>{escape(info.domain)}</domain>",
        f"<category>{escape(info.category)}</category>",
        f"<date>{escape(info.date)}</date>",
        f"<type>{escape(info.media_type)}</type>",
    ]
    if info.page is not None:
        lines.append(f"<page>{escape(info.page)}</page>")
    if info.category_name is not None:
        lines.append(f"<categoryName>{escape(info.category_name)}</categoryName>")
    lines += ["</source>", "</doc>", ""]
    return "\n".join(lines)
