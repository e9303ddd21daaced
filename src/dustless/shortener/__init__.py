"""The URL shortener of seed 003 ch. 8: base62 codes, a Starlette service, its store.

Public names::

    create_app(config, store=None) -> ShortenerApp     # the ASGI app
    ShortenerConfig                                    # every setting, typed
    serve(config, host, port, workers)                 # uvicorn, one process per worker
    open_store(db) -> Store                            # sqlite:///PATH or postgresql://…
    Codec                                              # keyed id <-> 7-char base62 code
"""

from __future__ import annotations

from ._app import ShortenerApp, create_app
from ._codes import CODE_LENGTH, Codec, base62_decode, base62_encode
from ._config import ShortenerConfig
from ._model import AliasTaken, Link, LinkStats, NewLink, Redirect
from ._open import open_store
from ._server import serve
from ._store import DEFAULT_DB, Store
from ._validate import Blocklist, Rejected, UrlChecker

__all__ = [
    "CODE_LENGTH",
    "DEFAULT_DB",
    "AliasTaken",
    "Blocklist",
    "Codec",
    "Link",
    "LinkStats",
    "NewLink",
    "Redirect",
    "Rejected",
    "ShortenerApp",
    "ShortenerConfig",
    "Store",
    "UrlChecker",
    "base62_decode",
    "base62_encode",
    "create_app",
    "open_store",
    "serve",
]
