"""Fixtures of the shortener tests: an in-process server, subprocess servers, PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
import uvicorn

import support
from dustless.shortener import ShortenerApp, create_app
from shortener.helpers import open_config


@dataclass
class Running:
    app: ShortenerApp
    port: int
    session: aiohttp.ClientSession

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def shorten(self, long_url: str, **extra: object) -> tuple[int, dict]:
        async with self.session.post(
            self.base + "/api/v1/data/shorten", json={"longUrl": long_url, **extra}
        ) as resp:
            return resp.status, await resp.json()

    async def get(self, path: str, **kwargs: object) -> aiohttp.ClientResponse:
        resp = await self.session.get(self.base + path, allow_redirects=False, **kwargs)
        await resp.read()
        resp.release()
        return resp


@contextlib.asynccontextmanager
async def running(app: ShortenerApp) -> AsyncIterator[Running]:
    """Serve ``app`` with uvicorn on a free loopback port inside the test's event loop."""
    config = uvicorn.Config(
        app, lifespan="on", log_level="warning", access_log=False, proxy_headers=False
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    await server.startup(sockets=[sock])
    task = asyncio.create_task(server.main_loop())
    session = aiohttp.ClientSession()
    try:
        yield Running(app, sock.getsockname()[1], session)
    finally:
        await session.close()
        server.should_exit = True
        await task
        await server.shutdown(sockets=[sock])
        sock.close()


@pytest.fixture
def run_app():  # type: ignore[no-untyped-def]
    """``async with run_app(app) as srv``: serve an app on a free port for a block."""
    return running


@pytest.fixture
def servers() -> Iterator[object]:
    """``servers(db, *args, workers=N)`` starts ``dustless shortener serve``; all stopped after."""
    started: list[ServerProcess] = []

    def start(db: str, *args: str, workers: int = 1, port: int | None = None) -> ServerProcess:
        server = start_server(db, *args, workers=workers, port=port)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'links.db'}"


@pytest.fixture
async def service(db_url: str) -> AsyncIterator[Running]:
    config = open_config(db=db_url, base_url="https://sho.rt", rate_limit=0)
    async with running(create_app(config)) as srv:
        yield srv


# -- subprocess servers -------------------------------------------------------------------


@dataclass
class ServerProcess:
    proc: subprocess.Popen[str]
    port: int
    lines: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill_all(self) -> None:
        """SIGKILL the whole process group: the supervisor and every worker at once."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill_all()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def start_server(db: str, *args: str, workers: int = 1, port: int | None = None) -> ServerProcess:
    """``dustless shortener serve`` in its own process group; returns once it serves (read
    from its log, not guessed with a sleep)."""
    if port is not None:
        return _start_server(db, *args, workers=workers, port=port)
    for attempt in range(support.PORT_TRIES):
        try:
            return _start_server(db, *args, workers=workers, port=support.free_port())
        except AssertionError as exc:
            # The other test worker took the port between our pick and the server's bind:
            # start again on another one (support.free_port).
            if attempt + 1 == support.PORT_TRIES or not support.address_in_use(str(exc)):
                raise
    raise AssertionError("not reached")


def _start_server(db: str, *args: str, workers: int, port: int) -> ServerProcess:
    cmd = [
        sys.executable,
        "-m",
        "dustless",
        "shortener",
        "serve",
        "--db",
        db,
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "info",
        *args,
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    server = ServerProcess(proc, port)
    assert proc.stdout is not None
    started = 0
    deadline = time.monotonic() + 30
    while started < workers:
        line = proc.stdout.readline()
        if not line:
            server.proc.wait(timeout=10)
            proc.stdout.close()
            raise AssertionError("server exited:\n" + "".join(server.lines))
        server.lines.append(line)
        # One worker binds its socket after its startup; N workers share the socket the
        # supervisor bound first, so each worker's startup line means it is serving.
        if ("Uvicorn running on" if workers == 1 else "Application startup complete") in line:
            started += 1
        if time.monotonic() > deadline:
            server.kill_all()
            raise AssertionError("server did not start:\n" + "".join(server.lines))
    # Keep reading its output so a full pipe can never block the server.
    threading.Thread(target=_drain, args=(server,), daemon=True).start()
    # N workers share the socket the supervisor bound, and a worker's startup line comes
    # before it listens on it: until one does, a connection is refused (seen under load in
    # two test processes). Ready when the socket the supervisor holds listens.
    while not support.listens(proc.pid, port):
        if time.monotonic() > deadline or proc.poll() is not None:
            server.kill_all()
            raise AssertionError("server did not listen:\n" + "".join(server.lines))
        time.sleep(0.01)
    return server


def _drain(server: ServerProcess) -> None:
    stream = server.proc.stdout
    assert stream is not None
    with contextlib.suppress(ValueError, OSError):
        for line in stream:
            server.lines.append(line)
