"""WARC 1.1 files: ``OUTDIR/warc/PREFIX-NNNNN.warc.gz``, one gzip member per record.

Each record is serialized here (WARC 1.1 §4: version line, named fields, CRLF, block, CRLF CRLF),
compressed as its own gzip member and written with one ``write`` call, so that

* ``(file, offset, length)`` of a record is known exactly and can be read with one seek
  (WARC 1.1 Annex D.2, "record-at-time compression");
* a crash can only tear the *last* member, which ``recover_warc`` finds (an incomplete gzip
  member has no trailer) and truncates, so a resumed crawl appends to a valid file;
* ``flush_durable`` fsyncs before the DB commit that points at the records: the DB never
  points at a record that is not on disk (docs/storage.md, "Crash safety").

Why not ``warcio``'s record builder: measured on a 5.4 KB page, building the response and
request records through it cost ~150 µs of header bookkeeping per page, as much as the gzip
itself; the crawler writes 1,500+ pages/s. ``warcio`` stays the reader (``read_record``) and
the tests check every record type with its digest-verifying ``ArchiveIterator``.

HTTP bodies are stored one of two ways (``BODIES``, the crawl's ``--warc-bodies``):

* ``as-sent`` (the default of a crawl): the body as the server sent it, content-coding kept
  (gzip bytes under ``Content-Encoding: gzip``), transfer-coding removed. The head is the
  one received but for the framing of a de-chunked body: ``Transfer-Encoding`` becomes
  ``X-Dustless-Orig-Transfer-Encoding`` and a ``Content-Length`` of the stored bytes is
  added. The payload digest is then WARC 1.1 §5.9's (the entity body, transfer-coding
  removed), what ``warcio check`` recomputes, and what other crawlers record for the same
  bytes.
* ``decoded``: the decompressed payload, so the stored HTTP head drops ``Content-Encoding``
  / ``Transfer-Encoding`` (kept as ``X-Dustless-Orig-*``) and gets a ``Content-Length``
  matching it; the payload digest is the SHA-1 of the decoded content.

A payload the fetch did not get whole carries ``WARC-Truncated`` (WARC 1.1 §5.13, see
``truncation``) and the ``Content-Length`` the server announced when it counts the stored
bytes' kind (always as sent; decoded, when the body was not encoded).
"""

from __future__ import annotations

import base64
import datetime as _dt
import fcntl
import hashlib
import os
import re
import struct
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from dustless.errors import StoreLocked
from dustless.store._cdxj import CdxjEntry, cdx_timestamp, http_status_mime
from dustless.store._recover import recover_warc
from dustless.store._types import WarcRef

__all__ = [
    "AS_SENT",
    "BODIES",
    "DECODED",
    "DEFAULT_MAX_SIZE",
    "REVISIT_PROFILE",
    "TRUNCATIONS",
    "ResponseRefs",
    "WarcWriter",
    "sha1_digest",
    "truncation",
    "warc_date",
]

DEFAULT_MAX_SIZE = 1_000_000_000  # ~1 GB per file (ARCHITECTURE "Storage")
# How response bodies are stored (``--warc-bodies``, docs/archives.md "Bodies as sent").
AS_SENT = "as-sent"
DECODED = "decoded"
BODIES: tuple[str, ...] = (AS_SENT, DECODED)
# WARC 1.1 §6.7.2: the profile URI of a revisit whose payload is identical to an earlier one.
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
# WARC 1.1 §5.13: why a record's payload is shorter than what the server meant to send.
TRUNCATIONS: tuple[str, ...] = ("length", "time", "disconnect", "unspecified")
# The fetcher's one-line error of a body the connection ended early (the server closed or
# reset it mid-body: fetch/_http.py, connection_lost); any other dErr is a body that came
# but could not be read (bad chunking, bad compression).
_CUT_SHORT = "the body was cut short"
_NAME_RE = re.compile(r"^(?P<prefix>.+)-(?P<serial>\d{5,})\.warc\.gz$")
_DROP = {"content-encoding", "transfer-encoding"}
_HTTP_RESPONSE = "application/http;msgtype=response"  # WARC 1.1 §6.3, RFC 9112 §10.2
_HTTP_REQUEST = "application/http;msgtype=request"  # WARC 1.1 §6.4
_FIELDS = "application/warc-fields"  # WARC 1.1 §6.2
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
# RFC 4648 base32 of 10 bits at a time: a SHA-1 (160 bits) is 16 lookups, no padding.
# base64.b32encode is pure Python in 3.11: ~3 µs per digest, three digests per page.
_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_B32_PAIRS = [a + b for a in _B32 for b in _B32]
_LOW_80 = (1 << 80) - 1
try:  # ISA-L's deflate (python-isal): zlib's format, ~2.5x its speed (_deflater)
    from isal import isal_zlib as _isal_zlib

    _isal: ModuleType | None = _isal_zlib
except ImportError:  # pragma: no cover - a platform without its wheel: zlib, as before
    _isal = None
_GZIP_TRAILER = struct.Struct("<II")  # RFC 1952 §2.3.1: CRC32, ISIZE (little-endian)
# A final, empty, fixed-Huffman deflate block (RFC 1951 §3.2.3: BFINAL=1, BTYPE=01, EOB)
# starting at a byte boundary, which is where Z_FULL_FLUSH leaves the stream.
_FINAL_BLOCK = b"\x03\x00"


def sha1_digest(sha1: bytes | str) -> str:
    """``sha1:BASE32`` labelled digest (WARC 1.1 §5.8/§5.9) from raw or hex SHA-1."""
    raw = bytes.fromhex(sha1) if isinstance(sha1, str) else sha1
    if len(raw) != 20:
        return "sha1:" + base64.b32encode(raw).decode("ascii")
    n = int.from_bytes(raw, "big")
    p = _B32_PAIRS
    hi, lo = n >> 80, n & _LOW_80  # unrolled: 0.95 µs, a loop over 16 shifts 1.7 µs
    return "".join(
        (
            "sha1:",
            p[hi >> 70],
            p[hi >> 60 & 1023],
            p[hi >> 50 & 1023],
            p[hi >> 40 & 1023],
            p[hi >> 30 & 1023],
            p[hi >> 20 & 1023],
            p[hi >> 10 & 1023],
            p[hi & 1023],
            p[lo >> 70],
            p[lo >> 60 & 1023],
            p[lo >> 50 & 1023],
            p[lo >> 40 & 1023],
            p[lo >> 30 & 1023],
            p[lo >> 20 & 1023],
            p[lo >> 10 & 1023],
            p[lo & 1023],
        )
    )


def truncation(state: str, error: str | None) -> str | None:
    """The WARC-Truncated value (WARC 1.1 §5.13) of a fetch that ended in network state
    ``state`` (its name) with the one-line ``error``; ``None`` when its body is whole.

    Decided from what the crawl DB keeps (state and error), so ``dustless stats`` counts
    exactly what the records say: tooBig is the size limit or the decompression guard
    (``length``), dTim a stall or the total time (``time``), dErr a connection closed or
    reset mid-body (``disconnect``) or a body that could not be decoded (``unspecified``)."""
    if state == "tooBig":
        return "length"
    if state == "dTim":
        return "time"
    if state == "dErr":
        return "disconnect" if (error or "").startswith(_CUT_SHORT) else "unspecified"
    return None


def warc_date(ts: float) -> str:
    """WARC-Date (WARC 1.1 §5.4: W3C-ISO8601, fractions of a second allowed), UTC."""
    global _date_second, _date_prefix
    # A crawl dates hundreds of records in the same second: its "YYYY-MM-DDThh:mm:ss" is
    # made once (2.2 µs) and each date is that and its microseconds (0.5 µs). They are
    # computed as datetime.fromtimestamp does (the exact fraction times 1e6, rounded half
    # to even); a fraction that rounds up to the next second takes datetime's way.
    second = int(ts)
    micro = round((ts - second) * 1e6)
    if ts < 0 or micro >= 1_000_000:
        return _full_date(ts)
    if second != _date_second:
        # isoformat is strftime("%Y-%m-%dT%H:%M:%S") for the years a timestamp >= 0 can
        # have, at 1.7 µs instead of 2.6 µs (measured).
        _date_second = second
        _date_prefix = _dt.datetime.fromtimestamp(second, _dt.UTC).isoformat()[:19]
    return f"{_date_prefix}.{micro:06d}Z"


def _full_date(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).isoformat(timespec="microseconds")[:26] + "Z"


_date_second = -1
_date_prefix = ""


# RFC 9562 §5.4 version 4: bits 48-51 of the 128 are 0100, bits 64-65 are 10.
_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def _record_id(random16: bytes | None = None) -> str:
    # WARC 1.1 §5.2: a globally unique URI. What uuid.uuid4() does (16 random bytes, version
    # and variant bits), without its UUID object: 2.6 µs → 0.9 µs, two ids per page.
    raw = os.urandom(16) if random16 is None else random16
    n = (int.from_bytes(raw, "big") & _UUID4_CLEAR) | _UUID4_SET
    h = f"{n:032x}"
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>"


# Random bytes for record ids drawn this many ids at a time: one getrandom(2) call per 256
# ids instead of one per id (os.urandom is the same CSPRNG either way).
_IDS_PER_DRAW = 256
# RFC 9562 §4.1: the variant bits 10 over the two low bits of the hex digit they start.
_VARIANT = {d: "89ab"[int(d, 16) & 3] for d in "0123456789abcdef"}


def _target(url: str) -> str:
    # WARC-Target-URI is a URI (§5.3); never let whitespace or controls break the header.
    return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", url)


def _field(value: str) -> str:
    return value.replace("\r", " ").replace("\n", " ")


def _split_head(head: bytes) -> tuple[str, list[tuple[str, str]]]:
    """First line and header fields of an HTTP message head (latin-1, RFC 9112 §5)."""
    text = head.decode("latin-1")
    lines = text.replace("\r\n", "\n").split("\n")
    first = lines[0].strip()
    fields: list[tuple[str, str]] = []
    for line in lines[1:]:
        if not line.strip():
            continue
        if line[0] in " \t" and fields:  # obsolete line folding (RFC 9112 §5.2)
            name, value = fields[-1]
            fields[-1] = (name, value + " " + line.strip())
            continue
        name, sep, value = line.partition(":")
        if sep:
            fields.append((name.strip(), value.strip()))
    return first, fields


def _response_head(head: bytes, payload_len: int | None, *, truncated: bool = False) -> bytes:
    """The stored HTTP head: status line and fields, with the decoded body's framing.

    A truncated payload (``truncated``) that was not content-encoded keeps the length the
    server announced: its bytes are the first ones of what was sent, and a replay tool
    serving the head as it is (pywb's ``id_`` mode) then hands the client a message that
    ends early, as the capture did, instead of a whole 200 of the bytes that came (WARC 1.1
    §5.13: the record is a truncated capture, not a short resource). Heritrix and wget store
    truncated records so. Otherwise the announced length, which counts encoded bytes or
    does not exist (chunked), stays as ``X-Dustless-Orig-Content-Length``."""
    first, fields = _split_head(head)
    if not first.startswith("HTTP/"):
        first = "HTTP/1.1 200 OK" if not first else "HTTP/1.1 " + first
    encoded = truncated and any(n.lower() == "content-encoding" for n, _ in fields)
    lines = [first]
    announced = False
    for name, value in fields:
        low = name.lower()
        if low in _DROP:
            lines.append(f"X-Dustless-Orig-{name}: {value}")
        elif low == "content-length":
            if payload_len is None:
                lines.append(f"{name}: {value}")
            elif value == str(payload_len):
                pass  # written below
            elif truncated and not encoded and not announced and _longer(value, payload_len):
                lines.append(f"{name}: {value}")
                announced = True
            else:
                lines.append(f"X-Dustless-Orig-{name}: {value}")
        else:
            lines.append(f"{name}: {value}")
    if payload_len is not None and not announced:
        lines.append(f"Content-Length: {payload_len}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _sent_head(head: bytes, payload_len: int, *, truncated: bool = False) -> bytes:
    """The stored HTTP head of a body stored as sent: the head as received, but for the
    framing of the de-chunked body (WARC 1.1 §6.3 records the message; §5.9's payload is
    its body with the transfer-coding removed, and stored so, ``warcio check`` recomputes
    the same digest).

    ``Transfer-Encoding`` becomes ``X-Dustless-Orig-Transfer-Encoding`` and the stored
    bytes' ``Content-Length`` is added: a head still saying ``chunked`` over a de-chunked
    body makes every reader guess (warcio and pywb try to de-chunk it and fall back when it
    does not parse as chunks: a body that starts with a hex number and CRLF is misread).
    ``Content-Encoding`` stays, since the bytes are still coded. An announced length is
    kept when it counts the stored bytes, or, ``truncated``, more of them: the record is
    the first bytes of that message, and pywb's ``id_`` replay ends early as the capture
    did. Any other (a 304's length of the representation, a length beside chunked, RFC
    9112 §6.3) stays as ``X-Dustless-Orig-Content-Length``."""
    if _sent_as_is(head, payload_len, truncated):
        return head
    return _rebuilt_sent_head(head, payload_len, truncated)


def _rebuilt_sent_head(head: bytes, payload_len: int, truncated: bool) -> bytes:
    """``_sent_head`` the long way: the head parsed into fields and written again."""
    first, fields = _split_head(head)
    if not first.startswith("HTTP/"):
        first = "HTTP/1.1 200 OK" if not first else "HTTP/1.1 " + first
    chunked = any(n.lower() == "transfer-encoding" for n, _ in fields)
    lines = [first]
    framed = False
    for name, value in fields:
        low = name.lower()
        if low == "transfer-encoding":
            lines.append(f"X-Dustless-Orig-{name}: {value}")
        elif low == "content-length":
            if (
                not (framed or chunked)
                and value.isdigit()
                and (int(value) == payload_len or (truncated and int(value) > payload_len))
            ):
                lines.append(f"{name}: {value}")
                framed = True
            else:
                lines.append(f"X-Dustless-Orig-{name}: {value}")
        else:
            lines.append(f"{name}: {value}")
    if not framed:
        lines.append(f"Content-Length: {payload_len}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# A head already in the form ``_sent_head`` writes: an ``HTTP/`` status line and
# ``Name: value`` fields (RFC 9110 §5.1 token names, values of visible ASCII and inner spaces,
# no whitespace around them, nothing folded or empty), CRLF line ends, one empty line at the
# end. The fetcher's heads are so (``Response.raw_head``); anything else takes the long way.
_CANONICAL_HEAD = re.compile(
    rb"HTTP/[!-~](?:[ -~]*[!-~])?(?:\r\n[!#-'*+\-.0-9A-Z^_`a-z|~]+: [!-~](?:[ -~]*[!-~])?)*\r\n\r\n"
)
_CL_FIELD = b"\r\ncontent-length: "


def _sent_as_is(head: bytes, payload_len: int, truncated: bool) -> bool:
    """Would ``_sent_head`` give ``head`` back unchanged? Yes for a canonical head (its
    parse and rebuild are the identity) with no ``Transfer-Encoding`` and exactly one
    ``Content-Length`` that frames the stored bytes (equal, or, ``truncated``, larger): the
    common response, kept byte for byte without the ~5 µs of splitting and joining it."""
    if _CANONICAL_HEAD.fullmatch(head) is None:
        return False
    low = head.lower()
    at = low.find(_CL_FIELD)
    if at < 0 or b"\r\ntransfer-encoding:" in low or low.find(_CL_FIELD, at + 1) >= 0:
        return False
    at += len(_CL_FIELD)
    value = head[at : head.index(b"\r", at)]
    if not value.isdigit():
        return False
    length = int(value)
    return length == payload_len or (truncated and length > payload_len)


def _longer(value: str, payload_len: int) -> bool:
    return value.isdigit() and int(value) > payload_len


def _record(
    rec_type: str,
    fields: Sequence[tuple[str, str]],
    content_type: str,
    block: bytes,
    *,
    block_digest: bool = True,
    rid: str | None = None,
) -> tuple[str, bytes]:
    """One WARC 1.1 record (§4): header block, CRLF, content block, CRLF CRLF; its id."""
    text = "".join([f"{name}: {_field(value)}\r\n" for name, value in fields])
    return _record_of(rec_type, text, content_type, block, b"", block_digest, rid)


def _record_of(
    rec_type: str,
    fields: str,
    content_type: str,
    head: bytes,
    body: bytes,
    block_digest: bool = True,
    rid: str | None = None,
) -> tuple[str, bytes]:
    """``_record`` of ``fields`` already rendered (``Name: value`` lines ending in CRLF,
    values free of CR and LF) and a content block in two parts, ``head + body``, never
    joined on its own: the record is one join (the hot path, two records a page)."""
    rid = rid or _record_id()
    if block_digest:
        sha = hashlib.sha1(head)
        if body:
            sha.update(body)
        digest = f"WARC-Block-Digest: {sha1_digest(sha.digest())}\r\n"
    else:
        digest = ""
    warc_head = (
        f"WARC/1.1\r\nWARC-Type: {rec_type}\r\nWARC-Record-ID: {rid}\r\n{fields}{digest}"
        f"Content-Type: {content_type}\r\nContent-Length: {len(head) + len(body)}\r\n\r\n"
    )
    return rid, b"".join((warc_head.encode("utf-8"), head, body, b"\r\n\r\n"))


@dataclass(frozen=True, slots=True)
class ResponseRefs:
    """Where ``write_response`` / ``write_revisit`` put their records."""

    response: WarcRef  # the response or revisit record
    request: WarcRef | None
    payload_digest: str  # sha1:BASE32
    payload_sha1: str  # hex


def _isal_level(level: int) -> int | None:
    """ISA-L's level for ``level`` on zlib's scale (0: stored, 1 fastest … 9 smallest, -1:
    6), or ``None``: zlib's. Levels 1–9 use ISA-L where it is installed: its level 1
    compresses the test web's pages about as small as zlib's 6 (ratio 0.491 against 0.487)
    in ~9.5 µs a record instead of ~24 (``bench/warc_encoding_bench.py`` prints both); its
    levels go to 3. Any inflater reads the stream; only the bytes differ from zlib's."""
    if _isal is None or level == 0:
        return None
    return 1 if level == -1 or level <= 6 else 2 if level <= 8 else 3


def _deflater(level: int) -> Any:
    """A raw-deflate compressor (RFC 1951) for ``level`` (``_isal_level``)."""
    isal_level = _isal_level(level)
    if _isal is None or isal_level is None:
        return zlib.compressobj(level, zlib.DEFLATED, -15)
    return _isal.compressobj(isal_level, _isal.DEFLATED, -15)


_crc32 = zlib.crc32 if _isal is None else _isal.crc32


class WarcWriter:
    """Appends WARC 1.1 records to rolling gzip files in one directory (``OUTDIR/warc``).

    On open the writer takes the newest ``PREFIX-NNNNN.warc.gz``, recovers it (a torn last
    record from a crash is truncated; scanning starts at ``committed_ends[file]`` when the DB
    says where its last record ends) and appends to it while it is under ``max_size``; else it
    starts the next serial with a ``warcinfo`` record (WARC 1.1 §6.2). One writer per prefix:
    the open file is locked (``flock``), a second writer raises ``StoreLocked``.
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        prefix: str = "dustless",
        max_size: int = DEFAULT_MAX_SIZE,
        info: Mapping[str, str] | None = None,
        compress_level: int = 6,
        committed_ends: Mapping[str, int] | None = None,
        exact_ends: Mapping[str, int] | None = None,
        clock: Callable[[], float] = time.time,
        bodies: str = DECODED,
    ) -> None:
        if bodies not in BODIES:
            raise ValueError(f"bodies must be one of {', '.join(BODIES)}, not {bodies!r}")
        # How the crawl stores bodies (``BODIES``): its recorder hands over the payload of
        # that kind and says so with each record (``write_response(as_sent=)``).
        self.bodies = bodies
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.max_size = max_size
        self.info = dict(info or {"software": "dustless/0.1", "format": "WARC File Format 1.1"})
        self.compress_level = compress_level
        # One raw-deflate stream for the writer's life, ended per record with Z_FULL_FLUSH
        # (which resets the compressor: no match reaches back before it, RFC 1951 decoders
        # restart there) and wrapped as its own gzip member here. A fresh
        # zlib.compressobj per record allocated and cleared ~256 KiB of deflate state: ~45 µs
        # of a 5 KB record's ~60 µs (measured); this costs ~7 bytes more per member.
        self._deflate = _deflater(compress_level)
        # ISA-L: each record deflated by one call that ends its stream (Z_FINISH) instead.
        # Its state is cheap to set up (unlike zlib's), and most of the full flush's time
        # was the record's own compression, deferred to it; what the flush added was an
        # empty stored block and then an empty final block, 7 bytes a member that one call
        # does not write (RFC 1951 §3.2.4).
        self._oneshot = _isal_level(compress_level)
        # Random bytes for record ids, drawn _IDS_PER_DRAW ids at a time (``_next_id``).
        self._random = ""  # their hex digits, 32 an id
        self._random_at = 0
        level = 6 if compress_level == -1 else compress_level
        # The header zlib writes for wbits=31 (RFC 1952 §2.3): no name, MTIME 0, XFL from
        # the level (2: slowest, 4: fastest), OS 3 (Unix).
        xfl = 2 if level == 9 else 4 if level < 2 else 0
        self._gzip_header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + bytes([xfl, 3])
        self.clock = clock  # only for the warcinfo record's date
        self._file: BinaryIO | None = None
        self._name = ""
        self._size = 0
        self._dirty = False
        self._written: dict[str, int] = {}  # files written since ``written_ends`` was asked
        # The index lines of the records written since ``take_index`` (files: their byte
        # span): the CDXJ index takes them as they are instead of reading the records back.
        self._entries: list[CdxjEntry] = []
        self._spans: dict[str, tuple[int, int]] = {}
        serials = sorted(
            int(m["serial"])
            for p in self.directory.iterdir()
            if (m := _NAME_RE.match(p.name)) and m["prefix"] == prefix
        )
        if serials:
            self._serial = serials[-1]
            name = self._file_name(self._serial)
            # The crawl DB may say exactly where the last commit left each file: records a
            # crash left after that point are not in the DB, and their URLs are fetched
            # again — cut them, so no record exists that no row points to. A file the DB
            # never saw committed (rolled after the last commit) starts over.
            cut = exact_ends.get(name, 0) if exact_ends else None
            self._open(name, recover_from=(committed_ends or {}).get(name, 0), cut_to=cut)
            if self._size >= max_size:
                self._roll()
        else:
            self._serial = 0
            self._roll()

    # -- files -------------------------------------------------------------------------------
    def _file_name(self, serial: int) -> str:
        return f"{self.prefix}-{serial:05d}.warc.gz"

    @property
    def current_file(self) -> str:
        """Name (relative to the directory) of the file records go to now."""
        return self._name

    def _open(self, name: str, recover_from: int | None = None, cut_to: int | None = None) -> None:
        f = open(self.directory / name, "ab")  # noqa: SIM115 - held for the writer's life
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            f.close()
            raise StoreLocked(f"WARC file {name} is being written by another process") from exc
        if cut_to is not None and f.seek(0, os.SEEK_END) > cut_to:
            f.truncate(cut_to)
            f.flush()
            os.fsync(f.fileno())
            recover_from = min(recover_from or 0, cut_to)
        if recover_from is not None:
            # Only under the lock: never truncate a file another writer is appending to.
            try:
                recover_warc(self.directory / name, start=recover_from)
            except BaseException:
                f.close()
                raise
        self._file, self._name, self._size = f, name, f.seek(0, os.SEEK_END)
        if self._size == 0:
            # WARC 1.1 §6.2: a warcinfo record describing the file comes first.
            body = "".join(f"{k}: {_field(v)}\r\n" for k, v in self.info.items())
            fields = [("WARC-Date", warc_date(self.clock())), ("WARC-Filename", name)]
            self._append(*_record("warcinfo", fields, _FIELDS, body.encode("utf-8")))
            self._fsync_dir()

    def _roll(self) -> None:
        if self._file is not None:
            self.flush_durable()
            self._file.close()
        self._serial += 1
        self._open(self._file_name(self._serial))

    def _fsync_dir(self) -> None:
        # A new file's directory entry must be durable too, or an fsynced file may vanish.
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _next_id(self) -> str:
        # ``_record_id`` of the next 16 random bytes, read from their hex digits, made at
        # once for the whole draw (0.6 µs an id instead of 1.7): the version nibble (hex
        # digit 12) is written 4, the variant's (16) keeps its low two bits under 10.
        at = self._random_at
        if at >= len(self._random):
            self._random, at = os.urandom(16 * _IDS_PER_DRAW).hex(), 0
        self._random_at = at + 32
        h = self._random
        return (
            f"<urn:uuid:{h[at : at + 8]}-{h[at + 8 : at + 12]}-4{h[at + 13 : at + 16]}-"
            f"{_VARIANT[h[at + 16]]}{h[at + 17 : at + 20]}-{h[at + 20 : at + 32]}>"
        )

    def _append(self, rid: str, data: bytes) -> WarcRef:
        assert self._file is not None, "the writer is closed"
        if self._oneshot is not None and _isal is not None:
            deflated = _isal.compress(data, self._oneshot, -15)
        else:
            deflate = self._deflate
            deflated = deflate.compress(data) + deflate.flush(zlib.Z_FULL_FLUSH) + _FINAL_BLOCK
        member = b"".join(
            (
                self._gzip_header,
                deflated,
                _GZIP_TRAILER.pack(_crc32(data), len(data) & 0xFFFFFFFF),
            )
        )
        offset = self._size
        self._file.write(member)
        self._size += len(member)
        self._dirty = True
        self._written[self._name] = self._size
        span = self._spans.get(self._name)
        self._spans[self._name] = (offset if span is None else span[0], self._size)
        return WarcRef(self._name, offset, len(member), rid)

    def _maybe_roll(self) -> None:
        if self._size >= self.max_size:
            self._roll()

    # -- records -----------------------------------------------------------------------------
    def write_response(
        self,
        url: str,
        http_head: bytes,
        payload: bytes,
        *,
        fetched_at: float,
        request: bytes | None = None,
        ip: str | None = None,
        payload_sha1: str | None = None,
        status_mime: tuple[int, str | None] | None = None,
        truncated: str | None = None,
        as_sent: bool = False,
    ) -> ResponseRefs:
        """A ``response`` record (WARC 1.1 §6.3) and, with ``request``, its ``request`` record
        (§6.4, ``WARC-Concurrent-To`` the response). Both go to the same file.
        ``status_mime``: the status and media type of ``http_head`` where the caller has
        them already parsed (the index needs them; otherwise they are read from the head).
        ``truncated``: why ``payload`` is incomplete (one of ``TRUNCATIONS``, ``truncation``
        of the fetch), written as ``WARC-Truncated`` (WARC 1.1 §5.13).
        ``as_sent``: ``payload`` is the body as sent (content-coded): ``http_head`` is kept
        as received but for its framing (``_sent_head``); else ``payload`` is decoded."""
        if truncated is not None and truncated not in TRUNCATIONS:
            raise ValueError(f"WARC-Truncated must be one of {', '.join(TRUNCATIONS)}")
        self._maybe_roll()
        sha = payload_sha1 or hashlib.sha1(payload).hexdigest()
        digest = sha1_digest(sha)
        date = warc_date(fetched_at)
        target = _target(url)  # no whitespace or control left: a field value as it is
        # The fields in the order ``_record`` writes them; no value here holds CR or LF.
        ip_field = f"WARC-IP-Address: {_field(ip)}\r\n" if ip else ""
        cut_field = "" if truncated is None else f"WARC-Truncated: {truncated}\r\n"
        fields = (
            f"WARC-Date: {date}\r\nWARC-Target-URI: {target}\r\n{ip_field}"
            f"WARC-Payload-Digest: {digest}\r\n{cut_field}"
        )
        cut = truncated is not None
        framing = _sent_head if as_sent else _response_head
        head = framing(http_head, len(payload), truncated=cut)
        rid = self._next_id()
        resp = self._append(*_record_of("response", fields, _HTTP_RESPONSE, head, payload, rid=rid))
        if status_mime is None:
            status, mime = http_status_mime(http_head)
        else:
            status, mime = str(status_mime[0]), status_mime[1] or "unk"
        self._entries.append(
            CdxjEntry(target, cdx_timestamp(date), mime, status, digest, resp.length,
                      resp.offset, resp.file)
        )  # fmt: skip
        req = self._write_request(target, request, date, resp.record_id) if request else None
        return ResponseRefs(resp, req, digest, sha)

    def write_revisit(
        self,
        url: str,
        http_head: bytes,
        payload_sha1: str,
        *,
        fetched_at: float,
        refers_to_uri: str,
        refers_to_date: float,
        refers_to_id: str | None = None,
        request: bytes | None = None,
        ip: str | None = None,
        payload_len: int | None = None,
        as_sent: bool = False,
    ) -> ResponseRefs:
        """A ``revisit`` record with the identical-payload-digest profile (WARC 1.1 §6.7.2):
        the HTTP head only, ``WARC-Refers-To-*`` naming the first capture of the payload.
        ``as_sent``: the payload (``payload_sha1``, ``payload_len``) is the body as sent,
        and the head is framed as ``write_response`` frames it."""
        self._maybe_roll()
        digest = sha1_digest(payload_sha1)
        date = warc_date(fetched_at)
        target = _target(url)
        fields = [("WARC-Date", date), ("WARC-Target-URI", target)]
        if ip:
            fields.append(("WARC-IP-Address", ip))
        fields += [
            ("WARC-Profile", REVISIT_PROFILE),
            ("WARC-Payload-Digest", digest),
            ("WARC-Refers-To-Target-URI", _target(refers_to_uri)),
            ("WARC-Refers-To-Date", warc_date(refers_to_date)),
        ]
        if refers_to_id:
            fields.append(("WARC-Refers-To", refers_to_id))
        if as_sent and payload_len is not None:
            block = _sent_head(http_head, payload_len)
        else:
            block = _response_head(http_head, payload_len)
        resp = self._append(*_record("revisit", fields, _HTTP_RESPONSE, block, rid=self._next_id()))
        status, _ = http_status_mime(http_head)
        self._entries.append(
            CdxjEntry(target, cdx_timestamp(date), "warc/revisit", status, digest,
                      resp.length, resp.offset, resp.file)
        )  # fmt: skip
        req = self._write_request(target, request, date, resp.record_id) if request else None
        return ResponseRefs(resp, req, digest, payload_sha1)

    def _write_request(self, target: str, raw: bytes, date: str, concurrent_to: str) -> WarcRef:
        # The request as sent, byte for byte (WARC 1.1 §6.4). ``target``: the response's
        # WARC-Target-URI (``_target`` of its URL); the date and the id are ours.
        fields = (
            f"WARC-Date: {date}\r\nWARC-Target-URI: {target}\r\n"
            f"WARC-Concurrent-To: {concurrent_to}\r\n"
        )
        rid = self._next_id()
        return self._append(*_record_of("request", fields, _HTTP_REQUEST, raw, b"", rid=rid))

    # -- durability --------------------------------------------------------------------------
    def flush_durable(self) -> None:
        """Write buffered bytes and fsync: call before the DB commit that points at them."""
        if self._file is not None and self._dirty:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._dirty = False

    def take_index(self) -> tuple[dict[str, tuple[int, int]], list[CdxjEntry]]:
        """The byte span written in each file since the last call, and the index entries of
        the response and revisit records in it (``CdxjIndex.sync(known=…)``)."""
        spans, entries = self._spans, self._entries
        self._spans, self._entries = {}, []
        return spans, entries

    def written_ends(self) -> dict[str, int]:
        """Where each file written since the last call ends (call after ``flush_durable``:
        the crawl DB records these as the committed ends, ``exact_ends`` on reopening)."""
        out, self._written = self._written, {}
        return out

    def close(self) -> None:
        if self._file is not None:
            self.flush_durable()
            self._file.close()
            self._file = None

    def __enter__(self) -> WarcWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
