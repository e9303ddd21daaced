"""Identities a host alias made one spelling hold for another host's, given back.

A host alias (``hostRedirect www.h → h``) gives ``www.h/x`` the identity ``h/x``. Admitted
first, ``www.h/x`` *holds* it: ``h/x``, linked later, is dropped by URL-seen as a repeat, its
spelling kept only (``crawl/spellings.py``). When the alias is retracted, or a spot check
finds two documents in that part of the site (a ``www`` twin differing in one subtree), each
holder gets its own identity back and the spellings it kept out are admitted again, with
what the alias merged there: learning costs fetches, never a page (docs/learning.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from dustless.crawl._orders import Forget, Order, Readmit
from dustless.crawl.discover import Discovery
from dustless.crawl.progress import RunCounters
from dustless.errors import InvalidURL
from dustless.frontier import QueuedURL
from dustless.rules import directory_of, in_part
from dustless.store import AdmitURL, CrawlStore, StoredURL, URLState
from dustless.url import authority_of

if TYPE_CHECKING:
    from dustless.crawl.hosts import HostTable
    from dustless.crawl.spellings import Spellings

__all__ = ["QUEUED_AT_ONCE", "HeldIdentities", "within"]

QUEUED_AT_ONCE = 20_000  # queued URLs of a host re-keyed at once


def within(url: str, directory: str) -> bool:
    """True if ``url`` lies in the distrusted ``directory`` (``in_part``)."""
    return in_part(directory_of(url), directory)


class HeldIdentities:
    """The part of ``crawl.learn.Learning`` that gives held identities back."""

    store: CrawlStore
    discovery: Discovery
    stats: RunCounters
    spellings: Spellings | None
    hosts: HostTable | None
    # What the admission must do, in order (``crawl/_orders.py``): returned by ``Learning``'s
    # ``page`` and ``commit``, never done here (the admission is not ours to call).
    _orders: list[Order]
    # rule id -> url id -> (url, identity): spellings fetched under the identity an alias
    # gave them; and (rule id, part) where a check found two documents; the aliases' ids.
    _held: dict[int, dict[int, tuple[str, str]]]
    _suspect: set[tuple[int, str]]
    _aliases: set[int]
    _generation: int  # bumped whenever the identities the rules give change

    def _key(self, url: str | None) -> str | None:
        raise NotImplementedError  # Learning's: the identity without learned rules

    def _where(self, key: str) -> str:
        raise NotImplementedError  # Learning's: the directory of the identity of ``key``

    def _keep_apart(self, rid: int, part: str) -> None:
        raise NotImplementedError  # Learning's: alias ``rid``'s URLs in ``part`` keep their host

    def _apart(self, key: str) -> str:
        raise NotImplementedError  # Learning's: the identity in a distrusted part

    def _key_apart(self, url: str) -> str | None:
        key = self._key(url)
        return None if key is None else self._apart(key)

    def _suspected(self, rid: int, url: str) -> bool:
        """True if a check found two documents rule ``rid`` merges in ``url``'s directory or
        one above it (``within``)."""
        own = self._where(url)
        if (rid, own) in self._suspect:
            return True
        while own != "/":
            own = own[:-1].rpartition("/")[0] + "/"
            if own != "/" and (rid, own) in self._suspect:
                return True
        return False

    def _distrust(self, rid: int, part: str) -> None:
        """A check found two documents that rule ``rid`` merges in directory ``part`` of its
        URL space (within its budget: the rule stays): every later merge there (and below,
        ``within``) is fetched anyway, so a subtree where a ``www`` twin differs costs
        fetches, not pages. What the alias merged or held there before is given back: fetched
        under its own identity."""
        if (rid, part) in self._suspect:
            return
        self._suspect.add((rid, part))
        self._generation += 1
        if rid not in self._aliases:
            return
        self._keep_apart(rid, part)
        self._release(rid, part, None)
        rows = [
            m
            for m in self.store.merges_of([rid])
            if not m.checked and in_part(self._where(m.base), part)
        ]
        back = self.store.urls_by_id([m.url_id for m in rows if m.url_id is not None])
        queued = [u for u in back.values() if u.state is URLState.MERGED]
        if queued:
            self.store.set_url_state([u.id for u in queued], URLState.QUEUED)
            if self.hosts is not None:
                for u in queued:
                    self.hosts.queued(u.host)
        again = [
            AdmitURL(m.url, self._apart(m.base), m.host, m.site, m.depth, m.kind, m.seed_id,
                     m.parent_id, m.external)
            for m in rows
            if m.url_id is None
        ]  # fmt: skip
        if again:
            self._orders.append(Readmit(tuple(again)))
        self.stats.readmitted += len(queued) + len(again)

    def _release(self, rid: int, part: str | None, host: str | None) -> None:
        """The spellings alias ``rid`` made hold another host's identity (all of them, or
        those in ``part``) get their own back — today's identity once the alias is retracted,
        the one without learned rules where it is distrusted — and the spellings of the freed
        identities that URL-seen dropped meanwhile (``crawl/spellings.py`` kept them) are
        admitted again: the twin's page and the main host's are both fetched."""
        held = self._held.get(rid, {})
        picked = [
            i
            for i, (_, held_as) in held.items()
            if part is None or in_part(self._where(held_as), part)
        ]
        for i in picked:
            del held[i]
        rows = self.store.urls_by_id(picked)
        if host is not None:  # and the host's queued spellings admitted under the alias
            rows |= {u.id: u for u in self.store.queued_of_host(host, QUEUED_AT_ONCE)}
        changes: list[tuple[int, str, str]] = []
        for i, u in rows.items():
            new = self._key_apart(u.url) if part is not None else self._identity(u.url)
            if new is not None and " " not in u.identity and new != u.identity:
                changes.append((i, u.identity, new))
        self._rekey_free(changes, rows, base=part is not None)

    def _rekey_free(
        self,
        changes: Sequence[tuple[int, str, str]],
        holders: Mapping[int, StoredURL | QueuedURL],
        *,
        base: bool,
    ) -> None:
        """Re-key ``changes``; the ``holders`` among them held another host's identity
        (``old``), which is free again: the spellings of it URL-seen dropped meanwhile are
        admitted (under the identity without learned rules, ``base``, or today's). Read
        first: re-keying moves an identity's spellings to the new one."""
        if self.spellings is not None:
            self.spellings.flush()
        kept_of = {
            old: self.store.spelling_state(old, [old])[1]
            for i, old, _ in changes
            if i in holders and authority_of(old) != authority_of(holders[i].url)
        }
        collided = set(self.store.rekey_urls(changes))
        # A holder whose own identity was stored meanwhile (its spelling admitted again) still
        # gives the other host's identity up: under a derived one (a space never occurs in a
        # normalized URL, as with ``spelling-N``), which no link can hold.
        self.store.rekey_urls(
            [
                (i, old, f"{new} released-{i}")
                for i, old, new in changes
                if i in collided and old in kept_of
            ]
        )
        if kept_of:
            self._orders.append(Forget(tuple(kept_of)))
        again: list[AdmitURL] = []
        for i, old, _ in changes:
            if old not in kept_of:
                continue
            holder = holders[i]
            for url in kept_of.pop(old):
                identity = self._key_apart(url) if base else self._identity(url)
                if identity is None or url == holder.url:
                    continue
                host = authority_of(url)
                site = self.discovery.site_of_host(host)
                seed = holder.seed_id or None
                again.append(
                    AdmitURL(url, identity, host, site, holder.depth, holder.kind, seed, None)
                )
        if again:
            self._orders.append(Readmit(tuple(again)))
        self.stats.readmitted += len(again)

    def _identity(self, url: str) -> str | None:
        try:
            return self.discovery.identity(url)
        except InvalidURL:
            return None
