"""The crawl engine: wires host table, fetcher, extractor, admission and store (I/O).

``run_crawl(CrawlConfig(...), out)`` is what ``dustless crawl`` calls; ``docs/crawling.md``
is the user's view and ``docs/internals.md`` the contract. The pure parts (settings, URL
filter, scope and parties) can be used without starting anything.

The names below are imported when first used (PEP 562), not with the package: importing
``dustless.crawl.config`` to check a command line must not pull in the engine, the fetcher and
the store, or ``dustless crawl`` would take that long to reject a bad argument.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dustless.crawl._build import CrawlSetup, build_parts
    from dustless.crawl.config import DEFAULT_USER_AGENT, CrawlConfig
    from dustless.crawl.discover import Candidate, Discovery, DiscoveryStats
    from dustless.crawl.engine import Crawler, CrawlResult
    from dustless.crawl.filter import UrlFilter
    from dustless.crawl.progress import Progress, RunCounters
    from dustless.crawl.resume import SEEDS_OUT, write_seeds_out
    from dustless.crawl.run import run_crawl
    from dustless.crawl.scope import Scope, registrable_domain, site_of

# public name -> the module that defines it
_WHERE = {
    "DEFAULT_USER_AGENT": "config",
    "CrawlConfig": "config",
    "Candidate": "discover",
    "Discovery": "discover",
    "DiscoveryStats": "discover",
    "Crawler": "engine",
    "CrawlResult": "engine",
    "CrawlSetup": "_build",
    "build_parts": "_build",
    "run_crawl": "run",
    "UrlFilter": "filter",
    "RunCounters": "progress",
    "Progress": "progress",
    "SEEDS_OUT": "resume",
    "write_seeds_out": "resume",
    "Scope": "scope",
    "registrable_domain": "scope",
    "site_of": "scope",
}

__all__ = [
    "DEFAULT_USER_AGENT",
    "SEEDS_OUT",
    "Candidate",
    "CrawlConfig",
    "CrawlResult",
    "CrawlSetup",
    "Crawler",
    "Discovery",
    "DiscoveryStats",
    "Progress",
    "RunCounters",
    "Scope",
    "UrlFilter",
    "build_parts",
    "registrable_domain",
    "run_crawl",
    "site_of",
    "write_seeds_out",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'dustless.crawl' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"dustless.crawl.{module}"), name)
    globals()[name] = value  # once found, a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
