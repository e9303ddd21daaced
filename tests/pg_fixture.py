"""A throwaway PostgreSQL server for the tests (used by ``tests/conftest.py``).

``initdb`` in a temporary directory, a free port on 127.0.0.1, ``fsync=off`` (its crash
safety is not what the tests test), stopped at the end of the session. Every test that
wants a database gets a fresh one (``pg_db``). Missing binaries go through
``support.require``: a skip on a laptop, a failure under ``DUSTLESS_REQUIRE_ALL=1``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import support

free_port = support.free_port  # kept importable from here, where it used to live


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

    def new_database(self) -> str:
        """A fresh, empty database on this server; its connection string."""
        import psycopg

        name = f"t{os.getpid()}_{time.monotonic_ns()}"
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.dsn.rsplit("/", 1)[0] + "/" + name

    def drop_database(self, dsn: str) -> None:
        import psycopg

        name = dsn.rsplit("/", 1)[1]
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


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


@contextlib.contextmanager
def running_postgres() -> Iterator[Postgres]:
    """A throwaway PostgreSQL server for the ``with`` block."""
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
    try:
        subprocess.run(
            [*prefix, initdb, "-D", str(datadir), "-U", "postgres", "--auth=trust",
             "-E", "UTF8", "--no-sync"],
            check=True, capture_output=True, cwd=root,
        )  # fmt: skip
        for attempt in range(support.PORT_TRIES):
            port = support.free_port()
            options = (
                f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root}"
                " -c fsync=off"  # a throwaway server: its crash safety is not what we test
                " -c max_connections=200"
            )
            try:
                subprocess.run(
                    [*prefix, pg_ctl, "-D", str(datadir), "-o", options, "-l",
                     str(root / "log"), "-w", "start"],
                    check=True, capture_output=True, cwd=root,
                )  # fmt: skip
                break
            except subprocess.CalledProcessError:
                # The other test worker took the port between our pick and the server's
                # bind: start again on another one (support.free_port).
                log = (root / "log").read_text(errors="replace")
                if attempt + 1 == support.PORT_TRIES or not support.address_in_use(log):
                    raise
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
