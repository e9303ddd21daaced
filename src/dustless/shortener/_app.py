"""The HTTP service: a Starlette app, with the redirect path answered before routing.

Seed 003 ch. 8 (URL 리디렉션 상세 설계): the redirect is the hot path — 10 reads per write —
so ``GET /{code}`` is answered by a few lines of raw ASGI in front of Starlette: cache
lookup, store read on a miss, click counted in memory, 301/302 with ``Location``.
Everything else (the API, the page, the OpenAPI description) goes through Starlette
(``_api.py``).

What the hot path does *not* do: check API keys (a redirect needs none) or decide whether a
click is a bot's (the click recorder groups clicks by User-Agent family, which is what the
bot decision reads later). Only two kinds of request reach the database: a code not in the
cache, and a click on a link with a visit limit (which must be counted exactly, across
every process, before the redirect is sent).
"""

from __future__ import annotations

import contextlib
import html
import json
import time
from collections.abc import AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from dustless.errors import StoreError
from dustless.fetch import Resolver

from ._api import PAGE_HEADERS, Api
from ._cache import REVALIDATE, LinkCache
from ._clicks import ClickRecorder
from ._codes import ALPHABET
from ._config import ShortenerConfig
from ._open import open_store
from ._ratelimit import ClientResolver, RateLimiter
from ._store import Store
from ._validate import RESERVED_ALIASES, Blocklist, UrlChecker

__all__ = ["CSP", "ShortenerApp", "create_app"]

_CODE_CHARS = frozenset(ALPHABET + "_-")
CSP = PAGE_HEADERS["content-security-policy"]
_ENDED = {
    "expired": "This link has expired.",
    "visit-limit": "This link has been used as many times as its owner allowed.",
}


class ShortenerApp:
    """The ASGI application: fast redirects, then Starlette for the rest."""

    def __init__(self, config: ShortenerConfig, store: Store | None = None) -> None:
        self.config = config
        self._store = store  # given (tests, CLI) or opened in the lifespan from config.db
        self._owns_store = store is None
        self.cache = LinkCache(config.cache_size)
        self.limiter = RateLimiter(config.rate_limit, config.burst)
        self.public_limiter = RateLimiter(
            config.rate_limit * config.public_rate_factor, config.public_burst
        )
        self.miss_limiter = RateLimiter(config.miss_rate_limit, config.miss_burst)
        self.clients = ClientResolver(config.trusted_proxies)
        blocklist = Blocklist.from_file(config.blocklist) if config.blocklist else Blocklist()
        self.checker = UrlChecker(
            config.policy,
            (config.base_host, *config.own_hosts),
            blocklist,
            allow_private=config.allow_private_targets,
        )
        if config.resolve_targets:
            self.checker.guard.use_resolver(Resolver())
        self.clicks: ClickRecorder | None = None
        self.now: Callable[[], float] = time.time
        self.api = Api(self)
        self._app = Starlette(routes=self.api.routes(), lifespan=self._lifespan)

    @property
    def store(self) -> Store:
        if self._store is None:
            raise StoreError("the store is not open (the app's lifespan has not started)")
        return self._store

    @contextlib.asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        if self._store is None:
            self._store = await open_store(self.config.db, durable=self.config.durable)
        self.clicks = ClickRecorder(self._store, self.config.click_interval)
        self.clicks.start()
        try:
            yield
        finally:
            await self.clicks.stop()
            if self._owns_store:
                await self._store.close()
                self._store = None

    # -- the hot path ---------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            path: str = scope["path"]
            code = path[8:] if path.startswith("/api/v1/") else path[1:]
            if (
                code
                and "/" not in code
                and code not in RESERVED_ALIASES
                and _CODE_CHARS.issuperset(code)
            ):
                await self._redirect(scope, send, code, api=path.startswith("/api/"))
                return
        await self._app(scope, receive, send)

    def client_of(self, scope: Scope) -> str:
        peer = scope.get("client")
        return self.clients.resolve_raw(peer[0] if peer else None, scope["headers"])

    async def _redirect(self, scope: Scope, send: Send, code: str, api: bool) -> None:
        now = self.now()
        entry = self.cache.entry(code)
        if entry is None or now - entry[10] > REVALIDATE:
            if entry is None:
                # Only a code we do not hold costs a client lookup: a client that keeps
                # asking for codes that do not exist is answered 429 without a database read.
                client = self.client_of(scope)
                wait = self.miss_limiter.peek(client, now)
                if wait > 0:
                    await self.send_429(send, api, wait, "too many unknown codes")
                    return
            try:
                link = await self.store.get(code)
            except StoreError:
                await self._send_error(send, api, 503, "the store is unavailable", "store")
                return
            if link is None:
                self.cache.forget(code)
                wait = self.miss_limiter.take(self.client_of(scope), now)
                if wait > 0:
                    await self.send_429(send, api, wait, "too many unknown codes")
                else:
                    await self._send_error(send, api, 404, f"no link '{code}'", "not-found")
                return
            entry = self.cache.put(link, now)
        link_id, _, _, status, _, expires_at, _, location, _, max_visits, _, valid_since, _ = entry
        if valid_since is not None and now < valid_since:
            # Shlink answers a short URL before its validSince as one that does not exist
            # (404 "not found"), and so do we: counted as a miss like any unknown code.
            wait = self.miss_limiter.take(self.client_of(scope), now)
            if wait > 0:
                await self.send_429(send, api, wait, "too many unknown codes")
            else:
                await self._send_error(send, api, 404, f"no link '{code}'", "not-found")
            return
        if expires_at is not None and now >= expires_at:
            await self._send_error(send, api, 410, _ENDED["expired"], "expired")
            return
        if max_visits is not None:
            # A limited link: the visit is taken in the database first (exact under any
            # concurrency, on every instance), and never cached by the browser.
            try:
                counted = await self.store.take_visit(link_id)
            except StoreError:
                await self._send_error(send, api, 503, "the store is unavailable", "store")
                return
            if counted is None:
                await self._send_error(send, api, 410, _ENDED["visit-limit"], "visit-limit")
                return
            cache_control = b"private, no-store"
        elif status == 302:
            cache_control = b"private, no-store"  # every click must reach us to be counted
        else:
            # Browsers keep a 301 (seed 003: 브라우저가 응답을 캐시); never past the expiry.
            age = 86400 if expires_at is None else max(0, int(expires_at - now))
            cache_control = b"public, max-age=%d" % age
        if scope["method"] == "GET" and self.clicks is not None:
            referer = agent = b""
            for name, value in scope["headers"]:
                if name == b"referer":
                    referer = value
                elif name == b"user-agent":
                    agent = value
            self.clicks.record(link_id, now, referer.decode("latin-1"), agent.decode("latin-1"))
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"location", location),
                    (b"cache-control", cache_control),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def send_429(self, send: Send, api: bool, wait: float, what: str) -> None:
        retry = RateLimiter.retry_after(wait)
        await self._send_error(
            send,
            api,
            429,
            f"{what}; retry in {retry} s",
            "rate-limited",
            [(b"retry-after", retry.encode())],
        )

    async def _send_error(
        self,
        send: Send,
        api: bool,
        status: int,
        message: str,
        problem: str,
        extra: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        headers: list[tuple[bytes, bytes]]
        if api:
            body = json.dumps({"error": message, "problem": problem}).encode()
            headers = [(b"content-type", b"application/json")]
        else:
            body = error_page(status, message)
            headers = [(b"content-type", b"text/html; charset=utf-8")]
            headers += [(k.encode(), v.encode()) for k, v in PAGE_HEADERS.items()]
        headers += extra or []
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


_TITLES = {404: "Not found", 410: "Gone", 429: "Too many requests", 503: "Unavailable"}


def error_page(status: int, message: str) -> bytes:
    """The small HTML page of an error (404, 410 …); ``message`` is escaped, never markup."""
    title = _TITLES.get(status, str(status))
    return (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        f"<title>{status} {title}</title><link rel=stylesheet href=/static/style.css>"
        f"<main><h1>{status} {title}</h1><p>{html.escape(message)}</p>"
        "<p><a href=/>Shorten a URL</a></p></main>"
    ).encode()


def create_app(config: ShortenerConfig | None = None, store: Store | None = None) -> ShortenerApp:
    """The ASGI app for ``config`` (defaults throughout); ``store`` overrides ``config.db``."""
    return ShortenerApp(config or ShortenerConfig(), store)
