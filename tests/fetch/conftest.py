"""Servers on 127.0.0.1 that the fetch tests start themselves.

``raw_server(handler)`` runs an asyncio socket server whose handler can send anything
(malformed heads, resets, stalls); ``web_server(app)`` runs an aiohttp.web application.
Everything is closed at teardown, so no unclosed-resource warning can fail a test.
"""

import asyncio
import contextlib
import socket

import pytest
from aiohttp import web

import support
from dustless.fetch import AddressPolicy, Fetcher, FetchLimits, Resolver


class RawServer:
    def __init__(self, server, writers, release):
        self.server = server
        self.port = server.sockets[0].getsockname()[1]
        self.writers = writers
        self.release = release  # set at teardown: stalled handlers return
        self.requests = []  # raw request heads received

    def url(self, path="/", host="127.0.0.1"):
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
async def raw_server():
    servers = []

    async def start(handler):
        writers = []
        release = asyncio.Event()
        holder = {}

        async def serve(reader, writer):
            writers.append(writer)
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                holder["server"].requests.append(head)
                await handler(reader, writer, release)
            except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
                pass
            finally:
                with contextlib.suppress(Exception):
                    writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        raw = RawServer(server, writers, release)
        holder["server"] = raw
        servers.append(raw)
        return raw

    yield start
    for raw in servers:
        raw.release.set()
        for writer in raw.writers:
            writer.close()
        raw.server.close()
        await raw.server.wait_closed()
    await asyncio.sleep(0)  # let handlers observe the release and finish


@pytest.fixture
async def web_server():
    runners = []

    async def start(app):
        runner = web.AppRunner(app, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        return runner.addresses[0][1]

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
async def make_fetcher():
    fetchers = []

    def make(limits=None, resolver=None, policy=None, **kwargs):
        fetcher = Fetcher(
            resolver or Resolver({"*.test": "127.0.0.1"}),
            limits or FetchLimits(stall_timeout=0.5, connect_timeout=0.5, total_timeout=5.0),
            policy or AddressPolicy(),
            **kwargs,
        )
        fetchers.append(fetcher)
        return fetcher

    yield make
    for fetcher in fetchers:
        await fetcher.close()


@pytest.fixture
def refused_port():
    """A port nothing listens on (bound and held, never listening: see ``support``)."""
    with support.refused_port() as port:
        yield port


@pytest.fixture
def blackhole_port():
    """A port whose accept queue is full: SYNs are dropped, so connecting hangs (cTim)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    yield port
    for filler in fillers:
        filler.close()
    listener.close()
