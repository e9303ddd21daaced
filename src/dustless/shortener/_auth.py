"""API keys: made at random, shown once, stored as SHA-256, read from two headers.

A key is 32 random bytes (``dls_`` + URL-safe base64): guessing one is hopeless, so a fast
hash is the right one to store (as GitHub does for its tokens) — a slow password hash would
only make every create slower. A request names its key with ``Authorization: Bearer KEY``
(RFC 6750 §2.1) or ``X-Api-Key: KEY`` (Shlink's header).

Each worker remembers the keys it checked for a few seconds, so a burst of creates asks the
database once; a revoked key stops working on every instance within that time.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping

from ._model import ApiKey

__all__ = ["KEY_PREFIX", "KeyCache", "hash_key", "new_key", "presented_key"]

KEY_PREFIX = "dls_"
KEY_TTL = 5.0  # seconds a checked key (or an unknown one) is remembered per worker
_MAX_REMEMBERED = 10_000
_MAX_KEY_LENGTH = 200


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request carries, or None; ``""`` for a header that names no usable key."""
    auth = headers.get("authorization")
    if auth is not None:
        scheme, _, token = auth.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or len(token) > _MAX_KEY_LENGTH:
            return ""
        return token
    key = headers.get("x-api-key")
    if key is not None:
        key = key.strip()
        return key if key and len(key) <= _MAX_KEY_LENGTH else ""
    return None


class KeyCache:
    """Key hash → the stored key (or None: unknown), each remembered ``ttl`` seconds."""

    def __init__(
        self, lookup: Callable[[str], Awaitable[ApiKey | None]], ttl: float = KEY_TTL
    ) -> None:
        self._lookup = lookup
        self._ttl = ttl
        self._seen: OrderedDict[str, tuple[float, ApiKey | None]] = OrderedDict()

    async def get(self, key: str, now: float) -> ApiKey | None:
        """The active key ``key`` is, or None when it is unknown or revoked."""
        digest = hash_key(key)
        seen = self._seen.get(digest)
        if seen is None or now - seen[0] > self._ttl:
            found = await self._lookup(digest)
            seen = (now, found)
            self._seen[digest] = seen
            self._seen.move_to_end(digest)
            if len(self._seen) > _MAX_REMEMBERED:
                self._seen.popitem(last=False)
        key_row = seen[1]
        return key_row if key_row is not None and key_row.active else None
