"""The crawl's settings as one typed, immutable value (CONVENTIONS §5: typed objects, not
settings strings). The CLI builds it; ``crawl/_build.py`` alone reads it, and gives each
part of the crawl the plain values it uses (the config itself builds nothing); the store
keeps it as JSON in the batch row so that ``--resume`` continues with the very same settings.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from dustless import DEFAULT_USER_AGENT
from dustless.crawl.filter import UrlFilter
from dustless.crawl.scope import Scope
from dustless.errors import InvalidOption

__all__ = ["DEFAULT_USER_AGENT", "CrawlConfig"]


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    """Everything ``dustless crawl`` was asked to do. Defaults are documented in
    ``docs/crawling.md``; the politeness ones are gentler than Scrapy's and much faster than
    seed 004's (30 s and 10 × the last download time, §2)."""

    seeds: tuple[str, ...] = ()
    # The seeds the user typed on the command line: only these exempt their hosts and
    # addresses from the address policy (``crawl/net.py``). ``None`` (the API, and crawls
    # stored before this field existed): every seed was given on purpose. A ``--seeds`` file
    # may be a previous crawl's ``seeds.out.txt``, full of hosts a hostile page named, so its
    # lines never vouch for a private address.
    trusted_seeds: tuple[str, ...] | None = None
    policy: str = "standard"  # identity of a URL (what URL-seen compares); ARCHITECTURE
    resolve: tuple[str, ...] = ()  # "NAME:IP", NAME may be "*.test"
    scope: Scope = Scope.HOST
    max_depth: int = 5  # --max-depth's default (docs/crawling.md)
    max_pages: int | None = None
    max_pages_per_site: int | None = None
    max_sites: int | None = None
    concurrency: int = 32
    delay: float = 1.0  # seconds between two requests to one host, at least
    delay_factor: float = 2.0  # × the last fetch time (004 §2's l-time rule)
    max_crawl_delay: float = 30.0  # robots.txt Crawl-delay honoured up to this
    backoff: float = 5.0  # after server trouble: extra wait, doubled each time
    max_failures: int = 5  # failures in a row before a host is given up
    user_agent: str = DEFAULT_USER_AGENT
    allow_ip: tuple[str, ...] = ()
    deny_ip: tuple[str, ...] = ()
    allow_private: bool = False
    ca_file: str | None = None  # --ca-file: a PEM bundle of CAs trusted besides the system's
    max_bytes: int = 2 * 1024 * 1024  # seed 004 §3's limits: 2 MiB, 5 s without data
    stall_timeout: float = 5.0
    connect_timeout: float = 10.0
    total_timeout: float = 30.0
    max_url_length: int = 255  # 004 §3
    deny_patterns: tuple[str, ...] = ()
    # Learned rules / pattern scripts (absolute paths, seed 002), reloaded on --resume.
    rules: tuple[str, ...] = ()  # --rules: site-rules for identities only
    scripts: tuple[str, ...] = ()  # --script: also filtering, javascript links, priorities
    # URL sources (docs/sitemaps.md): each host's sitemaps (robots.txt ``Sitemap:`` lines, else
    # /sitemap.xml) and the feeds pages announce, read as their own URL kinds. Indexes are
    # followed ``sitemap_depth`` levels below what robots.txt lists (the protocol allows one;
    # two tolerates nesting seen in the wild), at most ``max_sitemaps`` sitemaps a host.
    sitemaps: bool = False
    feeds: bool = False
    sitemap_depth: int = 2
    max_sitemaps: int = 1000
    commit_interval: float = 1.0  # the store records fetches at least this often (crash safety)
    # Many machines: seconds a host lease lasts unrenewed — how long a killed worker's hosts
    # wait before another worker takes them over (renewed every quarter of it).
    lease_ttl: float = 60.0
    # Soft 404s (crawl/soft404.py): no random missing path is requested per host (the
    # classification by "not found" text stays).
    no_soft404_probe: bool = False
    # Spellings of one identity fetched at most, the first included (crawl/spellings.py).
    spelling_tries: int = 3
    # Learning while crawling (crawl/learn.py, docs/learning.md): each host's URL rules from
    # its content, redirects and canonical links, with the budget of rules learn.
    learn: bool = False
    max_fp: float = 0.01
    min_support: int = 2
    progress: bool = True
    # How WARC records store bodies (store/_warc.py BODIES): as the server sent them
    # (content-coded) or decoded. One way for a crawl's every batch: revisits compare
    # payload digests. A crawl stored before this field existed is "decoded" (from_json).
    warc_bodies: str = "as-sent"
    # What the crawl keeps (``--store``): "warc", the crawl DB and WARC files in its
    # directory; "none", nothing but seeds.out.txt — the frontier and URL-seen in memory
    # (docs/crawling.md, "Crawling without storing").
    store: str = "warc"

    def __post_init__(self) -> None:
        for name in ("max_pages", "max_pages_per_site", "max_sites"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InvalidOption(f"--{name.replace('_', '-')} must be >= 1, not {value}")
        if self.max_depth < 0:
            raise InvalidOption(f"--max-depth must be >= 0, not {self.max_depth}")
        if not 1 <= self.concurrency <= 10_000:
            raise InvalidOption(f"--concurrency must be in 1..10000, not {self.concurrency}")
        for name in ("delay", "delay_factor", "max_crawl_delay", "backoff"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise InvalidOption(f"--{name.replace('_', '-')} must be >= 0, not {value}")
        if not 1 <= self.spelling_tries <= 8:
            raise InvalidOption(f"--spelling-tries must be in 1..8, not {self.spelling_tries}")
        if self.sitemap_depth < 0:
            raise InvalidOption(f"--sitemap-depth must be >= 0, not {self.sitemap_depth}")
        if self.max_sitemaps < 1:
            raise InvalidOption(f"--max-sitemaps must be >= 1, not {self.max_sitemaps}")
        if not 0.0 <= self.max_fp <= 1.0:
            raise InvalidOption(f"--max-fp must be a fraction in [0, 1], not {self.max_fp}")
        if self.min_support < 1:
            raise InvalidOption(f"--min-support must be >= 1, not {self.min_support}")
        if self.learn and self.policy == "google-safebrowsing":
            raise InvalidOption(
                "--learn needs a policy of steps: google-safebrowsing is a fixed pipeline"
            )
        if not self.user_agent.strip():
            raise InvalidOption("--user-agent must not be empty")
        if not (self.lease_ttl > 0 and math.isfinite(self.lease_ttl)):
            raise InvalidOption(f"--lease-ttl must be > 0 seconds, not {self.lease_ttl}")
        if self.warc_bodies not in ("as-sent", "decoded"):
            raise InvalidOption(
                f"--warc-bodies must be as-sent or decoded, not {self.warc_bodies!r}"
            )
        if self.store not in ("warc", "none"):
            raise InvalidOption(f"--store must be warc or none, not {self.store!r}")
        if not 0 < self.commit_interval <= 1.0:
            raise InvalidOption("commit interval must be in (0, 1] s: a crash repeats at most 1 s")
        # The deny patterns and the URL length: the filter's own checks (the crawl's filter
        # is made in crawl/_build.py).
        UrlFilter(
            max_length=self.max_url_length,
            max_depth=self.max_depth,
            deny_patterns=self.deny_patterns,
        )

    def trusted(self) -> tuple[str, ...]:
        """The seeds whose hosts and addresses the crawl was pointed at on purpose."""
        return self.seeds if self.trusted_seeds is None else self.trusted_seeds

    def with_(self, **changes: Any) -> CrawlConfig:
        return replace(self, **changes)

    # -- JSON (kept in the batch row for --resume) -----------------------------------------

    def to_json(self) -> str:
        data = asdict(self)
        data["scope"] = self.scope.value
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CrawlConfig:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InvalidOption(f"stored crawl settings are not JSON: {exc}") from None
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {k: v for k, v in data.items() if k in known}
        # Settings stored before --warc-bodies: that crawl's records hold decoded bodies.
        kwargs.setdefault("warc_bodies", "decoded")
        if "scope" in kwargs:
            kwargs["scope"] = Scope(kwargs["scope"])
        if kwargs.get("trusted_seeds") is not None:
            kwargs["trusted_seeds"] = tuple(kwargs["trusted_seeds"])
        for name in (
            "seeds",
            "resolve",
            "allow_ip",
            "deny_ip",
            "deny_patterns",
            "rules",
            "scripts",
        ):
            if name in kwargs:
                kwargs[name] = tuple(kwargs[name])
        return cls(**kwargs)
