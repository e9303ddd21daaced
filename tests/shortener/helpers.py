"""Helpers the shortener tests import (``from shortener.helpers import …``)."""

from __future__ import annotations

from dustless.shortener import ShortenerConfig


def open_config(**settings: object) -> ShortenerConfig:
    """A configuration in which anyone may create links and read statistics (--public
    --public-stats): for the tests of what a link does, not of who may make one."""
    return ShortenerConfig(**{"public": True, "public_stats": True, **settings})  # type: ignore[arg-type]


async def make_key(store: object, name: str, admin: bool = False) -> str:
    """A new API key stored in ``store`` (as ``dustless shortener key create`` does)."""
    import time

    from dustless.shortener._auth import hash_key, new_key

    key = new_key()
    await store.add_key(name, hash_key(key), admin, time.time())  # type: ignore[attr-defined]
    return key


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def post(srv: object, body: object, key: str | None = None, **headers: str) -> tuple:
    """POST ``body`` as JSON to the create endpoint; (status, JSON answer, headers)."""
    import json

    sent = {"Content-Type": "application/json", **headers}
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with srv.session.post(  # type: ignore[attr-defined]
        srv.base + "/api/v1/data/shorten",  # type: ignore[attr-defined]
        data=data,
        headers=sent,
    ) as resp:
        return resp.status, await resp.json(content_type=None), resp.headers


async def get_json(srv: object, path: str, key: str | None = None, **headers: str) -> tuple:
    """GET ``path``; (status, JSON answer, headers)."""
    sent = dict(headers)
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    async with srv.session.get(  # type: ignore[attr-defined]
        srv.base + path,  # type: ignore[attr-defined]
        headers=sent,
        allow_redirects=False,
    ) as resp:
        return resp.status, await resp.json(content_type=None), resp.headers
