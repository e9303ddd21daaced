"""CDXJ lines (pure) and the scan of a WARC file's complete records that produces them.

A CDXJ line (the format pywb, OutbackCDX and WACZ use; "CDXJ" in the WACZ 1.1.1 spec) is::

    com,example)/a 20260102030405 {"url": "http://example.com/a", "mime": "text/html",
                                   "status": "200", "digest": "sha1:…", "length": "812",
                                   "offset": "1234", "filename": "dustless-00001.warc.gz"}

(on one line): the SURT key, the 14-digit WARC-Date, and JSON naming the record's bytes.
Lines sort bytewise (key, then time), which is what a replay tool's binary search needs.
Only ``response`` and ``revisit`` records are indexed: what replay serves.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dustless.store._surt import surt_key

__all__ = ["CdxjEntry", "cdx_timestamp", "entry_from_head", "http_status_mime", "scan_entries"]

_CHUNK = 1 << 16
_HEAD_MAX = 1 << 16  # WARC + HTTP heads larger than this are not indexed (never ours)


@dataclass(frozen=True, slots=True)
class CdxjEntry:
    url: str
    timestamp: str  # 14 digits, UTC
    mime: str
    status: str  # "200", or "-" without an HTTP status
    digest: str  # WARC-Payload-Digest, "" when absent
    length: int  # compressed member length
    offset: int
    filename: str

    def line(self) -> str:
        digest = f', "digest": {_json(self.digest)}' if self.digest else ""
        return (
            f'{surt_key(self.url)} {self.timestamp} {{"url": {_json(self.url)}, '
            f'"mime": {_json(self.mime)}, "status": {_json(self.status)}{digest}, '
            f'"length": "{self.length}", "offset": "{self.offset}", '
            f'"filename": {_json(self.filename)}}}'
        )


def _json(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``; a string with nothing to escape (no quote,
    backslash or control character: most URLs) is only quoted."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return json.dumps(text, ensure_ascii=False)


def cdx_timestamp(warc_date: str) -> str:
    """WARC-Date (W3C ISO 8601) → the 14 digits ``YYYYMMDDhhmmss`` of CDX files."""
    d = warc_date
    if len(d) >= 19 and d[4] == d[7] == "-" and d[10] == "T" and d[13] == d[16] == ":":
        # The full form (every date the writer makes): its digits where they always are.
        digits = d[:4] + d[5:7] + d[8:10] + d[11:13] + d[14:16] + d[17:19]
        if digits.isdigit():
            return digits
    digits = "".join(c for c in warc_date[:19] if c.isdigit())
    return (digits + "00000000000000")[:14]


def _fields(block: bytes, *, utf8: bool = False) -> tuple[str, dict[str, str]]:
    # WARC named fields are UTF-8 (WARC 1.1 §4: a target URI may be an IRI); HTTP's are
    # ISO-8859-1 octets (RFC 9110 §5.5).
    try:
        text = block.decode("utf-8") if utf8 else block.decode("latin-1")
    except UnicodeDecodeError:
        text = block.decode("latin-1")
    lines = text.split("\r\n")
    out: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            out.setdefault(name.strip().lower(), value.strip())
    return lines[0], out


def http_status_mime(http_head: bytes) -> tuple[str, str]:
    """The status code (``-`` if none) and media type (``unk`` if none) of an HTTP head."""
    end = http_head.find(b"\r\n\r\n")
    first, http = _fields(http_head if end < 0 else http_head[:end])
    code = first.split(" ", 2)[1] if first.count(" ") >= 1 else ""
    mime = http.get("content-type", "").split(";", 1)[0].strip().lower() or "unk"
    return (code if code.isdigit() else "-"), mime


def entry_from_head(head: bytes, filename: str, offset: int, length: int) -> CdxjEntry | None:
    """The CDXJ entry of a record whose decompressed start is ``head``; ``None`` for records
    replay does not serve (warcinfo, request, metadata) and for heads cut short."""
    end = head.find(b"\r\n\r\n")
    if end < 0 or not head.startswith(b"WARC/"):
        return None
    _, warc = _fields(head[:end], utf8=True)
    kind = warc.get("warc-type", "")
    url = warc.get("warc-target-uri", "")
    if kind not in ("response", "revisit") or not url:
        return None
    url = url.strip("<>")  # WARC 1.0 allowed <...> around the URI
    status, mime = "-", "unk"
    if "application/http" in warc.get("content-type", ""):
        http_end = head.find(b"\r\n\r\n", end + 4)
        if http_end > 0:
            status, mime = http_status_mime(head[end + 4 : http_end + 4])
    if kind == "revisit":
        mime = "warc/revisit"  # the CDX convention: the payload is elsewhere
    return CdxjEntry(
        url,
        cdx_timestamp(warc.get("warc-date", "")),
        mime,
        status,
        warc.get("warc-payload-digest", ""),
        length,
        offset,
        filename,
    )


def scan_entries(path: Path, start: int = 0) -> Iterator[tuple[int, CdxjEntry | None]]:
    """``(end, entry)`` for each complete record (gzip member) from ``start``, in order.

    Stops silently at the first member that is incomplete or corrupt: a record still being
    written, or a crash's torn tail that recovery will truncate. Such bytes are not on disk
    as a record, so no line may point at them.
    """
    with open(path, "rb") as f:
        f.seek(start)
        pos = start
        pending = b""
        while True:
            d = zlib.decompressobj(31)
            head = b""
            fed = 0
            while True:
                chunk = pending or f.read(_CHUNK)
                pending = b""
                if not chunk:
                    return  # end of file: clean between members, torn inside one
                try:
                    data = d.decompress(chunk, _CHUNK)
                    while True:
                        if len(head) < _HEAD_MAX:
                            head += data[: _HEAD_MAX - len(head)]
                        if not d.unconsumed_tail or d.eof:
                            break
                        data = d.decompress(d.unconsumed_tail, _CHUNK)
                except zlib.error:
                    return
                fed += len(chunk)
                if d.eof:
                    pending = d.unused_data
                    break
            length = fed - len(pending)
            entry = entry_from_head(head, path.name, pos, length)
            pos += length
            yield pos, entry
