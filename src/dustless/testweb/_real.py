"""The ``real`` profile: sites of real documents, their behaviours drawn from the seed.

``real_sites(cfg)`` reads the corpus (``_corpus.py``: Debian's documentation packages,
downloaded into the cache when missing), draws one plan per site (``_behaviours.py``) and
builds the sites (``_realsites.py``). Same seed, sites, pages and corpus → byte-identical
sites. docs/testweb.md describes the behaviours and the truth's fourth column.
"""

from __future__ import annotations

from dustless.errors import InvalidOption
from dustless.testweb._behaviours import draw_plans
from dustless.testweb._core import Site, WebConfig
from dustless.testweb._corpus import PACKAGES, cache_dir, load_corpus
from dustless.testweb._realsites import RealSite

__all__ = ["real_sites"]


def real_sites(cfg: WebConfig) -> list[Site]:
    corpus = load_corpus()
    if not corpus.packages:
        names = " ".join(p.name for p in PACKAGES)
        raise InvalidOption(
            f"--profile real needs one of Debian's documentation packages ({names}): none is "
            f"installed, none in {cache_dir()}, and apt-get download failed "
            "(no network, or no package lists: apt-get update)"
        )
    plans = draw_plans(cfg.seed, max(1, cfg.sites), cfg.pages_per_site, corpus)
    sites: list[Site] = []
    for k, plan in enumerate(plans):
        site = RealSite(cfg, plan, corpus)
        site.address = cfg.addresses[k % len(cfg.addresses)]
        sites.append(site)
    return sites
