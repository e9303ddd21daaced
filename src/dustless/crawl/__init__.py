"""The crawl engine: wires host table, fetcher, extractor, admission and store (I/O).

``run_crawl(CrawlConfig(...), out)`` is what ``dustless crawl`` calls; ``docs/crawling.md``
is the user's view and ``docs/internals.md`` the contract. The pure parts (settings, URL
filter, scope and parties) can be used without starting anything.
"""

from dustless.crawl.config import DEFAULT_USER_AGENT, CrawlConfig
from dustless.crawl.discover import Candidate, Discovery, DiscoveryStats
from dustless.crawl.engine import Crawler, CrawlResult
from dustless.crawl.filter import UrlFilter
from dustless.crawl.progress import CrawlStats, Progress
from dustless.crawl.resume import SEEDS_OUT, write_seeds_out
from dustless.crawl.run import run_crawl
from dustless.crawl.scope import Scope, registrable_domain, site_of

__all__ = [
    "DEFAULT_USER_AGENT",
    "SEEDS_OUT",
    "Candidate",
    "CrawlConfig",
    "CrawlResult",
    "CrawlStats",
    "Crawler",
    "Discovery",
    "DiscoveryStats",
    "Progress",
    "Scope",
    "UrlFilter",
    "registrable_domain",
    "run_crawl",
    "site_of",
    "write_seeds_out",
]
