"""The Starlette endpoints: create, statistics, link list, edit, QR codes, the page.

Who may do what (the threat model of docs/shortener.md):

* **Create** needs an API key (``Authorization: Bearer KEY`` or ``X-Api-Key: KEY``) unless
  the service runs with ``--public``; then anyone may, limited per address at a tenth of a
  key's rate. Only ``Content-Type: application/json`` bodies are read: a cross-site form or
  ``text/plain`` post (which a browser sends without asking the server first) is refused
  with 415, and a cross-site JSON post needs a CORS preflight this service never grants.
* **Statistics, the link list and edits** show or change a link only to the key that made
  it, or to an admin key; anyone else is told the link does not exist (404). ``--public-stats``
  opens the statistics (not the list or edits) to everyone.
* **Reuse of a link for the same long URL** happens only within one owner, so a request never
  learns another owner's code or when it was made.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from importlib import resources
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from dustless.errors import StoreError

from ._auth import KeyCache, presented_key
from ._cache import LinkCache
from ._config import ShortenerConfig
from ._model import ANONYMOUS, AliasTaken, ApiKey, Link, NewLink, Redirect
from ._openapi import openapi_spec
from ._qr import QrFormat, QrRenderer
from ._ratelimit import ClientResolver, RateLimiter
from ._store import CHART_DAYS, SharedBuckets, Store
from ._validate import (
    Rejected,
    UrlChecker,
    check_alias,
    parse_expiry,
    parse_max_visits,
    parse_order_by,
    parse_since,
    parse_tags,
    parse_title,
)
from ._views import link_json, page_json, stats_json

__all__ = ["MAX_BODY", "PAGE_HEADERS", "Api", "Service"]

MAX_BODY = 16 * 1024
_PAGE_SIZE = 20
_MAX_PAGE_SIZE = 100
_MAX_SEARCH = 200
# The page may load its own script and style and talk to its own API — nothing else. A
# stored URL can never become script: the page only ever sets it as textContent / href.
PAGE_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
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
_NO_STORE = {"cache-control": "no-store"}
_EDITABLE = frozenset({"validSince", "validUntil", "expiresAt", "maxVisits", "title", "tags"})


def _error(status: int, message: str, problem: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": message, "problem": problem}, status, headers=headers or None)


def _static(name: str) -> bytes:
    return resources.files("dustless.shortener").joinpath("static", name).read_bytes()


def _rejected(exc: Rejected) -> JSONResponse:
    headers = {"www-authenticate": 'Bearer realm="dustless"'} if exc.status == 401 else {}
    return _error(exc.status, str(exc), exc.problem, **headers)


class Service(Protocol):
    """What the endpoints read of the service they belong to (``ShortenerApp``): declared
    here so that the API does not import the app that builds it."""

    config: ShortenerConfig
    cache: LinkCache
    checker: UrlChecker
    clients: ClientResolver
    limiter: RateLimiter
    public_limiter: RateLimiter
    miss_limiter: RateLimiter
    now: Callable[[], float]

    @property
    def store(self) -> Store: ...


class Api:
    """Every endpoint except the redirect, bound to one service (:class:`Service`)."""

    def __init__(self, app: Service) -> None:
        self.app = app
        self.config = app.config
        self.keys = KeyCache(self._key_lookup)
        self.qr = QrRenderer()
        self._page = _static("index.html")
        self._static = {name: _static(name) for name in _STATIC}
        self._openapi = json.dumps(openapi_spec(self.config.base_url)).encode()

    def routes(self) -> list[Route]:
        return [
            Route("/", self._index, methods=["GET", "HEAD"]),
            Route("/static/{name}", self._static_file, methods=["GET", "HEAD"]),
            Route("/favicon.svg", self._favicon, methods=["GET", "HEAD"]),
            Route("/favicon.ico", self._favicon, methods=["GET", "HEAD"]),
            Route("/openapi.json", self._openapi_json, methods=["GET", "HEAD"]),
            Route("/healthz", self._health, methods=["GET"]),
            Route("/api/v1/info", self._info, methods=["GET"]),
            Route("/api/v1/data/shorten", self._shorten, methods=["POST"]),
            Route("/api/v1/data", self._shorten, methods=["POST"]),
            Route("/api/v1/links", self._list, methods=["GET"]),
            Route("/api/v1/links/{code}", self._edit, methods=["PATCH"]),
            Route("/api/v1/tags", self._tags, methods=["GET"]),
            Route("/api/v1/{code}/stats", self._stats, methods=["GET"]),
            Route("/{code}/qr", self._qr, methods=["GET", "HEAD"]),
        ]

    # -- who is asking ----------------------------------------------------------------------

    async def _key_lookup(self, digest: str) -> ApiKey | None:
        return await self.app.store.key_for_hash(digest)

    async def _caller(self, request: Request) -> ApiKey | None:
        """The request's API key, None without one; ``Rejected(401)`` for a bad one."""
        key = presented_key(request.headers)
        if key is None:
            return None
        found = await self.keys.get(key, self.app.now()) if key else None
        if found is None:
            raise Rejected("unknown or revoked API key", "unauthorized", status=401)
        return found

    async def _require_key(self, request: Request) -> ApiKey:
        caller = await self._caller(request)
        if caller is None:
            raise Rejected(
                "an API key is required (Authorization: Bearer KEY or X-Api-Key: KEY)",
                "unauthorized",
                status=401,
            )
        return caller

    @staticmethod
    def _may_see(caller: ApiKey | None, link: Link) -> bool:
        return caller is not None and (caller.admin or caller.id == link.owner)

    def _client(self, request: Request) -> str:
        peer = request.client.host if request.client else None
        return self.app.clients.resolve(peer, request.headers)

    def _miss(self, request: Request, what: str) -> Response:
        """A 404 for an unknown (or not visible) code, counted against the client's misses."""
        wait = self.app.miss_limiter.take(self._client(request), self.app.now())
        if wait > 0:
            retry = RateLimiter.retry_after(wait)
            return _error(
                429,
                f"too many unknown codes; retry in {retry} s",
                "rate-limited",
                **{"retry-after": retry},
            )
        return _error(404, what, "not-found")

    async def _read_json(self, request: Request) -> dict[str, Any]:
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise Rejected(
                "the body must be sent as Content-Type: application/json", "media-type", 415
            )
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            # Refused before a byte of the body is read.
            raise Rejected(f"request body over {MAX_BODY} bytes", "body", status=413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                raise Rejected(f"request body over {MAX_BODY} bytes", "body", status=413)
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise Rejected("request body is not JSON", "body") from None
        except RecursionError:  # [[[[… nested deeper than the parser's stack
            raise Rejected("request body is nested too deeply", "body") from None
        if not isinstance(data, dict):
            raise Rejected('request body must be a JSON object like {"longUrl": "..."}', "body")
        return data

    async def _take_token(self, caller: ApiKey | None, request: Request) -> float:
        """Seconds to wait before this create may run (0.0: now), from the caller's bucket."""
        app = self.app
        if caller is not None:
            bucket, local = f"key:{caller.id}", app.limiter
        else:
            bucket, local = f"ip:{self._client(request)}", app.public_limiter
        if not local.enabled:
            return 0.0
        store = app.store
        if isinstance(store, SharedBuckets):
            return await store.take_token(bucket, local.rate, local.burst)
        return local.take(bucket, app.now())

    # -- create -------------------------------------------------------------------------------

    async def _shorten(self, request: Request) -> Response:
        app = self.app
        try:
            caller = await self._caller(request)
            if caller is None and not self.config.public:
                await self._require_key(request)
            wait = await self._take_token(caller, request)
            if wait > 0:
                retry = RateLimiter.retry_after(wait)
                return _error(
                    429,
                    f"too many links; retry in {retry} s",
                    "rate-limited",
                    **{"retry-after": retry},
                )
            data = await self._read_json(request)
            now = app.now()
            new, host = self._new_link(data, now, ANONYMOUS if caller is None else caller.id)
            refusal = await app.checker.guard.resolved_refusal(host)
            if refusal is not None:
                raise Rejected(f"longUrl {refusal}", "own-domain")
            result = await app.store.create(new)
        except Rejected as exc:
            return _rejected(exc)
        except AliasTaken as exc:
            return _error(409, str(exc), "alias-taken")
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        link = result.link
        if link.max_visits is None:  # a limited link is read on every click anyway
            app.cache.put(link, app.now())
        # A link someone else made anonymously is reused (seed 003: one code per URL), but
        # when it was made is theirs to know.
        created_visible = result.created or caller is not None
        try:
            tags = new.tags if result.created else (await app.store.tags_of([link.id])).get(link.id)
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        shown = link_json(
            link,
            self.config.short_prefix,
            app.now(),
            show_created=created_visible,
            tags=tags or (),
        )
        return JSONResponse(shown, 201 if result.created else 200)

    def _new_link(self, data: dict[str, Any], now: float, owner: int) -> tuple[NewLink, str]:
        """The link a create asks for, and its target's host (as a browser reads it)."""
        if "longUrl" not in data:
            raise Rejected("longUrl is missing", "malformed")
        checked = self.app.checker.check(data["longUrl"])
        slug = data.get("customSlug", data.get("alias"))
        slug = None if slug in (None, "") else check_alias(slug)
        redirect = data.get("redirect", int(self.config.redirect))
        if isinstance(redirect, bool) or redirect not in (301, 302):
            raise Rejected("redirect must be 301 or 302", "redirect")
        name = "validUntil" if "validUntil" in data else "expiresAt"
        expires_at = parse_expiry(data.get(name), now, name)
        new = NewLink(
            long_url=checked.stored,
            key=checked.key,
            redirect=Redirect(redirect),
            created_at=now,
            alias=slug,
            expires_at=expires_at,
            owner=owner,
            max_visits=parse_max_visits(data.get("maxVisits")),
            tags=parse_tags(data.get("tags")),
            valid_since=parse_since(data.get("validSince"), expires_at),
            title=parse_title(data.get("title")),
        )
        return new, checked.host

    # -- read and manage ----------------------------------------------------------------------

    async def _stats(self, request: Request) -> Response:
        code = request.path_params["code"]
        try:
            caller = await self._caller(request)
            if caller is None and not self.config.public_stats:
                await self._require_key(request)
            link = await self.app.store.get(code)
            if link is None or not (self.config.public_stats or self._may_see(caller, link)):
                return self._miss(request, f"no link '{code}'")
            stats = await self.app.store.stats(link)
            tags = (await self.app.store.tags_of([link.id])).get(link.id, ())
        except Rejected as exc:
            return _rejected(exc)
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        body = stats_json(stats, self.config.short_prefix, self.app.now(), tags)
        return JSONResponse(body, headers=_NO_STORE)

    async def _list(self, request: Request) -> Response:
        params = request.query_params
        try:
            caller = await self._require_key(request)
            number = _whole(params.get("page", "1"), "page", 1, 10**9)
            size = _whole(params.get("pageSize", str(_PAGE_SIZE)), "pageSize", 1, _MAX_PAGE_SIZE)
            search = params.get("search", "").strip()[:_MAX_SEARCH]
            tag = params.get("tag") or None
            order = parse_order_by(params.get("orderBy"))
            now = self.app.now()
            since = time.strftime("%Y-%m-%d", time.gmtime(now - (CHART_DAYS - 1) * 86400))
            page = await self.app.store.list_links(
                None if caller.admin else caller.id,
                search,
                (number - 1) * size,
                size,
                since,
                tag,
                order,
            )
        except Rejected as exc:
            return _rejected(exc)
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        body = page_json(page, self.config.short_prefix, now, number, size)
        body["search"] = search
        body["tag"] = tag
        body["orderBy"] = params.get("orderBy") or None
        body["chartSince"] = since
        return JSONResponse(body, headers=_NO_STORE)

    async def _tags(self, request: Request) -> Response:
        """The caller's tags (an admin key: every link's), each with how many links carry it."""
        try:
            caller = await self._require_key(request)
            tags = await self.app.store.list_tags(None if caller.admin else caller.id)
        except Rejected as exc:
            return _rejected(exc)
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        body = {"tags": [{"tag": t, "links": n} for t, n in tags]}
        return JSONResponse(body, headers=_NO_STORE)

    async def _edit(self, request: Request) -> Response:
        code = request.path_params["code"]
        app = self.app
        try:
            caller = await self._require_key(request)
            data = await self._read_json(request)
            link = await app.store.get(code)
            if link is None or not self._may_see(caller, link):
                return self._miss(request, f"no link '{code}'")
            unknown = set(data) - _EDITABLE
            if unknown:
                raise Rejected(
                    "only validSince, validUntil, maxVisits, title and tags can be changed, "
                    f"not {sorted(unknown)[0]}",
                    "edit",
                )
            tags = parse_tags(data["tags"]) if "tags" in data else None
            now = app.now()
            expires_at, max_visits = link.expires_at, link.max_visits
            for name in ("expiresAt", "validUntil"):
                if name in data:
                    expires_at = parse_expiry(data[name], now, name)
            if "maxVisits" in data:
                max_visits = parse_max_visits(data["maxVisits"])
            valid_since, title = link.valid_since, link.title
            if "validSince" in data:
                valid_since = parse_since(data["validSince"], expires_at)
            elif valid_since is not None and expires_at is not None and valid_since >= expires_at:
                raise Rejected("validUntil must be after validSince", "expires")
            if "title" in data:
                title = parse_title(data["title"])
            updated = await app.store.update_link(
                link.id, expires_at, max_visits, valid_since, title
            )
            if updated is not None and tags is not None:
                await app.store.set_tags(link.id, tags)
            shown_tags = (await app.store.tags_of([link.id])).get(link.id, ())
        except Rejected as exc:
            return _rejected(exc)
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        if updated is None:
            return _error(404, f"no link '{code}'", "not-found")
        app.cache.forget(code)  # this worker at once; the others within the cache's REVALIDATE
        body = link_json(updated, self.config.short_prefix, now, tags=shown_tags)
        return JSONResponse(body, headers=_NO_STORE)

    async def _qr(self, request: Request) -> Response:
        code = request.path_params["code"]
        name = request.query_params.get("format", "svg").lower()
        try:
            fmt = QrFormat(name)
            scale = _whole(request.query_params.get("scale", "4"), "scale", 1, 40)
        except ValueError:
            return _error(400, "format must be svg or png", "format")
        except Rejected as exc:
            return _rejected(exc)
        try:
            link = await self.app.store.get(code)
        except StoreError as exc:
            return _error(503, f"the store is unavailable: {exc}", "store")
        if link is None:
            return self._miss(request, f"no link '{code}'")
        # The short URL, built from the code alone: nothing a client sent reaches the image.
        data = self.qr.render(self.config.short_prefix + link.code, fmt, scale)
        return Response(
            data,
            media_type=fmt.media_type,
            headers={"cache-control": "public, max-age=86400", "x-content-type-options": "nosniff"},
        )

    # -- the page and the rest ------------------------------------------------------------------

    async def _index(self, _request: Request) -> Response:
        return HTMLResponse(self._page, headers=PAGE_HEADERS)

    async def _static_file(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return _error(404, "no such file", "not-found")
        return Response(
            self._static[name],
            media_type=_STATIC[name],
            headers={"x-content-type-options": "nosniff", "cache-control": "no-cache"},
        )

    async def _favicon(self, _request: Request) -> Response:
        return Response(_FAVICON, media_type="image/svg+xml")

    async def _openapi_json(self, _request: Request) -> Response:
        return Response(self._openapi, media_type="application/json")

    async def _info(self, _request: Request) -> Response:
        return JSONResponse(
            {
                "keysRequired": not self.config.public,
                "publicStats": self.config.public_stats,
                "shortPrefix": self.config.short_prefix,
            }
        )

    async def _health(self, _request: Request) -> Response:
        # Ask the database: a service whose database is gone is not healthy.
        try:
            await self.app.store.ping()
        except StoreError as exc:
            return JSONResponse({"ok": False, "error": str(exc)}, 503, headers=_NO_STORE)
        return JSONResponse({"ok": True, "cached": len(self.app.cache)}, headers=_NO_STORE)


def _whole(text: str, name: str, low: int, high: int) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise Rejected(f"{name} must be a whole number from {low} to {high}", "query")
    return int(text)
