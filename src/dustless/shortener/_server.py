"""Serving the app with uvicorn, in one process or several (``--workers``).

Each worker is a process with its own event loop, cache, rate-limit buckets and click
batch (seed 003 ch. 8 마무리: the web tier is stateless, so it scales by adding processes).
The configuration reaches the worker processes as JSON in an environment variable because
uvicorn starts them by importing :func:`app_factory`.
"""

from __future__ import annotations

import asyncio
import gc
import os
import socket

import uvicorn

from dustless.errors import InvalidOption

from ._app import ShortenerApp, create_app
from ._config import ShortenerConfig
from ._open import open_store

__all__ = ["CONFIG_ENV", "app_factory", "serve"]

CONFIG_ENV = "DUSTLESS_SHORTENER_CONFIG"


def app_factory() -> ShortenerApp:
    """The app of a worker process, from the configuration its parent put in the environment."""
    text = os.environ.get(CONFIG_ENV)
    app = create_app(ShortenerConfig.from_json(text) if text else ShortenerConfig())
    # Everything imported so far lives as long as the process: move it out of the
    # collector's sight, so full collections only walk what requests created (the cache).
    # Garbage-collector pauses showed in the p99 of cold-code redirects.
    gc.collect()
    gc.freeze()
    return app


def _check_listen(host: str, port: int) -> None:
    """Bind and release the address as uvicorn will, so a port in use is one line of ours.

    (uvicorn would log ``[Errno 98]`` and exit 3 — after the schema was prepared.) Another
    process may still take the port in between; uvicorn then reports it as before.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InvalidOption(f"cannot listen on {host}:{port}: {reason}") from None


async def _prepare(config: ShortenerConfig) -> None:
    # Create or migrate the schema once, in the parent, so that N workers do not race on
    # an empty database and a bad --db fails with one line before any worker starts.
    store = await open_store(config.db, durable=config.durable)
    await store.close()


def serve(
    config: ShortenerConfig,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int | None = None,
    log_level: str = "info",
) -> None:
    """Serve until interrupted. ``workers`` defaults to the number of cores."""
    _check_listen(host, port)
    if config.blocklist:
        from ._validate import Blocklist

        Blocklist.from_file(config.blocklist)  # fail now, with one line, if it is unreadable
    asyncio.run(_prepare(config))
    os.environ[CONFIG_ENV] = config.to_json()
    uvicorn.run(
        "dustless.shortener._server:app_factory",
        factory=True,
        host=host,
        port=port,
        workers=workers or os.cpu_count() or 1,
        # Proxy headers are our business (ClientResolver, only from --trust-proxy hosts).
        proxy_headers=False,
        server_header=False,
        access_log=False,
        log_level=log_level,
        lifespan="on",
    )
