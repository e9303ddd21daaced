"""Per-client token buckets for link creation, and who "the client" is (pure).

Seed 003 ch. 8 마무리 (처리율 제한 장치): a flood of shorten requests must not take the
service down. Each client gets a bucket of ``burst`` tokens refilled at ``rate`` per second;
a create takes one token, an empty bucket answers ``429`` with ``Retry-After``. Time is
passed in (``now``), so the buckets are tested with a fake clock.

These buckets live in each worker process: with N workers (or N instances) a client spread
over all of them could get up to N times the rate. On PostgreSQL the create buckets are kept
in the database instead (``SharedBuckets``), exact across every instance; the buckets of 404
misses stay here, because a redirect must never wait for the database to be limited.
"""

from __future__ import annotations

import ipaddress
import math
from collections import OrderedDict
from collections.abc import Iterable, Mapping

__all__ = ["ClientResolver", "RateLimiter"]


class RateLimiter:
    """Token buckets keyed by client; ``rate <= 0`` disables limiting."""

    def __init__(self, rate: float = 1.0, burst: int = 100, max_clients: int = 100_000) -> None:
        self.rate = rate
        self.burst = burst
        self._max_clients = max_clients
        # client -> (tokens, last refill time); LRU order so the table cannot grow forever.
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def take(self, client: str, now: float) -> float:
        """Take a token: 0.0 when granted, else the seconds until one is available."""
        if not self.enabled:
            return 0.0
        tokens, last = self._buckets.pop(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + max(0.0, now - last) * self.rate)
        if tokens >= 1.0:
            self._buckets[client] = (tokens - 1.0, now)
            wait = 0.0
        else:
            self._buckets[client] = (tokens, now)
            wait = (1.0 - tokens) / self.rate
        if len(self._buckets) > self._max_clients:
            # Forgetting the least recent client only gives it a full bucket back early.
            self._buckets.popitem(last=False)
        return wait

    def peek(self, client: str, now: float) -> float:
        """The seconds until ``client`` has a token (0.0: it has one); takes nothing."""
        if not self.enabled:
            return 0.0
        bucket = self._buckets.get(client)
        if bucket is None:
            return 0.0
        tokens, last = bucket
        tokens = min(float(self.burst), tokens + max(0.0, now - last) * self.rate)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    @staticmethod
    def retry_after(wait: float) -> str:
        """The ``Retry-After`` value (whole seconds, at least 1) for a wait."""
        return str(max(1, math.ceil(wait)))


class ClientResolver:
    """The client address of a request; proxy headers count only from trusted proxies.

    Without trusted proxies ``X-Forwarded-For`` is ignored: anyone could send it and choose
    their own rate-limit bucket. With them, the client is the right-most address in
    ``X-Forwarded-For`` that is not itself a trusted proxy (each proxy appends the address
    it saw, so everything left of the first untrusted hop may be forged).
    """

    def __init__(self, trusted: Iterable[str] = ()) -> None:
        self._networks = tuple(ipaddress.ip_network(t, strict=False) for t in trusted)

    def _trusted(self, address: str) -> bool:
        if not self._networks:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self._networks)

    def resolve_raw(self, peer: str | None, headers: Iterable[tuple[bytes, bytes]]) -> str:
        """:meth:`resolve` on an ASGI scope's raw headers (the redirect path's form)."""
        client = peer or "unknown"
        if not self._trusted(client):
            return client
        forwarded = b", ".join(v for k, v in headers if k == b"x-forwarded-for")
        return self.resolve(client, {"x-forwarded-for": forwarded.decode("latin-1")})

    def resolve(self, peer: str | None, headers: Mapping[str, str]) -> str:
        client = peer or "unknown"
        if not self._trusted(client):
            return client
        forwarded = headers.get("x-forwarded-for", "")
        for hop in reversed([h.strip() for h in forwarded.split(",") if h.strip()]):
            if not self._trusted(hop):
                return hop
            client = hop
        return client
