"""The fetcher: one GET, its network state, never an exception for what the remote does.

Built on aiohttp (ARCHITECTURE: streaming bodies so size and time limits hold). The session
gets a resolver that answers from our DNS cache and re-checks the address policy, so the
connection goes to the address we checked while the URL's host still names the Host header
and the TLS SNI. Redirects are not followed: the crawl engine sends the absolute ``location``
through the normalizer and URL-seen like any other link.

States (seed 004 Fig. 3, ``dustless/states.py``) are assigned where aiohttp tells us how far the
exchange got: its connector errors are the connect stage; an error before the response head
is the header stage; an error while streaming is the document stage.
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from urllib.parse import urljoin

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.client_reqrep import ClientRequest
from aiohttp.connector import Connection
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.tracing import Trace
from multidict import CIMultiDict
from yarl import URL

from dustless.errors import FetchError, InvalidURL
from dustless.fetch._address import AddressPolicy
from dustless.fetch._decode import ACCEPT_ENCODING, DecodeError, Decoder, TooBig, make_decoder
from dustless.fetch._dns import Resolver
from dustless.fetch._result import BodySink, FetchLimits, FetchResult
from dustless.fetch._robots_fetch import RobotsFetch, fetch_robots
from dustless.states import NetState, Stage, advance
from dustless.url import resolve

__all__ = ["Fetcher", "make_session"]

_S = NetState
# Below this many decoded bytes the ratio guard stays quiet: a small page of repeated markup
# may compress 200:1 and is harmless; the guard is for streams that keep expanding.
_RATIO_FLOOR = 64 * 1024
_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"
# The fetch in flight in this task, for ``_Connector`` to mark. A context variable instead of
# an aiohttp TraceConfig: a trace config makes aiohttp build a Trace and a params object and
# send a signal at each of ~10 points of every request, whether or not a callback listens —
# measured ~40 µs CPU of the ~200 µs per request (crawl_peers clean profile).
_IN_FLIGHT: contextvars.ContextVar[_Progress | None] = contextvars.ContextVar(
    "dustless_fetch_in_flight", default=None
)


# What the network and a remote peer can make aiohttp raise. Anything else — a TypeError, an
# illegal state transition — is a bug of ours: it propagates, and the engine records it as
# ``iErr`` instead of blaming the server with ``hErr`` (which backs off and blocks hosts).
_REMOTE_FAULTS = (
    aiohttp.ClientError,
    HttpProcessingError,
    OSError,
    TimeoutError,
    ValueError,
    EOFError,
)


class _NoAddress(OSError):
    """Raised inside aiohttp's connector when our resolver has no address (→ noIP)."""


class _AddressRefused(OSError):
    """Raised inside aiohttp's connector when the address policy refuses (→ filtered)."""


class _PinnedResolver(AbstractResolver):
    """aiohttp resolver fed by our ``Resolver``; the policy is checked on the address used."""

    def __init__(self, resolver: Resolver, policy: AddressPolicy) -> None:
        self._resolver = resolver
        self._policy = policy

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            ip = await self._resolver.resolve(host)
        except FetchError as exc:
            raise _NoAddress(str(exc)) from None
        refusal = self._policy.refusal(ip, host)
        if refusal is not None:
            # Defence in depth: Fetcher checked already, but a cache entry may have been
            # renewed (DNS rebinding) between that check and this connection.
            raise _AddressRefused(refusal)
        ip_family = socket.AF_INET6 if ":" in ip else socket.AF_INET
        return [
            ResolveResult(
                hostname=host,
                host=ip,
                port=port,
                family=ip_family,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


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
        "error",
        "headers",
        "ip",
        "location",
        "mime",
        "raw_head",
        "raw_request",
        "request_parts",
        "resolving",
        "state",
        "status",
        "traced",
        "url",
        "wire",
    )

    def __init__(self, url: str) -> None:
        self.url = url
        self.state = _S.NULL
        self.ip: str | None = None
        self.status: int | None = None
        self.headers: tuple[tuple[str, str], ...] = ()
        self.mime: str | None = None
        self.location: str | None = None
        self.raw_request = b""
        # What the request record is built from if no response head tells what was sent.
        self.request_parts: tuple[URL, Mapping[str, str]] | None = None
        self.raw_head = b""
        self.body = bytearray()
        self.wire = 0
        self.error: str | None = None
        self.connected = False  # the connector reported a connection (``_Connector``)
        self.traced = False  # our connector saw this request (so `connected` is reliable)
        self.resolving = False

    def move(self, state: NetState, error: str | None = None) -> None:
        if self.state is _S.NULL and state.stage in (Stage.HEADER, Stage.DOCUMENT):
            self.state = advance(self.state, _S.Conn)  # a header-stage event implies Conn
        self.state = advance(self.state, state)
        if error is not None:
            self.error = error

    def result(self, started: float, elapsed: float) -> FetchResult:
        if not self.raw_request and self.request_parts is not None:
            # No response head (a fault before it): the request as we handed it to aiohttp,
            # which sends exactly these lines (test_raw_request_is_what_the_server_received).
            self.raw_request = _request_bytes("GET", *self.request_parts)
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
        )


def _request_bytes(method: str, url: URL, headers: Mapping[str, str]) -> bytes:
    target = url.raw_path_qs or "/"
    lines = [f"{method} {target} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "replace")


class _Connector(aiohttp.TCPConnector):
    """Marks the fetch in flight (``_IN_FLIGHT``) as traced, then connected.

    Needed where the total timeout strikes: before a connection it is a connect timeout
    (cTim), after it a header timeout (hTim). Covers new and pooled connections alike.
    """

    async def connect(
        self, req: ClientRequest, traces: list[Trace], timeout: aiohttp.ClientTimeout
    ) -> Connection:
        progress = _IN_FLIGHT.get()
        if progress is not None:
            progress.traced = True
        connection = await super().connect(req, traces, timeout)
        if progress is not None:
            progress.connected = True
        return connection


def make_session(
    resolver: Resolver,
    address_policy: AddressPolicy,
    *,
    max_connections: int = 100,
    verify_tls: bool | ssl.SSLContext = True,
) -> aiohttp.ClientSession:
    """The aiohttp session a ``Fetcher`` uses; call inside a running event loop.

    ``verify_tls``: ``True`` checks certificates against the system store, ``False`` accepts
    any (a broken certificate then costs nothing), or an ``SSLContext`` of your own.
    """
    connector = _Connector(
        resolver=_PinnedResolver(resolver, address_policy),
        use_dns_cache=False,  # ours is the cache; aiohttp's would bypass the policy check
        limit=max_connections,
        ssl=verify_tls,
    )
    session = aiohttp.ClientSession(
        connector=connector,
        cookie_jar=aiohttp.DummyCookieJar(),  # no state carried between fetches
        auto_decompress=False,  # we decode, with the bomb guard
        skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding"),
    )
    _disable_silent_retry(session)
    return session


def _disable_silent_retry(session: aiohttp.ClientSession) -> None:
    """Stop aiohttp re-sending a GET at once when a kept-alive connection is reset.

    RFC 9112 §9.3.1 allows a client to retry an idempotent request automatically, and aiohttp
    does so without a delay; for a crawler that is a second request to the host behind the
    politeness clock (004 §2), and a server that reset us mid-answer has often already done
    the work. The failed fetch is recorded with its state instead, and the frontier backs off.
    aiohttp (3.10+) has no public switch, only this attribute; if a release renames it,
    ``test_a_reset_connection_is_not_retried_behind_the_politeness_clock`` fails.
    """
    if hasattr(session, "_retry_connection"):
        session._retry_connection = False


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


def _location(raw_headers: tuple[tuple[bytes, bytes], ...]) -> str | None:
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
        session: aiohttp.ClientSession | None = None,
        *,
        max_connections: int = 100,
        verify_tls: bool | ssl.SSLContext = True,
        wall_clock: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.resolver = resolver
        self.limits = limits
        # Names the user mapped with --resolve are vouched for: the user chose their addresses.
        self.address_policy = address_policy.trusting(hosts=resolver.override_names)
        self._session = session
        self._owns_session = session is None
        self._max_connections = max_connections
        self._verify_tls = verify_tls
        self._wall_clock = wall_clock
        self._clock = clock
        # Per-limits constants, built once instead of per request (~3 µs each, measured).
        self._headers: dict[tuple[str, tuple[tuple[str, str], ...]], CIMultiDict[str]] = {}
        self._timeouts: dict[tuple[float, float], aiohttp.ClientTimeout] = {}

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = make_session(
                self.resolver,
                self.address_policy,
                max_connections=self._max_connections,
                verify_tls=self._verify_tls,
            )
        return self._session

    async def close(self) -> None:
        if self._owns_session and self._session is not None:
            session, self._session = self._session, None
            await session.close()

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
            elif progress.traced and not progress.connected:
                progress.move(_S.cTim, error)
            else:
                progress.move(_S.hTim, error)
        elif state is _S.Conn:
            progress.move(_S.hTim, error)
        elif state in (_S.OK, _S.code):
            progress.move(_S.dTim, error)

    def _request_headers(self, extra: Mapping[str, str], limits: FetchLimits) -> CIMultiDict[str]:
        """Our headers with the caller's; the same (unmodified) object for the same inputs."""
        key = (limits.user_agent, tuple(extra.items()))
        headers = self._headers.get(key)
        if headers is None:
            headers = CIMultiDict(
                {
                    "User-Agent": limits.user_agent,
                    "Accept": _ACCEPT,
                    "Accept-Encoding": ACCEPT_ENCODING,
                }
            )
            for name, value in extra.items():
                headers[name] = value  # the caller's value replaces ours (case-insensitively)
            if not extra:  # conditional headers differ per URL: only the plain set is kept
                self._headers[key] = headers
        return headers

    def _timeout(self, limits: FetchLimits) -> aiohttp.ClientTimeout:
        key = (limits.connect_timeout, limits.stall_timeout)
        timeout = self._timeouts.get(key)
        if timeout is None:
            timeout = self._timeouts[key] = aiohttp.ClientTimeout(
                total=None, sock_connect=limits.connect_timeout, sock_read=limits.stall_timeout
            )
        return timeout

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
            ip = await self.resolver.resolve(host)
        except FetchError as exc:
            progress.move(_S.noIP, str(exc))
            return
        finally:
            progress.resolving = False
        progress.ip = ip
        refusal = self.address_policy.refusal(ip, host)
        if refusal is not None:
            progress.move(_S.filtered, refusal)
            return
        headers = self._request_headers(extra, limits)
        # The request record is built once: from the response's request_info (the headers
        # aiohttp sent) in _head, or from these parts if no response comes (Progress.result).
        shown_host = f"[{host}]" if ":" in host else host
        if not target.is_default_port():
            shown_host = f"{shown_host}:{target.port}"
        progress.request_parts = (target, {"Host": shown_host, **headers})
        session = self._get_session()
        timeout = self._timeout(limits)
        in_body = False
        token = _IN_FLIGHT.set(progress)
        try:
            async with session.get(
                target,
                headers=headers,
                allow_redirects=False,
                timeout=timeout,
                auto_decompress=False,
                max_line_size=limits.max_header_bytes,
                max_field_size=limits.max_header_bytes,
            ) as response:
                self._head(progress, response)
                in_body = True
                if sink is None or not sink.wants(response.status):
                    sink = _Keep(progress.body)
                await self._body(progress, response, limits, keep_prefix, sink)
        except _REMOTE_FAULTS as exc:  # the I/O edge: every remote fault becomes a state
            self._classify(progress, exc, in_body)
        finally:
            _IN_FLIGHT.reset(token)

    def _head(self, progress: _Progress, response: aiohttp.ClientResponse) -> None:
        progress.status = status = response.status
        sent = response.request_info  # its headers are the request's, as aiohttp sent them
        progress.raw_request = _request_bytes(sent.method, sent.url, sent.headers)
        raw = response.raw_headers
        progress.headers = tuple(
            [(name.decode("latin-1"), value.decode("utf-8", "replace")) for name, value in raw]
        )
        version = response.version
        reason = f" {response.reason}" if response.reason else ""
        head = [
            f"HTTP/{version.major}.{version.minor} {status}{reason}".encode("latin-1", "replace")
            if version
            else b""
        ]
        head.extend(name + b": " + value for name, value in raw)
        progress.raw_head = b"\r\n".join(head) + b"\r\n\r\n"
        content_type = response.headers.get("Content-Type", "")
        progress.mime = content_type.split(";", 1)[0].strip().lower() or None
        if 300 <= status < 400:
            location = _location(raw)
            if location:
                progress.location = _absolute(response.url, location)
        # 004 Fig. 3: OK is 200 with text/html; anything else records the server's code.
        progress.move(_S.OK if status == 200 and progress.mime == "text/html" else _S.code)

    async def _body(
        self,
        progress: _Progress,
        response: aiohttp.ClientResponse,
        limits: FetchLimits,
        keep_prefix: bool,
        sink: BodySink,
    ) -> None:
        """Read the body into ``sink`` under the limits (declared length, bytes on the wire,
        decompression ratio, decoded size), counted on the decoded bytes handed on."""
        max_bytes = limits.max_bytes
        declared = response.content_length
        if declared is not None and declared > max_bytes and not keep_prefix:
            progress.move(
                _S.tooBig, f"Content-Length {declared} exceeds the limit of {max_bytes} bytes"
            )
            return
        try:
            decoder: Decoder = make_decoder(response.headers.get("Content-Encoding"))
        except DecodeError as exc:
            progress.move(_S.dErr, str(exc))
            return
        decoded = 0
        try:
            while True:
                chunk = await response.content.readany()
                if not chunk:
                    rest = decoder.flush(max_bytes - decoded)
                    if rest:
                        sink.feed(rest)
                    return
                progress.wire += len(chunk)
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

    def _classify(self, progress: _Progress, exc: BaseException, in_body: bool) -> None:
        if progress.state.final and progress.state not in (_S.OK, _S.code):
            return  # already ended (tooBig …); a late error while releasing changes nothing
        message = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:500]
        if in_body:
            if isinstance(exc, aiohttp.ServerTimeoutError):
                progress.move(_S.dTim, f"no data for {self.limits.stall_timeout:g} s: {message}")
            else:
                progress.move(_S.dErr, message)
            return
        if isinstance(exc, aiohttp.ClientConnectorError):
            cause = exc.os_error
            if isinstance(cause, _NoAddress):
                progress.move(_S.noIP, str(cause))
            elif isinstance(cause, _AddressRefused):
                progress.move(_S.filtered, str(cause))
            else:
                progress.move(_S.cErr, message)
        elif isinstance(exc, aiohttp.ConnectionTimeoutError):
            progress.move(_S.cTim, message)
        elif isinstance(exc, aiohttp.ServerTimeoutError):
            progress.move(_S.hTim, message)
        elif isinstance(exc, aiohttp.ServerDisconnectedError):
            # The server closed before a complete head: nothing, or a head cut short.
            progress.move(_S.hSht, message)
        elif isinstance(exc, aiohttp.ClientResponseError | HttpProcessingError):
            progress.move(_S.hNpr if _not_http(str(exc)) else _S.hErr, message)
        elif isinstance(exc, aiohttp.InvalidURL | ValueError) and not progress.connected:
            progress.move(_S.filtered, message)
        else:
            progress.move(_S.hErr, message)


def _not_http(message: str) -> bool:
    # llhttp: "Bad status line: Expected HTTP/, RTSP/ or ICE/"; the pure-Python parser:
    # "Bad status line 'SSH-2.0-…'". A status line that names HTTP/ is HTTP, merely broken.
    if "Expected HTTP/" in message:
        return True
    return "status line" in message.lower() and "HTTP/" not in message
