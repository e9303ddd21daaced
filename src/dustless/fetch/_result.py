"""The values a fetch takes and gives: its limits and its result (docs/internals.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from dustless import DEFAULT_USER_AGENT
from dustless.errors import InvalidOption
from dustless.states import NetState

__all__ = ["DEFAULT_USER_AGENT", "BodySink", "FetchLimits", "FetchResult", "first_header"]


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """Size and time limits of one fetch. Defaults are seed 004's (§3): 2 MiB, 5 s stall."""

    max_bytes: int = 2 * 1024 * 1024  # decoded body; also caps the bytes read off the wire
    stall_timeout: float = 5.0  # 004 §3: "5초 이상 자료의 전송이 없으면 … 포기"
    connect_timeout: float = 10.0
    total_timeout: float = 30.0
    # Decompression bomb guard: decoded/encoded ratio beyond this (once past a small floor,
    # so a tiny response of repeated bytes is fine) ends the fetch as tooBig.
    max_decompressed_ratio: float = 100.0
    user_agent: str = DEFAULT_USER_AGENT
    max_header_bytes: int = 64 * 1024  # a head bigger than this is hErr
    # Keep the body as sent (content-coded, de-chunked) beside the decoded one, for a WARC
    # record of the bytes received (``--warc-bodies as-sent``); bounded by ``max_bytes``.
    keep_wire_body: bool = False

    def __post_init__(self) -> None:
        if self.max_bytes < 0:
            raise InvalidOption(f"max_bytes must be >= 0, not {self.max_bytes}")
        for name in ("stall_timeout", "connect_timeout", "total_timeout"):
            if not getattr(self, name) > 0:
                raise InvalidOption(f"{name} must be > 0, not {getattr(self, name)}")
        if not self.max_decompressed_ratio >= 1:
            raise InvalidOption("max_decompressed_ratio must be >= 1")
        if not self.user_agent or any(c in self.user_agent for c in "\r\n"):
            raise InvalidOption("user_agent must be one non-empty line")


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What one fetch produced. Every remote fault is a state here, never an exception."""

    url: str
    state: NetState
    status: int | None = None
    headers: tuple[tuple[str, str], ...] = ()  # response headers, in order, as received
    body: bytes = b""  # decoded (decompressed) payload; partial for tooBig/dTim/dErr
    mime: str | None = None  # lower-cased media type without parameters
    location: str | None = None  # absolute redirect target of a 3xx; never followed
    ip: str | None = None
    started: float = 0.0  # wall-clock seconds since the epoch (WARC-Date)
    elapsed: float = 0.0  # seconds, monotonic
    error: str | None = None  # one line: what went wrong, for logs and the crawl DB
    raw_request: bytes = b""  # request line + headers as sent, for the WARC request record
    raw_response_head: bytes = b""  # status line + headers, for the WARC response record
    wire_bytes: int = 0  # body bytes read off the connection (before decoding)
    # The body as sent (content-coded; de-chunked), when ``keep_wire_body`` asked for it and
    # a Content-Encoding made it differ from ``body``; ``None``: it is ``body`` itself.
    wire_body: bytes | None = None

    @classmethod
    def unfetched(
        cls, url: str, state: NetState, *, error: str | None = None, started: float = 0.0
    ) -> FetchResult:
        """A result for a URL a gate stopped before any request (robots, filtered, noIP)."""
        return cls(url=url, state=state, error=error, started=started)

    @property
    def ok(self) -> bool:
        return self.state is NetState.OK

    @property
    def truncated(self) -> bool:
        """The body is incomplete (WARC-Truncated: length / time / disconnect)."""
        return self.state in (NetState.tooBig, NetState.dTim, NetState.dErr)

    @property
    def sent_body(self) -> bytes:
        """The payload as the server sent it: ``wire_body``, or ``body`` when not encoded
        (the same object: an uncompressed body is never held twice)."""
        return self.body if self.wire_body is None else self.wire_body

    def header(self, name: str) -> str | None:
        """The first response header called ``name`` (case-insensitive), or ``None``."""
        return first_header(self.headers, name)


def first_header(headers: Iterable[tuple[str, str]], name: str) -> str | None:
    """The value of the first of ``headers`` called ``name`` (case-insensitive), or ``None``."""
    lowered = name.lower()
    size = len(lowered)
    # Only a name of the same length can match: most fields are passed over without
    # lower-casing them (a page's head is walked ~6 times, for as many fields).
    for key, value in headers:
        if len(key) == size and key.lower() == lowered:
            return value
    return None


class BodySink(Protocol):
    """Takes a response body as it arrives, so the result never holds it (a sitemap of
    50 MB is parsed in pieces, not buffered). ``wants(status)`` is asked once the head is in:
    ``False`` keeps the body in the result as usual (a redirect, a 404). ``feed`` gets the
    decoded bytes (after any ``Content-Encoding``) and returns ``True`` to stop reading: the
    fetch then ends with the state it had, and the rest is never downloaded."""

    def wants(self, status: int) -> bool: ...

    def feed(self, chunk: bytes) -> bool: ...
