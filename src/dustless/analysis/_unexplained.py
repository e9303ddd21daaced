"""Soft 404s read from content, and the duplicate fetches no factor explains (issue 25).

A soft 404 — one "not found" page answered with 200 to every broken link — is no document:
counted as one, it makes a factor's two broken spellings a duplicate download and a merge of
a broken link with a page a loss. The crawler's own ``soft404`` state says so where it
exists (``Observations.soft404``); here a document served under many unrelated paths is read
as one. Then the "unexplained duplicates" line of ``evaluate`` (docs/evaluation.md).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dustless.analysis._evaltypes import Unexplained
from dustless.analysis._factors import composite_key
from dustless.analysis._metrics import (
    Factor,
    MethodSpec,
    unexplained_duplicates,
)
from dustless.url import authority_of

if TYPE_CHECKING:
    from dustless.analysis._evaluate import Observations

__all__ = ["SOFT404_PATHS", "soft404_documents", "unexplained", "without_soft404"]


#: A document served under more than this many paths of one host that no factor relates is
#: read as a soft 404. A "not found" page answers every broken link, each a path of its own;
#: a page has one path once the factors have merged its spellings, and a copy of it on
#: another site counts on that site. (``SOFT404_SPELLINGS``, the unexplained line's older
#: guess by spellings, took a page with many unexplained parameters for one, and missed a
#: small site's few broken links.)
SOFT404_PATHS = 2


def soft404_documents(obs: Observations, key: Callable[[str], str]) -> set[str]:
    """The documents read as soft 404s: served by more than :data:`SOFT404_PATHS` paths of
    one host that no factor relates (the paths of their composite forms differ) — one "not
    found" page answered with 200 to every broken link (docs/evaluation.md)."""
    paths: dict[tuple[str, str], set[str]] = {}
    members = obs.members
    out: set[str] = set()
    for u, h in obs.outcome.items():
        if (
            h is None
            or h in out
            or u in obs.redirects
            or (members is not None and u not in members)
        ):
            continue
        form = key(u)
        q = form.find("?")
        path = form if q < 0 else form[:q]
        seen = paths.setdefault((h, authority_of(path)), set())
        seen.add(path)
        if len(seen) > SOFT404_PATHS:
            out.add(h)
    return out


def without_soft404(obs: Observations, key: Callable[[str], str]) -> Observations:
    """``obs`` with the soft 404s read from content as no document (issue 25: a soft 404 is
    no document for loss or redundancy): a factor whose sets hold a site's "not found" page
    under two broken spellings would otherwise count it as a duplicate download, and a
    method that merges a broken link with a page as a loss of it."""
    soft = soft404_documents(obs, key)
    if not soft:
        return obs
    outcome = {u: (None if h in soft else h) for u, h in obs.outcome.items()}
    fragment = {u: (None if h in soft else h) for u, h in obs.fragment_outcome.items()}
    members = obs.members
    downloaded = sum(
        1 for u, h in outcome.items() if h is not None and (members is None or u in members)
    )
    return dataclasses.replace(
        obs,
        outcome=outcome,
        fragment_outcome=fragment,
        downloaded=downloaded,
        soft404=obs.soft404 | {u for u, h in obs.outcome.items() if h in soft},
        soft404_classes=obs.soft404_classes + len(soft),
    )


def unexplained(obs: Observations, factors: Sequence[Factor]) -> Unexplained:
    """The duplicate fetches of the crawl (by the judge: content, or the truth) that no
    factor's method merges. A redirect downloaded nothing itself and stays out (its target
    is the fetch that counts)."""
    members = obs.members
    documents = [
        (u, h)
        for u, h in obs.outcome.items()
        if h is not None and u not in obs.redirects and (members is None or u in members)
    ]
    # Merges chain through URLs the crawl never fetched too: the composite form (every
    # factor's key in turn) relates `/docs/` and `/docs/index.html?a=1&b=2`.
    composite = Factor("all factors", (MethodSpec("merge", composite_key(factors)),))
    # The soft 404s are read once, by paths (`_without_soft404`), and are no documents here
    # already: no second guess by spellings, which took a page with many parameter
    # spellings no factor explains for a "not found" page and hid its duplicates.
    c = unexplained_duplicates(documents, [*factors, composite], soft404_spellings=sys.maxsize)
    return Unexplained(
        duplicates=c.duplicates,
        explained=c.duplicates - c.unexplained,
        unexplained=c.unexplained,
        unexplained_share=c.unexplained / c.duplicates if c.duplicates else 0.0,
        soft404_classes=c.soft404_classes + obs.soft404_classes,
        soft404_fetches=c.soft404_fetches + len(obs.soft404),
        examples=c.examples,
    )
