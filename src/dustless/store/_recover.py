"""Reading WARC records back, and repairing a file whose last record was torn by a crash.

A record-at-time gzip WARC (WARC 1.1 Annex D.2) is a sequence of complete gzip members. A
``kill -9`` during a write leaves at most one incomplete member at the end: it has no gzip
trailer (RFC 1952 §2.3: CRC32 + ISIZE), so ``zlib`` never reaches end-of-stream on it.
``recover_warc`` walks the members, checks each is one whole WARC record (the header block's
``Content-Length`` matches the bytes that follow, WARC 1.1 §4) and truncates the file at the
first member that is not.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dustless.errors import StoreCorrupt
from dustless.store._types import WarcRef

__all__ = ["RecoveryResult", "WarcRecord", "iter_records", "read_record", "recover_warc"]

_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class RecoveryResult:
    """What ``recover_warc`` found: the valid records' end and how many bytes it dropped."""

    path: Path
    records: int  # complete records scanned (from ``start``)
    valid_end: int  # the file's size after recovery
    truncated: int  # bytes removed (0 when the file was intact)


def _check_record(head: bytes, total: int) -> bool:
    """Is this decompressed member exactly one WARC record (WARC 1.1 §4)?"""
    if not head.startswith(b"WARC/"):
        return False
    end = head.find(b"\r\n\r\n")
    if end < 0:
        return False
    length = None
    for line in head[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return False
    # header block, CRLF CRLF, content block, CRLF CRLF
    return length is not None and total == end + 4 + length + 4


def _scan(path: Path, start: int) -> Iterator[tuple[int, int, bool]]:
    """Yield ``(offset, length, ok)`` per gzip member from ``start``; stops after a bad one."""
    with open(path, "rb") as f:
        f.seek(start)
        pos = start
        pending = b""
        while True:
            d = zlib.decompressobj(31)
            member_start = pos
            fed = 0
            head = b""
            total = 0
            ok = True
            while True:
                chunk = pending or f.read(_CHUNK)
                pending = b""
                if not chunk:
                    if fed == 0:
                        return  # clean end of file
                    ok = False  # torn: the member has no trailer
                    break
                try:
                    # bounded output per call, so a hostile member cannot blow up memory
                    data = d.decompress(chunk, _CHUNK)
                    while d.unconsumed_tail and not d.eof:
                        total += len(data)
                        if len(head) < _CHUNK:
                            head += data[: _CHUNK - len(head)]
                        data = d.decompress(d.unconsumed_tail, _CHUNK)
                except zlib.error:
                    ok = False
                    break
                total += len(data)
                if len(head) < _CHUNK:
                    head += data[: _CHUNK - len(head)]
                fed += len(chunk)
                if d.eof:
                    pending = d.unused_data
                    break
            if not ok:
                yield member_start, 0, False
                return
            length = fed - len(pending)
            pos = member_start + length
            yield member_start, length, _check_record(head, total)


def recover_warc(path: str | Path, start: int = 0) -> RecoveryResult:
    """Truncate a torn or garbled tail so that the file holds only whole records.

    Scanning begins at ``start``, which must be a record boundary the caller trusts (0, or
    the end of the last record the crawl DB points at — cheaper than rescanning 1 GB). A file
    shorter than ``start`` means the DB points at bytes that are gone: ``StoreCorrupt``.
    """
    p = Path(path)
    if not p.exists():
        return RecoveryResult(p, 0, 0, 0)
    size = p.stat().st_size
    if size < start:
        raise StoreCorrupt(f"{p} has {size} bytes but the crawl DB points up to byte {start}")
    records = 0
    end = start
    for offset, length, ok in _scan(p, start):
        if not ok:
            end = offset
            break
        records += 1
        end = offset + length
    if end < size:
        with open(p, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
    return RecoveryResult(p, records, end, size - end)


@dataclass(frozen=True, slots=True)
class WarcRecord:
    """A record read back: its WARC headers, the HTTP head if any, and the payload bytes."""

    type: str
    record_id: str
    target_uri: str | None
    date: str
    headers: tuple[tuple[str, str], ...]
    http_status: int | None
    http_headers: tuple[tuple[str, str], ...]
    payload: bytes  # the entity body (response, request), or the whole block otherwise
    ref: WarcRef

    def header(self, name: str) -> str | None:
        low = name.lower()
        return next((v for k, v in self.headers if k.lower() == low), None)

    def http_header(self, name: str) -> str | None:
        low = name.lower()
        return next((v for k, v in self.http_headers if k.lower() == low), None)

    def content(self, max_bytes: int | None = None) -> bytes:
        """The payload decoded: a body stored as sent (``--warc-bodies as-sent``) is still
        content-coded, as its ``Content-Encoding`` says (gzip, deflate, br); a decoded one
        has none (it became ``X-Dustless-Orig-Content-Encoding``) and is returned as it is.
        At most ``max_bytes``, by default what the crawl's decompression guard let through
        (100 x the coded bytes, at least 64 KiB): a bomb is not inflated by reading it.
        ``StoreCorrupt`` if the stored bytes do not decode."""
        coding = self.http_header("content-encoding") if self.type == "response" else None
        if not coding or coding.strip().lower() == "identity":
            return self.payload
        from dustless.fetch import DecodeError, decode_payload

        limit = max(100 * len(self.payload), 64 * 1024) if max_bytes is None else max_bytes
        try:
            return decode_payload(coding, self.payload, limit)
        except DecodeError as exc:
            raise StoreCorrupt(f"{self.ref.file}:{self.ref.offset}: {exc}") from None


def _record_at(f: io.BufferedReader, name: str, offset: int) -> WarcRecord:
    # Imported here, by the readers (export, analysis): a crawl only writes records, and
    # warcio is a noticeable part of its start (python -X importtime).
    from warcio.archiveiterator import ArchiveIterator

    f.seek(offset)
    it = ArchiveIterator(f, check_digests=False)
    try:
        rec = next(it)
    except StopIteration as exc:
        raise StoreCorrupt(f"no WARC record at {name}:{offset}") from exc
    except Exception as exc:  # warcio raises its own and zlib errors on bad bytes
        raise StoreCorrupt(f"unreadable WARC record at {name}:{offset}: {exc}") from exc
    record_id = rec.rec_headers.get_header("WARC-Record-ID") or ""
    if not record_id.startswith("<") or not rec.rec_headers.get_header("WARC-Date"):
        # WARC 1.1 §5.2/§5.4 make both mandatory. warcio reads on through bytes that are no
        # record (an offset a few bytes into a gzip member): what it finds there is not one.
        raise StoreCorrupt(f"no WARC record at {name}:{offset} (no record id or date)")
    payload = rec.raw_stream.read()
    http = rec.http_headers
    status = None
    if http is not None and rec.rec_type in ("response", "revisit"):
        code = http.get_statuscode()
        status = int(code) if code.isdigit() else None
    it.read_to_end(rec)
    length = it.get_record_length() if hasattr(it, "get_record_length") else 0
    return WarcRecord(
        type=rec.rec_type,
        record_id=record_id,
        target_uri=rec.rec_headers.get_header("WARC-Target-URI"),
        date=rec.rec_headers.get_header("WARC-Date") or "",
        headers=tuple(rec.rec_headers.headers),
        http_status=status,
        http_headers=tuple(http.headers) if http is not None else (),
        payload=payload,
        ref=WarcRef(name, offset, int(length or 0), rec.rec_headers.get_header("WARC-Record-ID")),
    )


def read_record(directory: str | Path, ref: WarcRef | tuple[str, int]) -> WarcRecord:
    """The record at ``(file, offset)`` in ``directory`` (``OUTDIR/warc``): one seek, one read."""
    name, offset = (ref.file, ref.offset) if isinstance(ref, WarcRef) else ref
    path = Path(directory) / name
    try:
        with open(path, "rb") as f:
            return _record_at(f, name, offset)
    except FileNotFoundError as exc:
        raise StoreCorrupt(f"WARC file {path} is missing") from exc


def iter_records(path: str | Path) -> Iterator[WarcRecord]:
    """Every record of one WARC file, in order (tests, export)."""
    p = Path(path)
    for offset, _length, ok in _scan(p, 0):
        if not ok:
            raise StoreCorrupt(f"{p}: bad record at byte {offset}")
        with open(p, "rb") as f:
            yield _record_at(f, p.name, offset)
