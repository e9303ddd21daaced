"""The aiohttp edge of the test web: one process, many hosts, control endpoints.

The handler is aiohttp's low-level server (no router, no middlewares) and caches both the
outcome of each URL and each page body, so a ``clean`` page costs a few dict lookups: the
test web must serve ≥ 5,000 pages/s on one core and never be a crawl benchmark's bottleneck.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import socket
import struct
import time
import zlib
from pathlib import Path
from urllib.parse import parse_qsl

from aiohttp import hdrs, web

from dustless.testweb._core import Action, Outcome, Page, WebConfig
from dustless.testweb._hostile import bomb_body
from dustless.testweb._html import render_page
from dustless.testweb._stats import Stats
from dustless.testweb._truth import TruthWriter
from dustless.testweb._web import Web, build_web, truth_kind, truth_rid

__all__ = ["TestWebServer", "serve_forever"]

CONTROL = "/__testweb/"
_ROUTE_CACHE_MAX = 200_000


class _NoContentType(web.Response):
    """A response without a Content-Type header, which aiohttp would otherwise add."""

    async def _prepare_headers(self) -> None:
        await super()._prepare_headers()
        self._headers.popall(hdrs.CONTENT_TYPE, None)


def _reset(request: web.BaseRequest) -> None:
    """Close the connection with a TCP RST (SO_LINGER 0), not a FIN."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


class TestWebServer:
    """Serves ``build_web(cfg)``; ``start()`` binds, builds the web and starts answering."""

    __test__ = False  # not a pytest class

    def __init__(self, cfg: WebConfig, truth: Path | None = None, day: int = 0) -> None:
        self.cfg = cfg
        self.truth_path = truth
        self.day = day
        self.stats = Stats()
        self.truth = TruthWriter(truth)
        self.web: Web | None = None
        self.port = cfg.port
        self._runner: web.ServerRunner | None = None
        self._warm: asyncio.Future[bytes] | None = None
        self._routes: dict[tuple[str, str], Outcome] = {}
        # (resource-id, version) -> (body, headers with its ETag)
        self._bodies: dict[tuple[str, int, bool], tuple[bytes, dict[str, str]]] = {}
        self._gzipped: dict[bytes, bytes] = {}  # page body -> its gzip bytes (WebConfig.gzip)
        self._requests = 0  # requests of dynamic pages so far: what their bodies vary with
        self._multi = len(cfg.addresses) > 1
        self._port_suffix = "" if cfg.port == 80 else f":{cfg.port}"

    async def start(self) -> None:
        server = web.Server(self.handle, access_log=None)
        self._runner = web.ServerRunner(server, handle_signals=False)
        await self._runner.setup()
        port = self.cfg.port
        for address in self.cfg.addresses:
            site = web.TCPSite(self._runner, address, port, reuse_address=True)
            await site.start()
            if port == 0:  # the first address picked a free port; the others share it
                port = int(self._runner.addresses[-1][1])
        self.port = port
        self._port_suffix = "" if port == 80 else f":{port}"
        self.cfg = _with_port(self.cfg, port)
        self.web = build_web(self.cfg)
        self.truth.start(self.web.initial_truth(), self.web.rates())
        if any(site.robots_variant != "plain" for site in self.web.sites):
            # Compressing the 64 MiB bomb takes ~0.6 s: do it in a thread now (zlib releases
            # the GIL) rather than stall every host on the first request for it.
            self._warm = asyncio.get_running_loop().run_in_executor(None, bomb_body)

    async def stop(self) -> None:
        if self._warm is not None:
            await self._warm
            self._warm = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.truth.close()

    # -- requests ------------------------------------------------------------------------

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        raw = request.raw_path
        if raw.startswith(CONTROL):
            return self._control(request)
        host = request.host.lower()
        if ":" in host:
            host = host.rsplit(":", 1)[0]
        if self.web is None:  # bound but still generating (a fixed --port was guessed)
            return web.Response(status=503, headers={hdrs.RETRY_AFTER: "1"})
        address = None
        if self._multi and request.transport is not None:
            address = request.transport.get_extra_info("sockname")[0]
        self.stats.begin(host, time.monotonic(), address)
        try:
            if self.cfg.latency:
                await asyncio.sleep(self.cfg.latency)
            if request.method not in ("GET", "HEAD"):
                return web.Response(status=405, headers={hdrs.ALLOW: "GET, HEAD"})
            key = (host, raw)
            outcome = self._routes.get(key)
            if outcome is None:
                # Not seen before (or not cacheable): route it and write it into the truth.
                outcome = self._route(host, raw)
                if outcome is None:
                    return web.Response(status=404, text=f"no such host: {host}\n")
                if outcome.cacheable and len(self._routes) < _ROUTE_CACHE_MAX:
                    self._routes[key] = outcome
                url = f"http://{host}{self._port_suffix}{raw}"
                kind = truth_kind(outcome) if self.web.kinds else ""
                self.truth.served(url, outcome.status, truth_rid(outcome), kind)
            self.stats.served(outcome.rid, outcome.resource, outcome.trap)
            return await self._respond(request, outcome, host)
        finally:
            self.stats.end(host, address)

    def _route(self, host: str, raw: str) -> Outcome | None:
        assert self.web is not None
        path, _, query = raw.partition("?")
        return self.web.route(host, path.split("#", 1)[0], query)

    def _page_body(self, page: Page, host: str = "") -> tuple[bytes, dict[str, str]]:
        if page.style == "dynamic":
            # Other bytes for every request (clock, nonce, ad, CSRF): never cached, and no
            # ETag, as such servers send none.
            self._requests += 1
            body = self._twin(page, host, render_page(page, self.day, self._requests))
            headers = {"Content-Type": "text/html; charset=utf-8"}
            if page.link_header:
                headers["Link"] = page.link_header
            return body, headers
        twin = bool(page.twin_origin) and host == page.twin_origin.split("//", 1)[1].split(":")[0]
        key = (page.rid, page.version(self.day), twin)
        cached = self._bodies.get(key)
        if cached is None:
            body = self._twin(page, host, render_page(page, self.day))
            # The ETag names the version, so a recrawl can revalidate (If-None-Match → 304).
            etag = '"' + hashlib.blake2b(body, digest_size=8).hexdigest() + '"'
            headers = {"Content-Type": "text/html; charset=utf-8", "ETag": etag}
            if page.link_header:
                headers["Link"] = page.link_header  # RFC 6596 canonical, as a header
            cached = self._bodies[key] = (body, headers)
        return cached

    async def _gzip(
        self,
        request: web.BaseRequest,
        page: Page,
        body: bytes,
        headers: dict[str, str],
        status: int,
    ) -> web.StreamResponse:
        """A page gzip'd (``WebConfig.gzip``): zlib's gzip header has MTIME 0, so the bytes
        are the same on every request; every other page is sent chunked."""
        packed = self._gzipped.get(body)
        if packed is None:
            comp = zlib.compressobj(6, zlib.DEFLATED, 31)
            packed = comp.compress(body) + comp.flush()
            if page.style != "dynamic" and len(self._gzipped) < _ROUTE_CACHE_MAX:
                self._gzipped[body] = packed
        headers = {**headers, hdrs.CONTENT_ENCODING: "gzip", hdrs.VARY: "Accept-Encoding"}
        if zlib.crc32(page.rid.encode()) % 2 == 0:
            return web.Response(body=packed, status=status, headers=headers)
        resp = web.StreamResponse(status=status, headers=headers)  # no length: chunked
        await resp.prepare(request)
        half = len(packed) // 2
        await resp.write(packed[:half])
        await resp.write(packed[half:])
        await resp.write_eof()
        return resp

    @staticmethod
    def _twin(page: Page, host: str, body: bytes) -> bytes:
        """A ``www`` twin's page, requested there: its absolute links name its own host."""
        if not page.twin_origin or host != page.twin_origin.split("//", 1)[1].split(":")[0]:
            return body
        return body.replace((page.origin + "/").encode(), (page.twin_origin + "/").encode())

    def _body(self, outcome: Outcome, host: str = "") -> bytes:
        if outcome.render is not None:
            return outcome.render(self.day)
        return outcome.body if outcome.page is None else self._page_body(outcome.page, host)[0]

    async def _respond(
        self, request: web.BaseRequest, outcome: Outcome, host: str = ""
    ) -> web.StreamResponse:
        action = outcome.action
        page = outcome.page
        if page is not None and action is Action.NORMAL and not outcome.headers:
            # the fast path: every page of a clean site
            page_body, page_headers = self._page_body(page, host)
            match = request.headers.get(hdrs.IF_NONE_MATCH)
            etag = page_headers.get("ETag")
            if match is not None and etag is not None and etag in match:
                return web.Response(status=304, headers={hdrs.ETAG: etag})
            if self.cfg.gzip and "gzip" in request.headers.get(hdrs.ACCEPT_ENCODING, ""):
                return await self._gzip(request, page, page_body, page_headers, outcome.status)
            return web.Response(body=page_body, status=outcome.status, headers=page_headers)
        headers: dict[str, str] = dict(outcome.headers)
        if outcome.content_type is not None:
            headers[hdrs.CONTENT_TYPE] = outcome.content_type
        if outcome.location is not None:
            headers[hdrs.LOCATION] = outcome.location
        body = self._body(outcome, host) if outcome.location is None else b""
        if action is Action.NORMAL:
            return web.Response(body=body, status=outcome.status, headers=headers)
        if action is Action.SLOW_FIRST_BYTE:
            await asyncio.sleep(outcome.delay)
            return web.Response(body=body, status=outcome.status, headers=headers)
        if action is Action.NO_CONTENT_TYPE:
            return _NoContentType(body=body, status=outcome.status, headers=headers)
        if action is Action.RESET:
            _reset(request)
            return web.Response(status=500)
        resp = web.StreamResponse(status=outcome.status, headers=headers)
        if action is not Action.CHUNKED:
            resp.content_length = len(body)
        half = len(body) // 2
        try:
            await resp.prepare(request)
            if action is Action.CHUNKED:
                for i in range(0, len(body), 65536):
                    await resp.write(body[i : i + 65536])
            else:
                await resp.write(body[:half])
                if action is Action.RESET_MID:
                    _reset(request)
                    return resp
                await asyncio.sleep(outcome.delay)  # STALL
                await resp.write(body[half:])
            await resp.write_eof()
        except (ConnectionError, RuntimeError):
            pass  # the client gave up: that is what these pages are for
        return resp

    # -- control endpoints ---------------------------------------------------------------

    def _control(self, request: web.BaseRequest) -> web.StreamResponse:
        what = request.path[len(CONTROL) :].strip("/")
        query = dict(parse_qsl(request.query_string))
        if what == "stats":
            return _json(self.stats.as_json())
        if what == "reset":
            self.stats.reset()
            return _json({"reset": True})
        if what == "day":
            if "set" in query:
                try:
                    day = int(query["set"])
                except ValueError:
                    return _json({"error": "set must be an integer"}, status=400)
                if day < 0:
                    return _json({"error": "set must be ≥ 0"}, status=400)
                self.day = day
            return _json({"day": self.day})
        if what == "info":
            assert self.web is not None
            return _json(
                {
                    "port": self.port,
                    "seed": self.cfg.seed,
                    "profile": self.cfg.profile.value,
                    "day": self.day,
                    "hosts": list(self.web.hosts),
                    "seeds": list(self.web.seeds),
                    "addresses": list(self.cfg.addresses),
                    "resolve": self.web.resolve_args(),
                    "truth": str(self.truth_path) if self.truth_path else None,
                    "sites": {
                        site.name: {
                            "hosts": list(site.hosts),
                            "personality": site.personality_name,
                            "www": site.www_mode,
                            "address": site.address,
                            "robots": site.robots_variant,
                            **_behaviours(site),
                        }
                        for site in self.web.sites
                    },
                }
            )
        return _json({"error": f"no control endpoint {what!r}"}, status=404)


def _behaviours(site: object) -> dict[str, object]:
    """A ``real`` site's drawn behaviours (``/__testweb/info``), nothing for the others."""
    plan = getattr(site, "plan", None)
    return {"behaviours": plan.info()} if plan is not None else {}


def _json(data: object, status: int = 200) -> web.Response:
    return web.Response(
        text=json.dumps(data, ensure_ascii=False, indent=1) + "\n",
        status=status,
        content_type="application/json",
    )


def _with_port(cfg: WebConfig, port: int) -> WebConfig:
    return dataclasses.replace(cfg, port=port)


async def serve_forever(server: TestWebServer, stop: asyncio.Event) -> None:
    await server.start()
    try:
        await stop.wait()
    finally:
        await server.stop()
