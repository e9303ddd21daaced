"""The fetcher's HTTP/1.1 transport: kept-alive connections, one request at a time on each.

Written here instead of taking aiohttp's client (ARCHITECTURE records that choice; this is
its measured change). The crawler uses HTTP as a bare transport: no cookies, no redirects,
no proxies, no automatic decompression, and one retry only: a request on a kept-alive
connection that the server closed before answering (RFC 9112 §9.3.1; see ``_client``).
aiohttp's client alone cost more CPU a request than the whole fetch does now, with its DNS
cache, address policy, limits, states and the heads kept for WARC
(``bench/http_client_bench.py`` measures both in one run), and a page's request was the
largest single cost of the crawl. What is left is small and standard:

* parsing is llhttp's, through ``httptools`` (uvicorn's binding), with the same leniencies
  aiohttp's own llhttp build turns on for responses: header values with odd bytes, a bare LF
  ending a line, spaces after a chunk size — what real servers send;
* connections come from asyncio (``loop.create_connection``, TLS by the ``ssl`` module, SNI
  named by the URL's host while the socket goes to the address our resolver checked);
* a pool keeps idle connections per (scheme, host, port), at most ``limit`` open in all,
  each for less time than its server keeps it (``_KEEP_IDLE``, ``Keep-Alive: timeout``).

Every fault raises an ``HttpFault`` subclass that names the stage it struck (connect, head,
body), so the fetcher can give seed 004's state without guessing from messages.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import cast

import httptools

__all__ = [
    "BodyFault",
    "ConnectFault",
    "Connection",
    "HeadFault",
    "HttpFault",
    "HttpPool",
    "Response",
    "tls_context",
]

# A response body buffered beyond this pauses reading until the fetcher takes it (the
# fetcher reads as data comes, so this only matters for a consumer slower than the network).
_HIGH_WATER = 256 * 1024
# How long an idle kept-alive connection is reused when the server did not say (RFC 9112
# §9.3 lets either side close an idle connection at any time). The common servers' own
# defaults: Apache 2.4 KeepAliveTimeout 5 s, lighttpd server.max-keep-alive-idle 5 s,
# Node.js keepAliveTimeout 5 s, nginx keepalive_timeout 75 s, IIS 120 s. A second under the
# shortest of them: a polite crawl's rest (often a robots.txt Crawl-delay of 5) then meets
# a new connection instead of one the server is closing. A connection the server closed
# anyway costs one more connect: the request is sent again (``reusable_fault``).
_KEEP_IDLE = 4.0
# A ``Keep-Alive: timeout=N`` header (RFC 2068 §19.7.1.1, sent by Apache) says how long the
# server keeps it: we keep it a margin less (its clock starts when it sent the last byte,
# ours once the body is read), and never more than this.
_KEEP_MARGIN = 1.0
_KEEP_MOST = 30.0
# llhttp's limit on header lines is none; aiohttp's was 128: a head of more is hostile.
_MAX_FIELDS = 128


class HttpFault(Exception):
    """A remote fault. ``stage``: ``connect``, ``head`` or ``body``; ``kind`` says more."""

    stage = "head"

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ConnectFault(HttpFault):
    """No connection: ``refused`` (any socket or TLS error), ``timeout``, ``no-address``,
    ``address-refused`` (the address policy, checked again at connect)."""

    stage = "connect"


class HeadFault(HttpFault):
    """No complete response head: ``timeout`` (nothing for the stall time), ``closed`` (the
    server closed before a complete head), ``reset`` (an error on the socket), ``not-http``
    (no HTTP status line), ``malformed``."""

    stage = "head"


class BodyFault(HttpFault):
    """The body did not arrive whole: ``timeout``, ``closed`` (cut short), ``malformed``."""

    stage = "body"


class Response:
    """The head of a final (non-1xx) response, as received."""

    __slots__ = ("headers", "reason", "status", "version")

    def __init__(
        self, status: int, version: str, reason: bytes, headers: list[tuple[bytes, bytes]]
    ) -> None:
        self.status = status
        self.version = version  # "1.1", "1.0"
        self.reason = reason
        self.headers = headers  # (name, value) bytes, in order, repeats kept

    def keep_alive_timeout(self) -> float | None:
        """The ``timeout`` of a ``Keep-Alive`` header (``timeout=5, max=100``), if any."""
        for name, value in self.headers:
            if name.lower() != b"keep-alive":
                continue
            for part in value.split(b","):
                key, _, number = part.partition(b"=")
                if key.strip().lower() == b"timeout":
                    try:
                        return max(0.0, float(number.strip()))
                    except ValueError:
                        return None
        return None

    def raw_head(self) -> bytes:
        """Status line and fields as received (values without their surrounding spaces),
        ending with the empty line: the WARC response record's HTTP head."""
        reason = b" " + self.reason if self.reason else b""
        first = b"HTTP/%s %d%s" % (self.version.encode("ascii"), self.status, reason)
        lines = [first]
        lines.extend(name + b": " + value for name, value in self.headers)
        return b"\r\n".join(lines) + b"\r\n\r\n"


class Connection(asyncio.Protocol):
    """One TCP (or TLS) connection to one origin; the parser's callbacks land here."""

    def __init__(self, pool: HttpPool, key: tuple[str, str, int], max_head: int) -> None:
        self._pool = pool
        self.key = key
        self._max_head = max_head
        self._loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_until = 0.0  # when idle: reused only before this time (the pool's clock)
        self.reused = False  # this exchange went on a connection that had served one before
        self._parser = httptools.HttpResponseParser(self)
        # Aiohttp's response parser has these on too (outside its debug mode).
        self._parser.set_dangerous_leniencies(
            lenient_headers=True,
            lenient_optional_cr_before_lf=True,
            lenient_spaces_after_chunk_size=True,
        )
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._busy = False  # between send() and the pool's release
        self._begin()

    def _begin(self) -> None:
        """The state of one exchange (``send`` starts one)."""
        self._reason = b""
        self._fields: list[tuple[bytes, bytes]] = []
        self._field_bytes = 0
        self._head: Response | None = None
        self._head_bytes = 0
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._complete = False
        self._until_close = False
        self._keep_alive = False
        self._fault: HttpFault | None = None

    # -- asyncio.Protocol -----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's are not asyncio.Transport subclasses, but the same API).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if not self._busy:  # bytes nobody asked for, on an idle connection: not reusable
            self.close()
            return
        if self._head is None:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail("malformed", "the server switched protocols (101/Upgrade)")
        except httptools.HttpParserError as exc:
            message = str(exc) or type(exc).__name__
            if self._head is not None:
                kind = "malformed"
            elif "Expected HTTP/" in message:
                kind = "not-http"  # no status line at all: SSH, HTML, … (llhttp's words)
            else:
                kind = "malformed"
            self._fail(kind, f"{type(exc).__name__}: {message}")
        if self._head is None and self._fault is None and self._head_bytes > self._max_head:
            self._fail("malformed", f"response head over {self._max_head} bytes")

    def eof_received(self) -> bool | None:
        # The server closed its side (an idle connection's keep-alive timeout): never reused
        # again. Returning None lets the transport close ours too.
        self.closed = True
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._pool._forget(self)
        if self._complete or self._fault is not None:
            self._wake()
            return
        if exc is None and self._head is not None and self._until_close:
            self._complete = True  # RFC 9112 §6.3 (8): the body ends where the connection does
        elif self._head is None:
            if exc is None:
                self._fault = HeadFault("closed", "the server closed before a complete head")
            else:
                self._fault = HeadFault("reset", f"{type(exc).__name__}: {exc}")
        else:
            what = "closed" if exc is None else f"{type(exc).__name__}: {exc}"
            self._fault = BodyFault("closed", f"the body was cut short ({what})")
        self._wake()

    # -- llhttp callbacks (httptools) -------------------------------------------------------
    def on_message_begin(self) -> None:
        if self._complete:  # bytes after the answer: the connection is not reused
            raise ValueError("data after the complete response")
        self._reason = b""  # a final answer after an interim one: its own status and fields
        self._fields = []
        self._field_bytes = 0

    def on_status(self, status: bytes) -> None:
        self._reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._head is not None:
            return  # a trailer field of a chunked body (RFC 9112 §7.1.2): not the head's
        # llhttp drops the spaces before a value, not those after (RFC 9110 §5.5).
        value = value.rstrip(b" \t")
        if b"\x00" in value:
            raise ValueError("a NUL byte in a header value")  # as aiohttp: a broken head
        self._fields.append((name, value))
        if len(self._fields) > _MAX_FIELDS:
            raise ValueError(f"more than {_MAX_FIELDS} header fields")
        # The head's size so far, counted as it is parsed: a head that arrives in one read
        # is measured before it is taken (data_received measures one still coming).
        self._field_bytes += len(name) + len(value) + 4
        if self._field_bytes > self._max_head:
            raise ValueError(f"response head over {self._max_head} bytes")

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            return  # an interim answer (100 Continue, 103 Early Hints): the final one follows
        self._head = Response(status, self._parser.get_http_version(), self._reason, self._fields)
        # No length and not chunked: the body is what comes until the server closes.
        framed = any(
            low == b"content-length" or (low == b"transfer-encoding" and b"chunked" in v.lower())
            for low, v in ((name.lower(), value) for name, value in self._fields)
        )
        self._until_close = not framed and status not in (204, 304)
        self._wake()

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > _HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._head is None:
            return  # the end of an interim answer
        self._complete = True
        self._keep_alive = self._parser.should_keep_alive()
        self._wake()

    # -- the exchange -------------------------------------------------------------------------
    def _fail(self, kind: str, message: str) -> None:
        if self._fault is None:
            cls = HeadFault if self._head is None else BodyFault
            self._fault = cls(kind, message)
        self._wake()
        self.close()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self, stall: float) -> None:
        """Until the parser wakes us, or ``TimeoutError`` after ``stall`` seconds. A timer
        that fails the waiter, not ``asyncio.timeout``: that one cancels the task and
        uncancels it, ~3 µs more a wait (measured under uvloop), once or twice a fetch."""
        waiter = self._waiter = self._loop.create_future()
        timer = self._loop.call_later(stall, _stalled, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    async def send(self, request: bytes, stall: float) -> Response:
        """Write ``request`` and wait for the final response's head (at most ``stall``
        seconds without anything arriving)."""
        assert self.transport is not None
        self._begin()
        self._busy = True
        if self.closed:  # never a request on a connection that is gone (the pool skips them)
            raise HeadFault("closed", "the connection was closed before the request")
        self.transport.write(request)
        while self._head is None:
            if self._fault is not None:
                raise self._fault
            before = self._head_bytes
            try:
                await self._wait(stall)
            except TimeoutError:
                if self._head_bytes == before and self._head is None:
                    raise HeadFault("timeout", f"no response head within {stall:g} s") from None
        return self._head

    async def read(self, stall: float) -> bytes:
        """The next piece of the body; ``b""`` once it is complete."""
        while True:
            if self._chunks:
                chunk = self._chunks.popleft()
                self._buffered -= len(chunk)
                if self._paused and self._buffered <= _HIGH_WATER // 4 and self.transport:
                    self._paused = False
                    self.transport.resume_reading()
                return chunk
            if self._complete:
                return b""
            if self._fault is not None:
                raise self._fault
            try:
                await self._wait(stall)
            except TimeoutError:
                if not self._chunks and not self._complete and self._fault is None:
                    raise BodyFault("timeout", f"no data for {stall:g} s") from None

    def unanswered(self, fault: HttpFault) -> bool:
        """``fault`` ended this exchange before a single byte of an answer arrived, by the
        connection closing or failing (not a timeout: a slow server may be at work on it)."""
        return (
            isinstance(fault, HeadFault)
            and fault.kind in ("closed", "reset")
            and self._head_bytes == 0
        )

    @property
    def reusable(self) -> bool:
        """The exchange ended cleanly and the server keeps the connection (RFC 9112 §9.3)."""
        return self._complete and self._keep_alive and not self.closed and not self._chunks

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.close()
        self.closed = True
        self._pool._forget(self)


def _stalled(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


def tls_context(ca_file: str) -> ssl.SSLContext:
    """Certificates checked against the system's CAs and those of the PEM file ``ca_file``
    (a private CA: ``--ca-file``). ``ValueError`` names what is wrong with the file."""
    context = ssl.create_default_context()
    try:
        context.load_verify_locations(cafile=ca_file)
    except OSError as exc:  # missing, unreadable; ssl.SSLError (an OSError): not PEM certs
        reason = exc.strerror or getattr(exc, "reason", None) or str(exc)
        raise ValueError(f"--ca-file {ca_file}: {reason}") from None
    return context


class HttpPool:
    """Kept-alive connections per (scheme, host, port); at most ``limit`` open in all."""

    def __init__(
        self,
        *,
        limit: int = 100,
        verify_tls: bool | ssl.SSLContext = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = max(1, limit)
        self._verify = verify_tls
        self._ssl: ssl.SSLContext | None = None
        self._clock = clock
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._open: set[Connection] = set()
        self._slots: deque[asyncio.Future[None]] = deque()  # waiting for a free slot
        self.closed = False

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            if isinstance(self._verify, ssl.SSLContext):
                self._ssl = self._verify
            elif self._verify:
                self._ssl = ssl.create_default_context()
            else:  # a broken certificate costs nothing: no check at all
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                self._ssl = context
        return self._ssl

    def idle(self, key: tuple[str, str, int]) -> Connection | None:
        """A kept-alive connection to ``key`` that is still open and fresh, or None.

        One the server has closed (its EOF or reset already seen, the transport closing)
        or has likely closed (idle longer than the server keeps it) is dropped instead."""
        conns = self._idle.get(key)
        now = self._clock()
        while conns:
            conn = conns.pop()
            transport = conn.transport
            gone = conn.closed or transport is None or transport.is_closing()
            if not gone and now < conn.idle_until:
                conn.reused = True
                return conn
            conn.close()
        self._idle.pop(key, None)  # no empty list kept for every origin ever met
        return None

    async def connect(
        self,
        key: tuple[str, str, int],
        address: Callable[[], Awaitable[str]],
        *,
        timeout: float,
        max_head: int,
    ) -> Connection:
        """A new connection to ``key`` (scheme, host, port) at the IP ``address()`` gives.
        ``address`` runs once a slot is free, so the address checked is the one used."""
        if self.closed:
            raise ConnectFault("refused", "the fetcher is closed")
        await self._slot()
        conn = Connection(self, key, max_head)
        self._open.add(conn)
        try:
            ip = await address()
            scheme, host, port = key
            loop = asyncio.get_running_loop()
            try:
                async with asyncio.timeout(timeout):
                    if scheme == "https":
                        await loop.create_connection(
                            lambda: conn, ip, port, ssl=self._context(), server_hostname=host
                        )
                    else:
                        await loop.create_connection(lambda: conn, ip, port)
            except TimeoutError:
                raise ConnectFault("timeout", f"no connection within {timeout:g} s") from None
            except OSError as exc:  # refused, unreachable, TLS (ssl.SSLError is an OSError)
                raise ConnectFault("refused", f"{type(exc).__name__}: {exc}") from None
        except BaseException:
            conn.close()
            raise
        return conn

    async def _slot(self) -> None:
        while len(self._open) >= self.limit:
            # Make room by closing an idle connection to any origin; else wait for one.
            for conns in self._idle.values():
                if conns:
                    conns.pop(0).close()
                    break
            else:
                waiter = asyncio.get_running_loop().create_future()
                self._slots.append(waiter)
                try:
                    await waiter
                finally:
                    if waiter in self._slots:
                        self._slots.remove(waiter)

    def release(self, conn: Connection) -> None:
        """Hand ``conn`` back: kept for the next request to its origin if it can be."""
        conn._busy = False
        if conn.reusable and not self.closed:
            keep = _KEEP_IDLE
            said = conn._head.keep_alive_timeout() if conn._head is not None else None
            if said is not None:
                keep = min(said - _KEEP_MARGIN, _KEEP_MOST)
            if keep <= 0:  # the server keeps it no longer than a request takes to arrive
                conn.close()
                return
            conn.idle_until = self._clock() + keep
            self._idle.setdefault(conn.key, []).append(conn)
            self._wake_one()  # a connection waiting for a slot may close this one for room
        else:
            conn.close()

    def _forget(self, conn: Connection) -> None:
        if conn in self._open:
            self._open.discard(conn)
            conns = self._idle.get(conn.key)
            if conns and conn in conns:
                conns.remove(conn)
                if not conns:
                    del self._idle[conn.key]
            self._wake_one()

    def _wake_one(self) -> None:
        while self._slots:
            waiter = self._slots.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def close(self) -> None:
        self.closed = True
        for conn in list(self._open):
            conn.close()
        await asyncio.sleep(0)  # let the transports run their close callbacks
