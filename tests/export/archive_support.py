"""Helpers for the archive tests: the replay tools' venv, pywb as a server, raw HTTP gets.

pywb and py-wacz live in ``.venv-replay`` (``make install`` builds it; constraints-replay.txt
says why they cannot share ``.venv``). pywb runs as what it is, a server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

import support
from support import CHROMIUM_ARGS, chromium, require

ROOT = Path(__file__).resolve().parents[2]
REPLAY_BIN = ROOT / ".venv-replay" / "bin"


def replay_tool(name: str) -> Path:
    path = REPLAY_BIN / name
    require(path.exists(), f"{path} missing: run `make install` (it builds .venv-replay)")
    return path


@contextmanager
def pywb(root: Path, warc_dir: Path | None = None, index_dir: Path | None = None) -> Iterator[int]:
    """Serve one collection ``crawl`` (the crawl's WARC and index directories) with pywb's
    ``wayback``; yields its port once pywb says it listens. Without directories: the
    collections ``wb-manager`` made in ``root/collections``."""
    wayback = replay_tool("wayback")
    root.mkdir(parents=True, exist_ok=True)
    named = (
        f"collections:\n  crawl:\n    archive_paths: {warc_dir}/\n    index_paths: {index_dir}/\n"
        if warc_dir is not None and index_dir is not None
        else ""
    )
    (root / "config.yaml").write_text(named + "framed_replay: false\n", encoding="utf-8")
    for attempt in range(support.PORT_TRIES):
        port = support.free_port()
        proc = subprocess.Popen(
            [str(wayback), "-p", str(port), "-b", "127.0.0.1", "-t", "2"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            _until_started(proc, port)
            break
        except AssertionError as exc:
            _stop(proc)
            # The other test worker took the port between our pick and pywb's bind: start
            # again on another one (support.free_port).
            if attempt + 1 == support.PORT_TRIES or not support.address_in_use(str(exc)):
                raise
    try:
        yield port
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(10)
    assert proc.stdout is not None
    proc.stdout.close()


def _until_started(proc: subprocess.Popen[str], port: int) -> None:
    """Until pywb says it starts and then accepts a connection; an AssertionError holding
    its output when it exits first."""
    ready = threading.Event()
    output: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if "Starting" in line and str(port) in line:
                ready.set()
        ready.set()  # exited: the wait below sees the process is gone

    threading.Thread(target=read, daemon=True).start()
    assert ready.wait(60), "pywb did not start in 60 s"
    if not any("Starting" in line for line in output):
        proc.wait(10)  # its output ended: it exits
    assert proc.poll() is None, "pywb did not start:\n" + "".join(output)
    _until_listening(proc, port, output)


def _until_listening(proc: subprocess.Popen[str], port: int, output: list[str]) -> None:
    """pywb's server says "Starting" before its socket listens: on a loaded machine the first
    request came too early (connection refused). Ask until it answers a connect."""
    deadline = time.monotonic() + 30
    # pywb itself must hold the socket: a connection could reach whoever took the port before
    # it (support.listens).
    while not support.listens(proc.pid, port):
        assert proc.poll() is None, "pywb exited:\n" + "".join(output)
        assert time.monotonic() < deadline, "pywb did not listen in 30 s"
        time.sleep(0.05)


def get(host: str, port: int, path: str, headers: dict[str, str] | None = None):
    """One GET, no redirect following, no decoding: (status, headers, body)."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


# ReplayWeb.page (npm `replaywebpage`, its static app: index.html, ui.js, sw.js), unpacked by
# `make .replayweb/.installed` at the version the Makefile pins.
REPLAYWEB = ROOT / ".replayweb" / "package"


def replaywebpage() -> Path:
    require(
        (REPLAYWEB / "sw.js").exists(),
        f"{REPLAYWEB} missing: run `make .replayweb/.installed` (npm pack replaywebpage)",
    )
    return REPLAYWEB


@asynccontextmanager
async def static_server(app_dir: Path, files: dict[str, Path]) -> AsyncIterator[str]:
    """Serve ``app_dir`` at / and each of ``files`` at its name, on 127.0.0.1; yields the base
    URL. aiohttp's FileResponse answers Range requests (206), which ReplayWeb.page needs to
    read a WACZ's members in place; Python's http.server does not."""

    def file(path: Path) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handler(_request: web.Request) -> web.StreamResponse:
            return web.FileResponse(path)

        return handler

    app = web.Application()
    for name, path in files.items():
        app.router.add_get("/" + name, file(path))
    app.router.add_get("/", file(app_dir / "index.html"))
    app.router.add_static("/", app_dir)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


class Cdp:
    """The Chrome DevTools protocol over one websocket: ``send`` a command and await its
    answer; events are kept per method for ``event``."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._next = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._events: dict[str, list[dict[str, Any]]] = {}
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for msg in self._ws:
            data = json.loads(msg.data)
            if "id" in data:
                fut = self._waiting.pop(data["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(data)
            else:
                self._events.setdefault(data["method"], []).append(data)
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(ConnectionError("chromium closed the DevTools connection"))

    async def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = fut
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session is not None:
            msg["sessionId"] = session
        await self._ws.send_str(json.dumps(msg))
        answer = await asyncio.wait_for(fut, 60)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return dict(answer["result"])

    async def close(self) -> None:
        self._reader.cancel()
        await self._ws.close()


@asynccontextmanager
async def headless_chromium(profile: Path) -> AsyncIterator[Cdp]:
    """Debian's chromium, headless, with its DevTools on a port it picks (read from
    ``DevToolsActivePort`` in its profile); yields a DevTools connection to the browser.
    Killed in the end, whatever happened."""
    profile.mkdir(parents=True, exist_ok=True)
    proc = await asyncio.create_subprocess_exec(
        chromium(),
        *CHROMIUM_ARGS,
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        "--remote-debugging-address=127.0.0.1",
        "--window-size=1280,900",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    session = aiohttp.ClientSession()
    cdp = None
    try:
        active = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (active.exists() and len(active.read_text().splitlines()) >= 2):
            assert proc.returncode is None, f"chromium exited with {proc.returncode}"
            assert time.monotonic() < deadline, "chromium gave no DevTools port in 60 s"
            await asyncio.sleep(0.1)
        port, path = active.read_text().splitlines()[:2]
        ws = await session.ws_connect(f"ws://127.0.0.1:{port}{path}", max_msg_size=0)
        cdp = Cdp(ws)
        yield cdp
    finally:
        if cdp is not None:
            await cdp.close()
        await session.close()
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


# The text of every same-origin iframe of the page, however deep in shadow roots and frames:
# ReplayWeb.page's UI is web components, and the replayed page is an iframe of one of them.
_FRAMES_JS = r"""
(() => {
  const frames = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.tagName === 'IFRAME') {
        let doc = null;
        try { doc = el.contentDocument; } catch (e) {}
        frames.push({src: el.src, text: doc && doc.body ? doc.body.innerText : null});
        if (doc) walk(doc);
      }
    }
  };
  walk(document);
  return frames;
})()
"""

# The visible text of the page, shadow roots included (what the app shows, errors too).
_SHADOW_TEXT_JS = r"""
(() => {
  const parts = [];
  const walk = (root) => {
    for (const node of root.childNodes) {
      if (node.nodeType === Node.TEXT_NODE) {
        const t = node.textContent.trim();
        if (t) parts.push(t);
      } else if (node.nodeType === Node.ELEMENT_NODE) {
        if (['SCRIPT', 'STYLE'].includes(node.tagName) || !node.checkVisibility()) continue;
        if (node.shadowRoot) walk(node.shadowRoot);
        walk(node);
      }
    }
  };
  walk(document);
  return parts.join('\n');
})()
"""


class Tab:
    """One page of the browser, driven through its DevTools session."""

    def __init__(self, cdp: Cdp, session: str) -> None:
        self.cdp = cdp
        self.session = session

    @classmethod
    async def open(cls, cdp: Cdp) -> Tab:
        target = await cdp.send("Target.createTarget", url="about:blank")
        attached = await cdp.send(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        tab = cls(cdp, attached["sessionId"])
        await tab.send("Page.enable")
        return tab

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        return await self.cdp.send(method, self.session, **params)

    async def evaluate(self, expression: str) -> Any:
        answer = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return answer["result"].get("value")

    async def navigate(self, url: str) -> None:
        await self.send("Page.navigate", url=url)

    async def frames(self) -> list[dict[str, str | None]]:
        return list(await self.evaluate(_FRAMES_JS) or [])

    async def text(self) -> str:
        return str(await self.evaluate(_SHADOW_TEXT_JS) or "")

    async def screenshot(self, path: Path) -> Path:
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    async def until(
        self, check: Callable[[], Awaitable[Any]], what: str, timeout: float = 60
    ) -> Any:
        """Ask ``check`` until it answers something true; fails after ``timeout`` seconds
        with what the page shows (ReplayWeb.page states its loading errors on the page)."""
        deadline = time.monotonic() + timeout
        while not (found := await check()):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{what} not within {timeout} s; the page shows:\n" + (await self.text())[:2000]
                )
            await asyncio.sleep(0.2)
        return found
