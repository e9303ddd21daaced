"""The fetcher: one GET, its network state, never an exception for what the remote does.

HTTP/1.1 over our own kept-alive connections (``_http``: llhttp through httptools, asyncio
sockets and TLS). Before a connection, the URL's host is resolved through our DNS cache and
the address policy checks the address; the connection goes to that address while the URL's
host names the Host header and the TLS SNI. Redirects are not followed: the crawl engine sends
the absolute ``location`` through the normalizer and URL-seen like any other link.

States (seed 004 Fig. 3, ``dustless/states.py``) come from the stage a fault struck
(``_http.HttpFault.stage``): connect, head (before a complete response head) or body.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from collections.abc import Callable, Mapping
from urllib.parse import urljoin

from yarl import URL

from dustless.errors import FetchError, InvalidURL
from dustless.fetch._address import AddressPolicy
from dustless.fetch._decode import (
    ACCEPT_ENCODING,
    DecodeError,
    Decoder,
    TooBig,
    is_identity,
    make_decoder,
)
from dustless.fetch._dns import Resolver
from dustless.fetch._http import ConnectFault, Connection, HttpFault, HttpPool, Response
from dustless.fetch._result import BodySink, FetchLimits, FetchResult, first_header
from dustless.fetch._robots_fetch import RobotsFetch, fetch_robots
from dustless.states import NetState, Stage, advance
from dustless.url import resolve

__all__ = ["Fetcher"]

_S = NetState
# Below this many decoded bytes the ratio guard stays quiet: a small page of repeated markup
# may compress 200:1 and is harmless; the guard is for streams that keep expanding.
_RATIO_FLOOR = 64 * 1024
_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"


class _Keep:
    """The sink of an ordinary fetch: the body is kept whole in the result."""

    __slots__ = ("body",)

    def __init__(self, body: bytearray) -> None:
        self.body = body

    def wants(self, status: int) -> bool:
        return True

    def feed(self, chunk: bytes) -> bool:
        self.body += chunk
        return False


class _Progress:
    """One fetch in flight: the state so far and what has been learnt; becomes a FetchResult."""

    __slots__ = (
        "body",
        "connected",
        "connecting",
        "error",
        "headers",
        "ip",
        "location",
        "mime",
        "raw_head",
        "raw_request",
        "resolving",
        "state",
        "status",
        "url",
        "wire",
        "wire_body",
    )

    def __init__(self, url: str) -> None:
        self.url = url
        self.state = _S.NULL
        self.ip: str | None = None
        self.status: int | None = None
        self.headers: tuple[tuple[str, str], ...] = ()
        self.mime: str | None = None
        self.location: str | None = None
        self.raw_request = b""  # the bytes written, once they are (the WARC request record)
        self.raw_head = b""
        self.body = bytearray()
        self.wire = 0
        self.wire_body: bytearray | None = None  # the encoded body as sent, when kept
        self.error: str | None = None
        self.connecting = False  # a new connection is being opened (a timeout then is cTim)
        self.connected = False  # a connection is there (a timeout then is hTim)
        self.resolving = False

    def move(self, state: NetState, error: str | None = None) -> None:
        if self.state is _S.NULL and state.stage in (Stage.HEADER, Stage.DOCUMENT):
            self.state = advance(self.state, _S.Conn)  # a header-stage event implies Conn
        self.state = advance(self.state, state)
        if error is not None:
            self.error = error

    def result(self, started: float, elapsed: float) -> FetchResult:
        return FetchResult(
            url=self.url,
            state=self.state,
            status=self.status,
            headers=self.headers,
            body=bytes(self.body),
            mime=self.mime,
            location=self.location,
            ip=self.ip,
            started=started,
            elapsed=elapsed,
            error=self.error,
            raw_request=self.raw_request,
            raw_response_head=self.raw_head,
            wire_bytes=self.wire,
            wire_body=None if self.wire_body is None else bytes(self.wire_body),
        )


def _request_bytes(url: str, target: URL, host: str, headers: Mapping[str, str]) -> bytes:
    """The request as it goes on the wire (RFC 9112 §3): the URL's spelling exactly."""
    path_qs = target.raw_path_qs or "/"
    if not target.raw_query_string and url.partition("#")[0].endswith("?"):
        path_qs += "?"  # an empty query keeps its "?" (RFC 3986 §6.2.3): yarl drops it
    lines = [f"GET {path_qs} HTTP/1.1", f"Host: {host}"]
    lines.extend(f"{k}: {v}" for k, v in headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "replace")


def _target(url: str) -> URL | None:
    """The URL to request, or ``None`` when it is not a usable http(s) URL."""
    if "\r" in url or "\n" in url or "\0" in url:
        return None  # would split the request line: never send it
    try:
        # Send exactly the spelling we were given (its rfc3986 form): yarl must not requote
        # it. Only a URL that is not already encoded goes through yarl's quoting.
        exact = url.isascii() and " " not in url
        parsed = URL(url, encoded=True) if exact else URL(url)
        # yarl parses lazily: touch every part we use, so a bad port or host fails here.
        port = parsed.port
        usable = (
            parsed.scheme in ("http", "https")
            and bool(parsed.raw_host)
            and port is not None
            and 0 < port < 65536
            and isinstance(parsed.raw_path_qs, str)
        )
    except (ValueError, TypeError, UnicodeError):
        return None
    return parsed if usable else None


def _location(raw_headers: list[tuple[bytes, bytes]]) -> str | None:
    """The first ``Location`` header's value, its bytes above 0x7F written ``%XX``.

    RFC 9110 §5.5 makes a field value octets; a server that puts raw non-ASCII bytes in a
    Location (Latin-1, EUC-KR, …) means those bytes, and browsers request them escaped one
    by one (Chromium's redirect handling "escapes any non-ASCII characters to preserve
    them"): ``/caf\xe9/`` is ``/caf%E9/``. Decoding them as text first would lose them —
    yarl dropped every byte that was not UTF-8 (``/caf\xe9/\xff\xfe?x=\xc7\xd1`` became
    ``/caf/?x=``) and fetched another URL."""
    for name, value in raw_headers:
        if name.lower() == b"location":
            return "".join(chr(b) if b < 0x80 else f"%{b:02X}" for b in value).strip()
    return None


def _absolute(base: URL, location: str) -> str:
    """``location`` resolved against the URL that answered, as a browser resolves a link
    (WHATWG URL, in its rfc3986 form: what the crawler fetches)."""
    try:
        return resolve(str(base), location)
    except InvalidURL:
        return urljoin(str(base), location)  # recorded as the server wrote it


class Fetcher:
    """GET one URL under limits; every remote fault comes back as a state, never raised."""

    def __init__(
        self,
        resolver: Resolver,
        limits: FetchLimits,
        address_policy: AddressPolicy,
        pool: HttpPool | None = None,
        *,
        max_connections: int = 100,
        verify_tls: bool | ssl.SSLContext = True,
        wall_clock: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``pool``: connections of the caller's, used and left open (else the fetcher
        makes its own of ``max_connections`` and ``verify_tls``, closed by ``close``).
        ``verify_tls``: ``True`` checks certificates against the system store, ``False``
        accepts any (a broken certificate then costs nothing), or an ``SSLContext``."""
        self.resolver = resolver
        self.limits = limits
        # Names the user mapped with --resolve are vouched for: the user chose their addresses.
        self.address_policy = address_policy.trusting(hosts=resolver.override_names)
        self._owns_pool = pool is None
        self._pool = pool or HttpPool(limit=max_connections, verify_tls=verify_tls)
        self._wall_clock = wall_clock
        self._clock = clock
        # The plain request headers per user agent, built once instead of per request.
        self._headers: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, str]] = {}

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._pool.closed

    async def close(self) -> None:
        if self._owns_pool and not self._pool.closed:
            await self._pool.close()

    async def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> FetchResult:
        """GET ``url``; ``headers`` add to or replace ours (If-None-Match, If-Modified-Since…)."""
        return await self.fetch_with(url, headers, self.limits)

    async def fetch_robots(self, url: str) -> RobotsFetch:
        """Fetch the robots.txt governing ``url`` under RFC 9309's rules (see ``RobotsFetch``)."""
        return await fetch_robots(self, url)

    async def fetch_with(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        limits: FetchLimits,
        *,
        keep_prefix: bool = False,
        sink: BodySink | None = None,
    ) -> FetchResult:
        """``fetch`` with other limits; ``keep_prefix`` reads the first ``max_bytes`` of a
        body that announces more instead of refusing it (robots.txt, RFC 9309 §2.5);
        ``sink`` takes the body as it streams in, when it wants it (sitemaps and feeds)."""
        started = self._wall_clock()
        begun = self._clock()
        progress = _Progress(url)
        target = _target(url)
        if target is None:
            progress.move(_S.filtered, "not an http(s) URL with a host")
            return progress.result(started, 0.0)
        try:
            async with asyncio.timeout(limits.total_timeout):
                await self._exchange(progress, target, headers or {}, limits, keep_prefix, sink)
        except TimeoutError:
            self._total_timeout(progress, limits)
        return progress.result(started, self._clock() - begun)

    def _total_timeout(self, progress: _Progress, limits: FetchLimits) -> None:
        error = f"no complete response within {limits.total_timeout:g} s"
        state = progress.state
        if state is _S.NULL:
            if progress.resolving:
                progress.move(
                    _S.noIP, f"DNS lookup did not finish within {limits.total_timeout:g} s"
                )
            elif progress.connecting and not progress.connected:
                progress.move(_S.cTim, error)
            else:
                progress.move(_S.hTim, error)
        elif state is _S.Conn:
            progress.move(_S.hTim, error)
        elif state in (_S.OK, _S.code):
            progress.move(_S.dTim, error)

    def _request_headers(self, extra: Mapping[str, str], limits: FetchLimits) -> dict[str, str]:
        """Our headers with the caller's (whose value replaces ours, case-insensitively)."""
        key = (limits.user_agent, tuple(extra.items()))
        headers = self._headers.get(key)
        if headers is None:
            headers = {
                "User-Agent": limits.user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
            }
            for name, value in extra.items():
                # A value from a server (a validator) must not split the request's lines.
                value = value.replace("\r", " ").replace("\n", " ")
                low = name.lower()
                # A caller's value takes our field's place, under the caller's spelling.
                headers = {(name if k.lower() == low else k): v for k, v in headers.items()}
                headers[name] = value
            if not extra:  # conditional headers differ per URL: only the plain set is kept
                self._headers[key] = headers
        return headers

    async def _address(self, host: str, progress: _Progress | None = None) -> str:
        """The address to use for ``host``: resolved, and allowed by the address policy
        (``progress`` records it, refused or not)."""
        try:
            ip = await self.resolver.resolve(host)
        except FetchError as exc:
            raise ConnectFault("no-address", str(exc)) from None
        if progress is not None:
            progress.ip = ip
        refusal = self.address_policy.refusal(ip, host)
        if refusal is not None:
            raise ConnectFault("address-refused", refusal)
        return ip

    async def _exchange(
        self,
        progress: _Progress,
        target: URL,
        extra: Mapping[str, str],
        limits: FetchLimits,
        keep_prefix: bool,
        sink: BodySink | None = None,
    ) -> None:
        host = target.raw_host or ""
        progress.resolving = True
        try:
            await self._address(host, progress)
        except ConnectFault as exc:  # no address (noIP), or one the policy refuses (filtered)
            self._classify(progress, exc, False)
            return
        finally:
            progress.resolving = False
        shown_host = f"[{host}]" if ":" in host else host
        port = target.port or 0
        if not target.is_default_port():
            shown_host = f"{shown_host}:{port}"
        request = _request_bytes(
            progress.url, target, shown_host, self._request_headers(extra, limits)
        )
        progress.raw_request = request
        key = (target.scheme, host, port)
        pool = self._pool
        conn: Connection | None = pool.idle(key)
        in_body = False
        try:
            if conn is None:
                conn = await self._connect(progress, key, host, limits)
            progress.connected = True
            try:
                response = await conn.send(request, limits.stall_timeout)
            except HttpFault as exc:
                if not (conn.reused and conn.unanswered(exc)):
                    raise
                # RFC 9112 §9.3.1: a request on a kept-alive connection that the server
                # closed without a byte of answer (its idle timeout met our politeness rest)
                # never reached the application; a GET may be sent again, once, on a new
                # connection. Recording it instead lost the page: the host backed off and
                # the URL was never asked again. A new connection's failure is the server's.
                pool.release(conn)
                conn = None
                conn = await self._connect(progress, key, host, limits)
                progress.connected = True
                response = await conn.send(request, limits.stall_timeout)
            self._head(progress, response, target)
            in_body = True
            if sink is None or not sink.wants(response.status):
                sink = _Keep(progress.body)
            await self._body(progress, conn, response, limits, keep_prefix, sink)
        except HttpFault as exc:  # the I/O edge: every remote fault becomes a state
            self._classify(progress, exc, in_body)
        finally:
            if conn is not None:
                pool.release(conn)

    async def _connect(
        self, progress: _Progress, key: tuple[str, str, int], host: str, limits: FetchLimits
    ) -> Connection:
        progress.connecting = True
        progress.connected = False
        # Defence in depth: a cache entry may have been renewed (DNS rebinding) since the
        # check before the request; the address connected to is checked again.
        return await self._pool.connect(
            key,
            functools.partial(self._address, host),
            timeout=limits.connect_timeout,
            max_head=limits.max_header_bytes,
        )

    def _head(self, progress: _Progress, response: Response, target: URL) -> None:
        progress.status = status = response.status
        raw = response.headers
        progress.headers = tuple(
            [(name.decode("latin-1"), value.decode("utf-8", "replace")) for name, value in raw]
        )
        progress.raw_head = response.raw_head()
        content_type = first_header(progress.headers, "content-type") or ""
        progress.mime = content_type.split(";", 1)[0].strip().lower() or None
        if 300 <= status < 400:
            location = _location(raw)
            if location:
                progress.location = _absolute(target, location)
        # 004 Fig. 3: OK is 200 with text/html; anything else records the server's code.
        progress.move(_S.OK if status == 200 and progress.mime == "text/html" else _S.code)

    async def _body(
        self,
        progress: _Progress,
        conn: Connection,
        response: Response,
        limits: FetchLimits,
        keep_prefix: bool,
        sink: BodySink,
    ) -> None:
        """Read the body into ``sink`` under the limits (declared length, bytes on the wire,
        decompression ratio, decoded size), counted on the decoded bytes handed on."""
        max_bytes = limits.max_bytes
        declared = _content_length(response.headers)
        if declared is not None and declared > max_bytes and not keep_prefix:
            progress.move(
                _S.tooBig, f"Content-Length {declared} exceeds the limit of {max_bytes} bytes"
            )
            return
        encoding = first_header(progress.headers, "content-encoding")
        try:
            decoder: Decoder = make_decoder(encoding)
        except DecodeError as exc:
            progress.move(_S.dErr, str(exc))
            return
        # The body as sent, for a WARC record of the bytes received (--warc-bodies as-sent):
        # kept only when it differs from the decoded one, and only for a body kept whole.
        wire_body = None
        if limits.keep_wire_body and isinstance(sink, _Keep) and not is_identity(decoder):
            wire_body = progress.wire_body = bytearray()
        decoded = 0
        stall = limits.stall_timeout
        try:
            while True:
                chunk = await conn.read(stall)
                if not chunk:
                    rest = decoder.flush(max_bytes - decoded)
                    if rest:
                        sink.feed(rest)
                    return
                progress.wire += len(chunk)
                if wire_body is not None:
                    room = max_bytes - len(wire_body)  # past the limit the fetch is tooBig
                    wire_body += chunk if len(chunk) <= room else chunk[: max(room, 0)]
                out = decoder.feed(chunk, max_bytes - decoded)
                decoded += len(out)
                if out and sink.feed(out):
                    return  # the sink has what it needs: the rest is never downloaded
                if progress.wire > max_bytes:
                    progress.move(_S.tooBig, f"more than {max_bytes} bytes on the wire")
                    return
                if (
                    decoded > _RATIO_FLOOR
                    and decoded > limits.max_decompressed_ratio * progress.wire
                ):
                    progress.move(
                        _S.tooBig,
                        f"decompression ratio above {limits.max_decompressed_ratio:g} "
                        f"({decoded} bytes from {progress.wire})",
                    )
                    return
        except TooBig as exc:
            if exc.partial and sink.feed(exc.partial):
                return  # what fitted was all the sink wanted: no limit was hit for it
            progress.move(_S.tooBig, f"body exceeds the limit of {max_bytes} bytes")
        except DecodeError as exc:
            progress.move(_S.dErr, str(exc))

    def _classify(self, progress: _Progress, exc: HttpFault, in_body: bool) -> None:
        if progress.state.final and progress.state not in (_S.OK, _S.code):
            return  # already ended (tooBig …); a late error while releasing changes nothing
        message = str(exc).replace("\n", " ")[:500]
        kind = exc.kind
        if in_body or exc.stage == "body":
            progress.move(_S.dTim if kind == "timeout" else _S.dErr, message)
        elif exc.stage == "connect":
            state = {
                "no-address": _S.noIP,
                "address-refused": _S.filtered,
                "timeout": _S.cTim,
            }.get(kind, _S.cErr)
            progress.move(state, message)
        elif kind == "timeout":
            progress.move(_S.hTim, message)
        elif kind == "closed":
            # The server closed before a complete head: nothing, or a head cut short.
            progress.move(_S.hSht, message)
        elif kind == "not-http":
            progress.move(_S.hNpr, message)
        else:  # malformed, reset
            progress.move(_S.hErr, message)


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The announced body length (RFC 9110 §8.6), when there is one valid value."""
    for name, value in headers:
        if name.lower() == b"content-length":
            v = value.strip()
            return int(v) if v.isdigit() else None
    return None
