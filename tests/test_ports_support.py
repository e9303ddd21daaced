"""The suite's servers on picked ports hold when two test processes race for ports.

``make test`` runs the suite in two processes (pytest-xdist): a port picked by one (bound,
then closed) may be taken by the other before the server binds it. Each test below hands
the server a port something already listens on first — what that race looks like — and
checks that the server is started again on another port, and that it is our server that
answers there, not whoever held the first port.
"""

from __future__ import annotations

import socket
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import support

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy


@pytest.fixture
def taken_first(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """``support.free_port`` answers a port a stranger listens on, then free ones."""
    with socket.create_server(("127.0.0.1", 0)) as stranger:
        taken = int(stranger.getsockname()[1])
        picks = iter([taken])
        real = support.free_port
        monkeypatch.setattr(support, "free_port", lambda: next(picks, None) or real())
        yield taken


def test_a_refused_port_refuses_and_no_one_else_can_take_it() -> None:
    with support.refused_port() as port:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=30)
        with socket.socket() as other, pytest.raises(OSError, match="in use"):
            other.bind(("127.0.0.1", port))


def test_postgres_starts_on_another_port_when_its_port_is_taken(taken_first: int) -> None:
    import psycopg

    from pg_fixture import running_postgres

    with running_postgres() as server:
        assert f":{taken_first}/" not in server.dsn
        with psycopg.connect(server.dsn) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)


def test_a_real_server_starts_on_another_port_when_its_port_is_taken(taken_first: int) -> None:
    from realservers.servers import make_docroot

    # A temp dir of its own, as tests/realservers does: nginx's workers must read it.
    with tempfile.TemporaryDirectory(prefix="dustless-rs-") as tmp:
        docroot = make_docroot(Path(tmp), 2, 0)
        _get_from_nginx(docroot, taken_first)


def _get_from_nginx(docroot, taken_first: int) -> None:
    from realservers.servers import running

    with running("nginx", docroot.path) as server:
        assert server.port != taken_first
        with _OPENER.open(f"http://127.0.0.1:{server.port}{docroot.pages[0]}", timeout=30) as r:
            assert r.status == 200
            assert r.headers["Server"].startswith("nginx")


def test_the_shortener_starts_on_another_port_when_its_port_is_taken(
    taken_first: int, tmp_path
) -> None:
    from shortener.conftest import start_server

    server = start_server(f"sqlite:///{tmp_path / 'links.db'}", "--public", "--rate-limit", "0")
    try:
        assert server.port != taken_first
        with _OPENER.open(server.base + "/openapi.json", timeout=30) as r:
            assert r.status == 200
    finally:
        server.stop()
