"""The service configuration: one typed value, passed to every worker process as JSON."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from dustless.errors import InvalidOption

from .model import Redirect
from .store import DEFAULT_DB

__all__ = ["ShortenerConfig"]


@dataclass(frozen=True, slots=True)
class ShortenerConfig:
    db: str = DEFAULT_DB
    base_url: str = "http://127.0.0.1:8000"  # what short URLs start with (no trailing slash)
    # Seed 003 ch. 8: 302 sends every click through us (full analytics); 301 is cached by
    # browsers (less load, repeat clicks uncounted). Full stats are the default here.
    redirect: Redirect = Redirect.FOUND
    policy: str = "rfc3986"  # which long URLs count as "the same" (never changes the target)
    blocklist: str | None = None  # path of a Safe Browsing expressions file
    rate_limit: float = 1.0  # creates per second per client after the burst; 0 disables
    burst: int = 100
    trusted_proxies: tuple[str, ...] = ()  # IPs/CIDRs whose X-Forwarded-For is believed
    own_hosts: tuple[str, ...] = ()  # more host names that reach this service
    cache_size: int = 100_000  # hot codes kept per worker
    click_interval: float = 1.0  # seconds between click batches
    durable: bool = True  # fsync every commit (SQLite synchronous=FULL)

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise InvalidOption(f"--base-url must start with http:// or https://: {self.base_url}")
        if self.rate_limit < 0:
            raise InvalidOption("--rate-limit must be >= 0 (0 disables it)")
        if self.burst < 1:
            raise InvalidOption("the rate-limit burst must be >= 1")
        if self.click_interval <= 0:
            raise InvalidOption("--click-interval must be > 0")

    @property
    def short_prefix(self) -> str:
        return self.base_url.rstrip("/") + "/"

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["redirect"] = int(self.redirect)
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> ShortenerConfig:
        data = json.loads(text)
        data["redirect"] = Redirect(data["redirect"])
        data["trusted_proxies"] = tuple(data["trusted_proxies"])
        data["own_hosts"] = tuple(data["own_hosts"])
        return cls(**data)
