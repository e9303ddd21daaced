"""The HTTP service: a Starlette app, with the redirect path answered before routing.

Seed 003 ch. 8 (URL 리디렉션 상세 설계): the redirect is the hot path — 10 reads per write —
so ``GET /{code}`` is answered by a few lines of raw ASGI in front of Starlette: cache
lookup, store read on a miss, click counted in memory, 301/302 with ``Location``.
Everything else (the API, the page, the OpenAPI description) goes through Starlette.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import time
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from dustless.errors import StoreError

from .cache import LinkCache
from .clicks import ClickRecorder
from .codes import ALPHABET
from .config import ShortenerConfig
from .model import AliasTaken, Link, NewLink, Redirect
from .openapi import openapi_spec
from .ratelimit import ClientResolver, RateLimiter
from .store import Store, open_store
from .validate import (
    RESERVED_ALIASES,
    Blocklist,
    Rejected,
    UrlChecker,
    check_alias,
    parse_expiry,
)

__all__ = ["ShortenerApp", "create_app"]

_MAX_BODY = 16 * 1024
_CODE_CHARS = frozenset(ALPHABET + "_-")
# The page may load its own script and style and talk to its own API — nothing else. A
# stored URL can never become script: the page only ever sets it as textContent / href.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_PAGE_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}
_STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
# Kept here rather than in static/: the package data globs ship html, js and css only.
_FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    b'<rect width="16" height="16" rx="3" fill="#2a6"/>'
    b'<path d="M4 8h8M9 5l3 3-3 3" stroke="#fff" stroke-width="2" fill="none"/></svg>'
)


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat().replace("+00:00", "Z")


def _error(status: int, message: str, problem: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": message, "problem": problem}, status, headers=headers or None)


def _static(name: str) -> bytes:
    return resources.files("dustless.shortener").joinpath("static", name).read_bytes()


class ShortenerApp:
    """The ASGI application: fast redirects, then Starlette for the rest."""

    def __init__(self, config: ShortenerConfig, store: Store | None = None) -> None:
        self.config = config
        self._store = store  # given (tests, CLI) or opened in the lifespan from config.db
        self._owns_store = store is None
        self.cache = LinkCache(config.cache_size)
        self.limiter = RateLimiter(config.rate_limit, config.burst)
        self.clients = ClientResolver(config.trusted_proxies)
        blocklist = Blocklist.from_file(config.blocklist) if config.blocklist else Blocklist()
        base_host = config.base_url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
        base_host = base_host.rsplit(":", 1)[0] if not base_host.endswith("]") else base_host
        self.checker = UrlChecker(config.policy, (base_host, *config.own_hosts), blocklist)
        self.clicks: ClickRecorder | None = None
        self._page = _static("index.html")
        self._static = {name: _static(name) for name in _STATIC}
        self._openapi = json.dumps(openapi_spec(config.base_url)).encode()
        self.now: Callable[[], float] = time.time
        self._app = Starlette(
            routes=[
                Route("/", self._index, methods=["GET", "HEAD"]),
                Route("/static/{name}", self._static_file, methods=["GET", "HEAD"]),
                Route("/favicon.svg", self._favicon, methods=["GET", "HEAD"]),
                Route("/favicon.ico", self._favicon, methods=["GET", "HEAD"]),
                Route("/openapi.json", self._openapi_json, methods=["GET", "HEAD"]),
                Route("/healthz", self._health, methods=["GET"]),
                Route("/api/v1/data/shorten", self._shorten, methods=["POST"]),
                Route("/api/v1/data", self._shorten, methods=["POST"]),
                Route("/api/v1/{code}/stats", self._stats, methods=["GET"]),
            ],
            lifespan=self._lifespan,
        )

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

    async def _redirect(self, scope: Scope, send: Send, code: str, api: bool) -> None:
        entry = self.cache.entry(code)
        if entry is None:
            try:
                link = await self.store.get(code)
            except StoreError:
                await self._send_error(send, api, 503, "the store is unavailable", "store")
                return
            if link is None:
                await self._send_error(send, api, 404, f"no link '{code}'", "not-found", code)
                return
            entry = self.cache.put(link)
        link_id, _, _, status, _, expires_at, _, location = entry
        now = self.now()
        if expires_at is not None and now >= expires_at:
            await self._send_error(send, api, 404, f"link '{code}' has expired", "expired", code)
            return
        if status == 302:
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

    async def _send_error(
        self, send: Send, api: bool, status: int, message: str, problem: str, code: str = ""
    ) -> None:
        if api:
            body = json.dumps({"error": message, "problem": problem}).encode()
            headers = [(b"content-type", b"application/json")]
        else:
            text = html.escape(message)
            body = (
                "<!doctype html><html lang=en><meta charset=utf-8>"
                f"<title>{status}</title><link rel=stylesheet href=/static/style.css>"
                f"<main><h1>{status}</h1><p>{text}</p><p><a href=/>Shorten a URL</a></p></main>"
            ).encode()
            headers = [(b"content-type", b"text/html; charset=utf-8")]
            headers += [(k.encode(), v.encode()) for k, v in _PAGE_HEADERS.items()]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    # -- Starlette endpoints ----------------------------------------------------------------

    async def _index(self, _request: Request) -> Response:
        return HTMLResponse(self._page, headers=_PAGE_HEADERS)

    async def _static_file(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return _error(404, "no such file", "not-found")
        return Response(
            self._static[name],
            media_type=_STATIC[name],
            headers={"x-content-type-options": "nosniff", "cache-control": "max-age=300"},
        )

    async def _favicon(self, _request: Request) -> Response:
        return Response(_FAVICON, media_type="image/svg+xml")

    async def _openapi_json(self, _request: Request) -> Response:
        return Response(self._openapi, media_type="application/json")

    async def _health(self, _request: Request) -> Response:
        return JSONResponse({"ok": True, "cached": len(self.cache)})

    def _client(self, request: Request) -> str:
        peer = request.client.host if request.client else None
        return self.clients.resolve(peer, request.headers)

    async def _read_json(self, request: Request) -> dict[str, Any]:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > _MAX_BODY:
                raise Rejected(f"request body over {_MAX_BODY} bytes", "body", status=413)
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise Rejected("request body is not JSON", "body") from None
        if not isinstance(data, dict):
            raise Rejected('request body must be a JSON object like {"longUrl": "..."}', "body")
        return data

    def _link_json(self, link: Link) -> dict[str, Any]:
        return {
            "code": link.code,
            "shortUrl": self.config.short_prefix + link.code,
            "longUrl": link.long_url,
            "redirect": int(link.redirect),
            "createdAt": _iso(link.created_at),
            "expiresAt": _iso(link.expires_at),
        }

    async def _shorten(self, request: Request) -> Response:
        now = self.now()
        wait = self.limiter.take(self._client(request), now)
        if wait > 0:
            retry = RateLimiter.retry_after(wait)
            return _error(
                429, f"too many links; retry in {retry} s", "rate-limited", **{"retry-after": retry}
            )
        try:
            data = await self._read_json(request)
            if "longUrl" not in data:
                raise Rejected("longUrl is missing", "malformed")
            checked = self.checker.check(data["longUrl"])
            alias = data.get("alias")
            alias = None if alias in (None, "") else check_alias(alias)
            redirect = data.get("redirect", int(self.config.redirect))
            if isinstance(redirect, bool) or redirect not in (301, 302):
                raise Rejected("redirect must be 301 or 302", "redirect")
            new = NewLink(
                long_url=checked.stored,
                key=checked.key,
                redirect=Redirect(redirect),
                created_at=now,
                alias=alias,
                expires_at=parse_expiry(data.get("expiresAt"), now),
            )
            result = await self.store.create(new)
        except Rejected as exc:
            return _error(exc.status, str(exc), exc.problem)
        except AliasTaken as exc:
            return _error(409, str(exc), "alias-taken")
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        with contextlib.suppress(UnicodeError):  # only a cache fill; the link is stored
            self.cache.put(result.link)
        return JSONResponse(self._link_json(result.link), 201 if result.created else 200)

    async def _stats(self, request: Request) -> Response:
        code = request.path_params["code"]
        try:
            link = self.cache.get(code) or await self.store.get(code)
            if link is None:
                return _error(404, f"no link '{code}'", "not-found")
            stats = await self.store.stats(link)
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        body = self._link_json(link)
        body.update(
            {
                "clicks": stats.total,
                # 302 sends every click through us; a browser that cached a 301 does not.
                "countsEveryClick": link.redirect is Redirect.FOUND,
                "byDay": [{"key": k, "clicks": n} for k, n in stats.by_day],
                "referrers": [{"key": k or "(direct)", "clicks": n} for k, n in stats.referrers],
                "userAgents": [{"key": k, "clicks": n} for k, n in stats.user_agents],
            }
        )
        return JSONResponse(body, headers={"cache-control": "no-store"})


def create_app(config: ShortenerConfig | None = None, store: Store | None = None) -> ShortenerApp:
    """The ASGI app for ``config`` (defaults throughout); ``store`` overrides ``config.db``."""
    return ShortenerApp(config or ShortenerConfig(), store)
