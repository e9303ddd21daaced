"""Start ``dustless testweb`` as a subprocess for tests (used by ``tests/conftest.py``).

The server runs in its own process, as a crawler's real peer would: a crawl under test
cannot share (or block) its event loop. ``start_testweb`` waits for the ``serving`` line on
stdout (no sleeps), then asks ``/__testweb/info`` for the hosts and seeds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy
START_TIMEOUT = 60.0


@dataclass
class TestWeb:
    """A running test web. ``base_url("site1.test")`` → ``http://site1.test:PORT``."""

    __test__ = False

    port: int
    hosts: list[str]
    seeds: list[str]
    truth_path: Path
    resolve_args: list[str]
    profile: str
    seed: int
    address: str = "127.0.0.1"
    #: site name -> {"hosts", "personality", "www", "address"}
    sites: dict[str, Any] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    output: list[str] = field(default_factory=list, repr=False)
    reader: threading.Thread | None = field(default=None, repr=False)

    def base_url(self, host: str) -> str:
        return f"http://{host}:{self.port}"

    def url(self, host: str, path: str = "/") -> str:
        return self.base_url(host) + path

    def site(self, personality: str, www: str | None = None) -> str:
        """The host of the first site with ``personality`` (and ``www`` mode)."""
        for info in self.sites.values():
            if info["personality"] == personality and www in (None, info["www"]):
                return str(info["hosts"][0])
        raise LookupError(f"no {personality} site (www={www}) in this test web")

    @property
    def control_url(self) -> str:
        return f"http://{self.address}:{self.port}/__testweb"

    def _get(self, what: str) -> Any:
        with _OPENER.open(f"{self.control_url}/{what}", timeout=10) as resp:
            return json.loads(resp.read())

    def stats(self) -> dict[str, Any]:
        return dict(self._get("stats"))

    def reset(self) -> None:
        self._get("reset")

    def day(self) -> int:
        return int(self._get("day")["day"])

    def set_day(self, n: int) -> None:
        self._get(f"day?set={n}")

    def truth(self) -> list[Any]:
        from dustless.testweb import read_truth

        return read_truth(self.truth_path)

    def terminate(self) -> None:
        """Ask the server to stop without waiting for it (``stop`` waits)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()

    def stop(self) -> None:
        proc = self.process
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.reader is not None:
            self.reader.join(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
        self.process = None


def start_testweb(
    tmp_dir: Path,
    *,
    profile: str = "mixed",
    seed: int = 1,
    sites: int = 12,
    pages_per_site: int = 30,
    day: int = 0,
    extra_args: tuple[str, ...] = (),
) -> TestWeb:
    tmp_dir.mkdir(parents=True, exist_ok=True)
    truth = tmp_dir / f"truth-{profile}-{seed}-{sites}-{pages_per_site}.tsv"
    cmd = [
        sys.executable, "-m", "dustless", "testweb", "--port", "0", "--truth", str(truth),
        "--profile", profile, "--seed", str(seed), "--sites", str(sites),
        "--pages-per-site", str(pages_per_site), "--day", str(day), *extra_args,
    ]  # fmt: skip
    stderr = (tmp_dir / f"{truth.stem}.stderr").open("wb")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, env=env)
    stderr.close()
    lines: list[str] = []
    serving = threading.Event()

    def drain() -> None:
        # Reads every line, so the server never blocks on a full pipe; EOF also wakes us.
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.append(raw.decode().rstrip("\n"))
            if lines[-1].startswith("serving "):
                serving.set()
        serving.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    if not serving.wait(START_TIMEOUT) or not lines or not lines[0].startswith("serving "):
        proc.kill()
        proc.wait()
        reader.join(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
        err = (tmp_dir / f"{truth.stem}.stderr").read_text(errors="replace")
        raise RuntimeError(f"dustless testweb did not start: {lines!r}\n{err}")
    address, _, port = lines[0].split()[1].rpartition(":")
    with _OPENER.open(f"http://{address}:{port}/__testweb/info", timeout=10) as resp:
        info = json.loads(resp.read())
    return TestWeb(
        port=int(port),
        hosts=list(info["hosts"]),
        seeds=list(info["seeds"]),
        truth_path=truth,
        resolve_args=list(info["resolve"]),
        profile=profile,
        seed=seed,
        address=address,
        sites=dict(info["sites"]),
        process=proc,
        output=lines,
        reader=reader,
    )


# -- a small HTTP client that reaches every test-web host on loopback -------------------


@dataclass
class Fetched:
    url: str
    status: int
    headers: Any
    body: bytes


class LoopbackClient:
    """``async with LoopbackClient() as c: r = await c.get(url)``: any host → 127.0.0.1.

    Redirects are not followed and bodies are not decompressed unless asked, so tests see
    exactly what the server sent. Every response is read and released (filterwarnings=error).
    """

    def __init__(self, address: str = "127.0.0.1", decompress: bool = True) -> None:
        self.address = address
        self.decompress = decompress
        self.session: Any = None

    async def __aenter__(self) -> LoopbackClient:
        import aiohttp
        from aiohttp.abc import AbstractResolver

        address = self.address

        class _Resolver(AbstractResolver):
            async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[Any]:
                import socket

                return [
                    {"hostname": host, "host": address, "port": port,
                     "family": socket.AF_INET, "proto": 0, "flags": 0}
                ]  # fmt: skip

            async def close(self) -> None:
                return None

        connector = aiohttp.TCPConnector(resolver=_Resolver(), limit=32)
        self.session = aiohttp.ClientSession(connector=connector, auto_decompress=self.decompress)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.session.close()

    async def get(self, url: str, **kwargs: Any) -> Fetched:
        import yarl

        target = yarl.URL(url, encoded=True)  # send the spelling exactly as written
        async with self.session.get(target, allow_redirects=False, **kwargs) as resp:
            body = await resp.read()
            return Fetched(url, resp.status, resp.headers, body)
