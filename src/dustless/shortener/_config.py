"""The service configuration: one typed value, passed to every worker process as JSON."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from dustless.errors import InvalidOption

from ._model import Redirect
from ._store import DEFAULT_DB

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
    rate_limit: float = 1.0  # creates per second per API key after the burst; 0 disables
    burst: int = 100
    # Creation without a key (--public): allowed only when set, and limited harder, per
    # client address: this share of rate_limit, with a burst of public_burst.
    public: bool = False
    public_rate_factor: float = 0.1
    public_burst: int = 10
    public_stats: bool = False  # anyone may read any link's statistics (--public-stats)
    # 404 answers per client address (probing codes): a burst, then this many per second.
    miss_rate_limit: float = 1.0
    miss_burst: int = 30
    allow_private_targets: bool = False  # long URLs may point to private (not loopback) hosts
    resolve_targets: bool = True  # look target names up to refuse those that lead back here
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
        if self.miss_rate_limit < 0 or self.miss_burst < 1:
            raise InvalidOption("--miss-limit must be >= 0 (0 disables it)")
        if not 0 < self.public_rate_factor <= 1 or self.public_burst < 1:
            raise InvalidOption("the public rate limit must be a share in (0, 1] of --rate-limit")

    @property
    def short_prefix(self) -> str:
        return self.base_url.rstrip("/") + "/"

    @property
    def base_host(self) -> str:
        """The host of ``base_url`` (what counts as this service's own name)."""
        authority = self.base_url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
        if authority.startswith("["):
            return authority.split("]", 1)[0] + "]"
        return authority.rsplit(":", 1)[0]

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
