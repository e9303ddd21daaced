"""Redirects to the same identity: the same document, not a duplicate.

A redirect target goes through the normalizer and URL-seen like any link. But
when the policy — or a learned rule — already maps the redirecting URL to the target's
identity (``/dir`` → 301 ``/dir/`` under ``add-trailing-slash`` or a learned ``addSlash``;
``www.h/x`` → 301 ``h/x`` under ``remove-www`` or a learned ``hostRedirect``, seed 001),
URL-seen answers "seen" for the very URL whose answer was only a pointer: the document would
be lost. Such a target is fetched under a *derived* identity of the same URL row family,
``IDENTITY redirect-N`` (a space never occurs in a normalized URL), where ``N`` counts the
hops. A chain or loop of same-identity redirects ends after :data:`MAX_HOPS` (as RFC 9309
§2.3.1.2 bounds robots.txt redirects at five); the last fetch records why.
"""

from __future__ import annotations

from dataclasses import dataclass

from dustless.crawl.discover import Candidate, Discovery, fetch_form
from dustless.crawl.spellings import base_of
from dustless.errors import InvalidURL
from dustless.frontier import QueuedURL
from dustless.kinds import LinkKind
from dustless.url import authority_of

__all__ = ["MAX_HOPS", "SameIdentity", "base_identity", "derived_identity", "same_identity"]

MAX_HOPS = 5
_MARK = " redirect-"


def derived_identity(base: str, hop: int) -> str:
    """The identity of the ``hop``-th same-identity redirect target of ``base``."""
    return f"{base}{_MARK}{hop}"


def base_identity(identity: str) -> tuple[str, int]:
    """``(base identity, hops)``; a plain identity has 0 hops."""
    head, sep, tail = identity.rpartition(_MARK)
    if sep and tail.isdigit():
        return head, int(tail)
    return identity, 0


@dataclass(frozen=True, slots=True)
class SameIdentity:
    """The verdict on a redirect whose target has the redirecting URL's identity.

    ``candidate``: the target to queue (under its derived identity); ``None`` when the chain
    is too long, and then ``error`` says so (it goes into the fetch row).
    """

    candidate: Candidate | None
    error: str | None = None


def same_identity(d: Discovery, item: QueuedURL, location: str) -> SameIdentity | None:
    """``None``: an ordinary redirect (the caller discovers the target as a link)."""
    target = fetch_form(location)
    if d.filter.reject(target, 0) is not None:
        return None
    try:
        identity = d.identity(target)
        if identity != d.identity(item.url):
            return None
    except InvalidURL:
        return None
    if item.identity and base_of(base_identity(item.identity)[0])[0] != identity:
        # Stored under another identity, before a rule learned during the crawl gave it
        # this one (crawl/learn.py): the target is an ordinary link, and URL-seen decides
        # whether its document is already in.
        return None
    hops = 0
    if item.kind is LinkKind.REDIRECT:  # itself a redirect target: maybe a derived identity
        identity, hops = base_identity(item.identity)
    if hops >= MAX_HOPS:
        return SameIdentity(
            None, f"same-identity redirect not followed: more than {MAX_HOPS} hops (a loop?)"
        )
    # The same document: it keeps the party, the depth and the site of the URL that
    # redirected (a redirect is no link, seed 004 §2 counts depth in links).
    site = d.site_of_host(item.host)
    cand = Candidate(
        target,
        derived_identity(identity, hops + 1),
        authority_of(target),
        site,
        item.depth,
        LinkKind.REDIRECT,
        item.seed_id or None,
    )
    return SameIdentity(cand)
