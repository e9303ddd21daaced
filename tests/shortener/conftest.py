"""Fixtures of the shortener tests: an in-process server, subprocess servers, PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
    port = port or free_port()
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
    return server


def _drain(server: ServerProcess) -> None:
    stream = server.proc.stdout
    assert stream is not None
    with contextlib.suppress(ValueError, OSError):
        for line in stream:
            server.lines.append(line)


# -- PostgreSQL ----------------------------------------------------------------------------


@dataclass
class Postgres:
    dsn: str
    datadir: Path
    prefix: list[str] = field(default_factory=list)  # runuser -u USER -- (when root)
    options: str = ""  # the server's command-line options (port, socket directory …)

    def stop(self) -> None:
        self.ctl("-m", "fast", "-w", "stop")

    def start(self) -> None:
        log = self.datadir.parent / "log"
        self.ctl("-o", self.options, "-l", str(log), "-w", "start")

    def ctl(self, *args: str) -> None:
        """``pg_ctl -D DATADIR ARGS…`` as the server's user (e.g. ``-m fast -w restart``);
        ``-w`` makes it return once the server has stopped or accepts connections."""
        pg_ctl = shutil.which("pg_ctl")
        assert pg_ctl is not None
        subprocess.run(
            [*self.prefix, pg_ctl, "-D", str(self.datadir), *args],
            check=True,
            capture_output=True,
            cwd=self.datadir.parent,
        )


def _as_postgres_user() -> list[str]:
    # initdb refuses to run as root; the tests do run as root, so use a system account.
    if os.geteuid() != 0:
        return []
    for user in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            import pwd

            pwd.getpwnam(user)
            return ["runuser", "-u", user, "--"]
    support.require(False, "no unprivileged user to run PostgreSQL as")
    return []  # not reached: require() skips or fails


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A throwaway PostgreSQL server: initdb in a temp dir, a random port, stopped at the end."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    support.require(initdb and pg_ctl, "PostgreSQL's initdb/pg_ctl are not on PATH")
    assert initdb is not None
    assert pg_ctl is not None
    prefix = _as_postgres_user()
    root = Path(tempfile.mkdtemp(prefix="dustless-pg-"))
    datadir = root / "data"
    if prefix:
        user = prefix[2]
        import pwd

        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    port = free_port()
    try:
        subprocess.run(
            [
                *prefix,
                initdb,
                "-D",
                str(datadir),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
            cwd=root,
        )
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root}"
            " -c fsync=off"  # a throwaway server: its crash safety is not what we test
        )
        subprocess.run(
            [
                *prefix,
                pg_ctl,
                "-D",
                str(datadir),
                "-o",
                options,
                "-l",
                str(root / "log"),
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
            cwd=root,
        )
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        support.require(False, f"could not start PostgreSQL: {exc.stderr.decode()[-300:]}")
    try:
        yield Postgres(f"postgresql://postgres@127.0.0.1:{port}/postgres", datadir, prefix, options)
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(datadir), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            cwd=root,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_db(postgres: Postgres) -> Iterator[str]:
    """A fresh database on the throwaway server for one test."""
    import psycopg

    name = f"t{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield postgres.dsn.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
