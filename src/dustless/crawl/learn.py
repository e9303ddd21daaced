"""Learning while crawling: the I/O side of ``dustless.rules.LiveLearner`` (``--learn``).

The engine tells :class:`Learning` what each fetched page showed (:meth:`Learning.page`:
its identity without learned rules, content, permanent redirect, declared canonical) and
which links URL-seen dropped (:meth:`Learning.merged`); at every commit
(:meth:`Learning.commit`, at least once a second) the learner takes the batch, and what it
decides is put in force before the pending links are admitted:

* a **new rule** joins the ``site-rules`` step of the crawl's identities (``LiveRules``, the
  last step of the policy), so every URL admitted afterwards gets it; the host's queued URLs
  (and the fetched ones the learner kept) are *re-keyed* to the identity the rule gives them,
  and a queued URL whose new identity is already stored is *merged*: state ``merged``, not
  fetched, its spelling kept as a fallback of that identity (``crawl/spellings.py``: if the
  spelling fetched for it yields no document, this one is fetched — a merge never costs a
  page that a correct spelling reaches);
* what each rule merged is kept (``learned_merges``), and a few merges of each rule are
  fetched anyway to check it (its 1st, 8th, 32nd … merge, :data:`VERIFY`; a host alias's
  first in each spot of the site, :data:`SPOTS`): a rule cannot hide its own counterexamples;
* a **retracted** rule leaves the identities, and everything it merged is admitted again —
  queued rows return to ``queued``, dropped links are admitted under their identity without
  the rule: learning must never cost coverage.

The rules are written to ``CRAWL/learned-rules.xml`` (atomically) whenever they change, in
the format ``dustless crawl --rules`` reads; the DB keeps each rule's evidence, when it was
learned and, if so, when and why it was retracted, so ``--resume`` (even after ``kill -9``)
continues with them. ``docs/learning.md`` is the user's view.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from dustless.crawl._learn_held import QUEUED_AT_ONCE, HeldIdentities
from dustless.crawl._orders import Forget, Order, Readmit, Rekey
from dustless.crawl.discover import Discovery
from dustless.crawl.hosts import HostTable
from dustless.crawl.page import is_html
from dustless.crawl.progress import RunCounters
from dustless.crawl.spellings import Spellings, no_document
from dustless.errors import InvalidURL, ScriptError
from dustless.extract import extract_links
from dustless.fetch import FetchResult
from dustless.frontier import QueuedURL
from dustless.rules import (
    LiveEvidence,
    LiveLearner,
    LiveOptions,
    LiveRule,
    LiveRules,
    PageFacts,
    Retraction,
    RuleSet,
    SiteScript,
    directory_of,
    dump_script,
    rule_from_spec,
    spot_of,
)
from dustless.states import NetState
from dustless.store import (
    AdmitURL,
    CrawlStore,
    FetchRecord,
    LearnedRuleRow,
    MergeRow,
    StoredURL,
    URLState,
)
from dustless.url import Policy, authority_of

__all__ = ["LEARNED_RULES", "PART_EVERY", "SPOTS", "VERIFY", "Learning", "learning_policy"]

LEARNED_RULES = "learned-rules.xml"
#: The merges of a rule that are fetched anyway, to check it (the n-th merge, 1-based):
#: the first, then ever more rarely, so that the check costs a few fetches per rule.
VERIFY = frozenset({1, 8, 32, 128, 512, 2048, 8192})
#: Besides, a host alias's first merge in each *spot* of its URL space is fetched anyway, for
#: this many spots per alias: the merged path's directory at any depth (``/manual/x/digest/``),
#: and within a directory the leading word of a file name (``/catalog/app-`` for
#: ``app-psql.html``: a flat site's run of related pages, ``_learn_held.spot_of``). A ``www``
#: twin that differs in one subtree (a directory left out of the mirror) is found where the
#: alias first merges there, not by the luck of a count landing on it (issue 25), however deep
#: the subtree and however many pages share its first segment.
SPOTS = 256
#: ... and every this-many-th merge of a host alias in each spot: a twin that differs in only
#: some pages of a spot is found there with a few checks more (and what was merged there
#: before is then fetched too, ``Learning._distrust``). Sparse: the spots find subtrees.
PART_EVERY = 16
#: A run of pages named by a leading word (``/board/app-``) is a guess at a subtree, where a
#: directory is one: a twin may differ in part of it, and its first check then lands on a page
#: that happens to be equal as often as the run has such pages — the real web's seed 83732, a
#: twin differing in 12 of a flat directory's 20 ``app-`` pages, checked ``app-psql.html``
#: (equal) and merged the 12 others unchecked (lost; its 16th merge never came). So such a
#: spot's 2nd merge is checked too. Directories are not: on the project's test web a second
#: check in each cost a third more duplicate fetches, and found nothing the first missed.
_WORD_SPOT_AGAIN = 2
_PERMANENT = frozenset({301, 308})
# Identities remembered as held by a redirect (a pointer, no document): a few MB at most.
_POINTERS = 100_000
# Pages whose facts the learner takes at once: a rule is in force a few pages after its
# evidence arrived (a fast crawl fetches hundreds of pages between two commits), and the
# learner's cost is paid per batch, not per link.
BATCH = 16


def learning_policy(policy: Policy, live: LiveRules) -> Policy:
    """``policy`` with the learned rules as the last of its ``site-rules``."""
    policy = policy.with_steps(enable=["site-rules"])
    return policy.with_options(site_rules=(*policy.options.site_rules, live))


class Learning(HeldIdentities):
    """The crawl's learned rules: evidence in, rules in force, merges kept and undone."""

    def __init__(
        self,
        store: CrawlStore,
        discovery: Discovery,
        base: Callable[[str], str],
        live: LiveRules,
        stats: RunCounters,
        options: LiveOptions,
        *,
        wall: Callable[[], float],
        path: Path | None,
        verify: frozenset[int] = VERIFY,
        hosts: HostTable | None = None,
        spellings: Spellings | None = None,
    ) -> None:
        self.store = store
        self.discovery = discovery
        self.base = base  # identity without the learned rules (the learner's key)
        self.live = live
        self.stats = stats
        self.wall = wall
        self.path = path
        self.verify = verify
        self.learner = LiveLearner(options)
        self.hosts = hosts
        self.spellings = spellings
        self._orders: list[Order] = []  # for the admission: returned by page() and commit()
        self._facts: list[PageFacts] = []
        self._rekeys: list[tuple[int, str, str]] = []
        self._rekey_urls: dict[int, str] = {}  # url id -> its URL, to check a re-key again
        # The rules' generation (``_generation``, bumped whenever the identities they give
        # change) the pending re-keys were computed under: one computed before a retraction
        # or a distrust and applied after would give a freed identity back to its holder.
        self._rekeys_at = self._generation = 0
        self._stale: dict[int, QueuedURL] = {}  # re-keyed away from another host's identity
        self._pointers: set[str] = set()  # identities whose fetch was a redirect (_POINTERS)
        self._merges: list[MergeRow] = []
        self._rows: dict[tuple[str, str], LearnedRuleRow] = {}  # active, by (host, spec)
        self._ids: dict[tuple[str, str], int] = {}
        self._merged: dict[int, int] = {}  # rule id -> merges so far (VERIFY counts them)
        self._fetch_hosts: dict[str, set[str]] = {}  # a key's authority -> fetch authorities
        self._seen_ids: set[int] = set()
        # rule id -> the parts of its URL space checked already (the first merge of each),
        # and those where a check found two documents: every merge there is fetched anyway.
        self._parts: dict[int, set[str]] = {}
        # ... and the spots where a spelling of the alias's own host, fetched under the
        # identity the alias gave it, was checked (``_stands_for``). Counted apart: where the
        # twin's spellings hold the identities, a merged link's check meets the twin again
        # (``www.h/x?sid=2`` compared with ``www.h/x?sid=1``, held as ``h/x``) and says
        # nothing of the alias; only fetching ``h/x`` itself compares the two hosts there.
        self._held_parts: dict[int, set[str]] = {}
        self._suspect: set[tuple[int, str]] = set()
        # The spellings admitted as checks of a host alias, under their identity without the
        # learned rules (``_checking_for``):
        # a rule learned before one is fetched must not re-key it into the identity it checks
        # (merged so, it was never fetched, and a retraction missed it: its merge row is
        # the check's, ``learned_merges`` keeping one row per rule and identity — the real
        # web's seed 4 lost a page of the www twin's subtree so). A few per rule.
        self._checking: set[str] = set()
        self._in_part: dict[tuple[int, str], int] = {}  # an alias's merges per part
        # The host aliases' rule ids: a twin host that differs does so by subtree (a part of
        # the site left out of the mirror); a parameter or substring rule is checked by count.
        self._aliases: set[int] = set()
        # rule id -> url id -> (url, identity): spellings fetched under the identity an alias
        # gave them (``www.h/x`` holding ``h/x``); URL-seen drops the links to the identity's
        # own spelling, kept as spellings only. Given back on retraction or distrust.
        self._held: dict[int, dict[int, tuple[str, str]]] = {}
        self._fetched_before = sum(store.fetch_state_counts().values())
        self._load()

    # -- state from the DB -------------------------------------------------------------------

    def _load(self) -> None:
        """Rules learned before (a resumed crawl, or other workers): in force again."""
        merges = self.store.merge_counts()
        for row in self.store.learned_rules():
            self._take(row, merges)
        self._install()

    def _take(self, row: LearnedRuleRow, merges: dict[int, tuple[int, int]]) -> bool:
        """A stored row into the learner; True if it changed the rules in force."""
        assert row.id is not None
        self._seen_ids.add(row.id)
        key = (row.host, row.spec)
        self._ids[key] = row.id
        if row.element == "hostRedirect" and row.active:
            self._aliases.add(row.id)
            # The parts it merged in before (a resumed crawl): checked then, or merged.
            merged = self.store.merges_of([row.id])
            # Holders are stored as checked merges whose base is the identity they hold
            # (``_hold``): not a check of their part.
            held = {
                m.url_id: (m.url, m.base)
                for m in merged
                if m.checked and m.url_id is not None and m.base != self._key(m.url)
            }
            self._held[row.id] = held
            self._parts[row.id] = {spot_of(m.base) for m in merged if m.url_id not in held}
            self._held_parts[row.id] = {
                spot_of(m.base)
                for m in merged
                if m.checked and m.url_id is not None and m.url_id not in held
            }
        if not row.active:
            self._rows.pop(key, None)
            self.stats.rules_retracted += 1
            return self.learner.forget(row.host, row.spec)
        try:
            rule = rule_from_spec(row.spec)
        except ScriptError:
            return False  # written by a newer dustless: not ours to apply
        self._rows[key] = row
        kept, checked = merges.get(row.id, (0, 0))
        self._merged[row.id] = kept + checked
        self.stats.duplicates_avoided += kept
        self.stats.rules_checked += checked
        evidence = LiveEvidence(row.pairs, row.pairs - row.differ, row.support, 1)
        if not self.learner.adopt(row.host, row.spec, rule, evidence):
            # The reverse of an alias in force (two workers, or an older crawl's DB): not
            # applied, nor written to the rules file, where both would apply neither.
            self._rows.pop(key, None)
            return False
        return True

    def _poll(self) -> bool:
        """Rules other workers learned or retracted since the last look (a shared store)."""
        changed = False
        for row in self.store.learned_rules():
            assert row.id is not None
            key = (row.host, row.spec)
            if row.id not in self._seen_ids or (not row.active and key in self._rows):
                changed |= self._take(row, {})
        return changed

    def _install(self) -> None:
        self.live.set(self.learner.ruleset)
        self._generation += 1
        self.stats.rules_learned = len(self._rows)

    # -- what pages showed -------------------------------------------------------------------

    def _key(self, url: str | None) -> str | None:
        if url is None:
            return None
        try:
            return self.base(url)
        except InvalidURL:
            return None

    def page(self, item: QueuedURL, r: FetchResult, fetch: FetchRecord) -> list[Order]:
        """A fetch was handled: its facts wait for the next commit. What the admission must
        do at once (a spelling that stands for another identity is checked; a batch of facts
        committed), in order."""
        self._page(item, r, fetch)
        return self._take_orders()

    def _take_orders(self) -> list[Order]:
        orders, self._orders = self._orders, []
        return orders

    def _page(self, item: QueuedURL, r: FetchResult, fetch: FetchRecord) -> None:
        key = self._key(item.url)
        if key is None:
            return
        state, status = fetch.state, fetch.status
        document = (
            fetch.content_sha1 is not None
            and status is not None
            and 200 <= status < 300
            and state in (NetState.OK, NetState.code)
        )
        redirect = self._key(fetch.location) if status in _PERMANENT else None
        pointer = status is not None and 300 <= status < 400 and item.identity
        if pointer and len(self._pointers) < _POINTERS:
            self._pointers.add(item.identity)
        declared = fetch.canonical
        if document and declared is None and fetch.revisit_of is not None:
            declared = _revisit_canonical(item.url, r)
        canonical = self._key(declared) if document else None
        self._facts.append(
            PageFacts(
                key,
                item.url_id,
                document,
                no_document(state, status),
                fetch.content_sha1,
                fetch.content_fp,
                redirect,
                canonical,
            )
        )
        if len(self._facts) >= BATCH:
            self._commit()
        authority = authority_of(key)
        if item.host != authority:
            self._fetch_hosts.setdefault(authority, set()).add(item.host)
        identity = item.identity
        stands = document and identity and " " not in identity and identity != key
        if stands and authority_of(identity) == authority and identity == self._apart(key):
            stands = False  # admitted as the twin's own page where its alias is distrusted
        if stands and not self._stands_for(item, key, identity):
            self._hold(item, key, identity)
        if document and identity and " " not in identity and authority in self.live.hosts:
            # Claimed before its host's latest rule: stored under an identity the rules now
            # change. Re-keyed, so that later spellings of it are merged into it — but for a
            # part where a check found two documents: a twin's page fetched there under its
            # own identity keeps it (re-keyed into the main host's, it would hold that
            # identity, and the main host's own page, linked later, would be dropped).
            new = self.live.apply(key)
            if any(i in self._aliases and self._suspected(i, key) for i in self._rule_ids(key)):
                new = self._apart(key)
            if new != identity:
                self._rekey(item, identity, new)
                if authority_of(identity) != authority_of(new):
                    self._stale[item.url_id] = item
        elif stands and not self._rule_ids(key):
            # Claimed under an alias retracted since (in the window while it was retracted):
            # its own identity back, and the links it kept out of the other host admitted.
            self._rekey(item, identity, key)
            self._stale[item.url_id] = item

    def _rekey(self, item: QueuedURL, identity: str, new: str) -> None:
        """A fetched URL's re-key, applied at the next commit (after its rule changes)."""
        if not self._rekeys:
            self._rekeys_at = self._generation
        self._rekeys.append((item.url_id, identity, new))
        self._rekey_urls[item.url_id] = item.url

    def _today(self, url: str) -> str | None:
        """The identity the rules in force give ``url`` now: in a part where a check found
        two documents, the one without the learned rules (as ``_release`` gives it)."""
        key = self._key(url)
        return None if key is None else self._today_of(key)

    def _today_of(self, key: str) -> str:
        """``_today`` of an identity without the learned rules."""
        if any(self._suspected(rid, key) for rid in self._rule_ids(key)):
            return self._apart(key)
        return self.live.apply(key)

    def _where(self, key: str) -> str:
        """The directory of ``key``'s identity under the rules in force: where a check found
        two documents, and where a merge lies. ``/index.php?page=world/x.html`` lies in
        ``/world/`` once ``queryToPath`` is learned — by its own path every such spelling
        of a site is in ``/``, and a difference in one top-level page would distrust the
        alias for all of them (the real web's seed 9)."""
        return directory_of(self.live.apply(key))

    def _keep_apart(self, rid: int, part: str) -> None:
        """From now on, the identities the rules give alias ``rid``'s URLs in ``part`` are its
        host's (``LiveRules.keep_apart``): new links there are the twin's pages at once."""
        for (host, _), known in self._ids.items():
            if known == rid:
                self.live.keep_apart(host, part)

    def _apart(self, key: str) -> str:
        """The identity of ``key`` in a part where a check found two documents: its own
        host's, with the rules of the host its alias leads to (``LiveLearner.apart``)."""
        return self.learner.apart(key)

    def _hold(self, item: QueuedURL, key: str, identity: str) -> None:
        """``item`` (spelling ``key``) was fetched under ``identity``, another host's, that an
        alias gave it: kept (in memory, and as a checked merge for ``--resume``), so that the
        links to ``identity``'s own spelling it kept out can be admitted again."""
        ids = [i for i in self._rule_ids(key) if i in self._aliases]
        for rid in ids:
            self._held.setdefault(rid, {})[item.url_id] = (item.url, identity)
            site = self.discovery.site_of_host(item.host)
            self._merges.append(
                MergeRow(rid, identity, item.url, item.host, site, item.depth, item.kind,
                         item.seed_id or None, None, False, item.url_id, True)
            )  # fmt: skip

    def _stands_for(self, item: QueuedURL, key: str, identity: str) -> bool:
        """A spelling fetched under the identity a learned rule gave it (``www.h/x`` for
        ``h/x``): it stands for that identity's own spelling, never fetched. That is a merge
        too, and it is checked as merges are (``_due``): the spelling is given its own
        identity back and the identity's spelling is admitted, fetched, and compared — a
        ``www`` twin that differs in a subtree loses no page of the host it aliases."""
        ids = self._rule_ids(key)
        if not ids or not self._due(ids, key, held=True):
            return False
        own = key
        if any(self._suspected(rid, key) for rid in ids):
            own = self._apart(key)  # in a distrusted part: the twin's page, with its rules
        # At once (not with the commit's re-keying): the admission may flush before it.
        if self.store.rekey_urls([(item.url_id, identity, own)]):
            # Its own identity is stored already (the check is that row's): the identity it
            # holds is given up all the same, under a derived one no link can hold.
            self.store.rekey_urls([(item.url_id, identity, f"{own} released-{item.url_id}")])
        self._orders.append(Forget((identity,)))
        host = authority_of(identity)
        site = self.discovery.site_of_host(host)
        seed_id = item.seed_id or None
        self._orders.append(
            Readmit(
                (AdmitURL(identity, identity, host, site, item.depth, item.kind, seed_id,
                          item.url_id),)
            )
        )  # fmt: skip
        self._keep(ids, key, item, item.url_id, checked=True)
        return True

    # -- links URL-seen dropped --------------------------------------------------------------

    def merged(self, found: Iterable[AdmitURL]) -> list[AdmitURL]:
        """Links whose identity was already stored or pending: those a learned rule merged
        are kept (``learned_merges``); the ones due a check come back, to be admitted under
        their identity without the learned rules (fetched, and compared)."""
        out: list[AdmitURL] = []
        for u in found:
            if u.given or " " in u.identity:
                continue
            base = self._key(u.url)
            if base is None or base == u.identity:
                continue  # the policy merged it, not a learned rule
            ids = self._rule_ids(base)
            if not ids:
                continue
            if self._due(ids, base):
                own = base
                if any(self._suspected(rid, base) for rid in ids):
                    own = self._apart(base)
                    if own == u.identity:
                        continue  # a repeat of the twin's page (its host's rules merge it)
                self._checking_for(ids, base)
                out.append(_admit(u, own))
                self._keep(ids, base, u, None, checked=True)
                continue
            self._keep(ids, base, u, None)
        return out

    def _rule_ids(self, base: str) -> list[int]:
        host = authority_of(base)
        return [
            self._ids[(host, spec)]
            for spec in self.learner.rules_changing(base)
            if (host, spec) in self._ids
        ]

    def _due(self, ids: list[int], base: str, *, held: bool = False) -> bool:
        """Count a merge of ``base`` for each rule; True if one of them has a check due: its
        n-th merge (``VERIFY``), an alias's first in a spot of its URL space (``SPOTS``) and
        every ``PART_EVERY``-th there (a leading word's run, its 2nd too), or any in a
        directory where a check found two documents. ``held``: ``base`` was fetched under
        the identity an alias gave it, and the spots of those are counted apart
        (``_held_parts``)."""
        parts = self._held_parts if held else self._parts
        due = False
        spot = spot_of(base)
        for rid in ids:
            n = self._merged.get(rid, 0) + 1
            self._merged[rid] = n
            due |= n in self.verify or self._suspected(rid, base)
            if rid not in self._aliases:
                continue
            spots = parts.setdefault(rid, set())
            if spot not in spots and len(spots) < SPOTS:
                spots.add(spot)
                due = True
            else:
                k = self._in_part[(rid, spot)] = self._in_part.get((rid, spot), 1) + 1
                due |= k % PART_EVERY == 0
                due |= k == _WORD_SPOT_AGAIN and not spot.endswith("/")
        return due

    def _checking_for(self, ids: list[int], base: str) -> None:
        """``base`` is admitted as a check of rules ``ids``: of a host alias, it keeps its
        identity until fetched (``_checking``). A parameter rule's check may still be merged
        by a later rule's re-key, as before: honouring those too costs the test web's
        learning crawl ~3 % more duplicate fetches, over its quarter."""
        if any(rid in self._aliases for rid in ids):
            self._checking.add(base)

    def _keep(
        self,
        ids: list[int],
        base: str,
        u: AdmitURL | StoredURL | QueuedURL,
        url_id: int | None,
        *,
        checked: bool = False,
    ) -> None:
        """Keep what the rules ``ids`` merged (or, ``checked``, what they would have merged
        and the crawl fetches anyway to check them)."""
        if isinstance(u, StoredURL | QueuedURL):
            site = self.discovery.site_of_host(u.host)
            seed_id = u.seed_id or None
            parent = u.parent_id if isinstance(u, StoredURL) else None
            fields = (u.url, u.host, site, u.depth, u.kind, seed_id, parent, False)
        else:
            fields = (u.url, u.host, u.site, u.depth, u.kind, u.seed_id, u.parent_id, u.external)
        url, host, site, depth, kind, seed_id, parent_id, external = fields
        for rid in ids:
            self._merges.append(
                MergeRow(
                    rid,
                    base,
                    url,
                    host,
                    site,
                    depth,
                    kind,
                    seed_id,
                    parent_id,
                    external,
                    url_id,
                    checked,
                )
            )
        if checked:
            self.stats.rules_checked += 1
        else:
            self.stats.duplicates_avoided += 1

    # -- the commit --------------------------------------------------------------------------

    def commit(self) -> list[Order]:
        """Learn from the batch; put new rules and retractions in force (before the engine
        admits the pending links). What the admission must do, in order: the engine applies
        it before its next flush."""
        self._commit()
        return self._take_orders()

    def _commit(self) -> None:
        facts, self._facts = self._facts, []
        changes = self.learner.observe(facts)
        learned = self.learner.learn()
        polled = self.store.shared and self._poll()
        if changes.retracted or learned.learned:
            self._store(learned.learned, changes.retracted)
        # Before any retraction: what a retracted rule merged since the last commit is
        # admitted again with the rest (it was left merged for good when written after).
        self._write_merges()
        gone = {(r.host, r.spec) for r in changes.retracted}
        for host, spec, a, b in changes.differed:
            rid = self._ids.get((host, spec))
            if rid is not None and (host, spec) not in gone:
                for part in {self._where(a), self._where(b)}:
                    self._distrust(rid, part)
        if changes.retracted or learned.learned or polled:
            self._install()
            for r in changes.retracted:
                self._readmit(r)
            for host in sorted({r.host for r in learned.learned}):
                self._rekey_host(host)
            self._write_file()
        if self._rekeys:
            changes_, self._rekeys = self._rekeys, []
            urls, self._rekey_urls = self._rekey_urls, {}
            stale, self._stale = self._stale, {}
            if self._rekeys_at != self._generation:
                # Computed under the rules before this commit's changes (a retraction frees
                # the identity a holder gave up: the old re-key would take it back, and the
                # host's own spelling, linked later, would be dropped as its repeat): each is
                # computed again under the rules in force.
                changes_ = [
                    (i, old, new)
                    for i, old, _ in changes_
                    if (new := self._today(urls[i])) is not None and new != old
                ]
            self._rekey_free(changes_, stale, base=False)
        self._write_merges()  # the re-keyed hosts' queued URLs merged just now

    def _write_merges(self) -> None:
        if self._merges:
            merges, self._merges = self._merges, []
            self.store.add_merges(merges)

    def _store(self, learned: Iterable[LiveRule], retracted: Iterable[Retraction]) -> None:
        now = self.wall()
        fetched = self._fetched_before + self.stats.fetched
        rows = [
            LearnedRuleRow(
                r.host,
                r.rule.element,
                r.spec,
                r.evidence.support,
                r.evidence.pairs,
                r.evidence.differ,
                r.sources,
                now,
                fetched,
            )
            for r in learned
        ]
        for row, rid in zip(rows, self.store.add_learned_rules(rows), strict=True):
            key = (row.host, row.spec)
            self._ids[key] = rid
            self._seen_ids.add(rid)
            if row.element == "hostRedirect":
                self._aliases.add(rid)
            self._rows[key] = dataclasses.replace(row, id=rid)
            self._merged.setdefault(rid, 0)
        out = []
        for r in retracted:
            key = (r.host, r.spec)
            known = self._ids.get(key)
            self._rows.pop(key, None)
            self.stats.rules_retracted += 1
            if known is not None:
                out.append((known, now, r.reason))
        self.store.retract_learned_rules(out)

    # -- re-keying and merging queued URLs ---------------------------------------------------

    def _rekey_host(self, host: str) -> None:
        """A new rule for ``host``: its kept documents and queued URLs (in the DB and in the
        host's window in memory) take the identity the rules in force give them; a queued URL
        whose new identity is already stored is merged."""
        store, apply = self.store, self.live.apply
        # 1. The documents fetched: they keep their resource's new identity, so that later
        #    spellings of it are merged into them.
        changes: list[tuple[int, str, str]] = []
        docs = self.learner.documents(host)
        key_of = {url_id: key for key, url_id in docs.items()}
        stored = store.urls_by_id(docs.values())
        for key, url_id in docs.items():
            row = stored.get(url_id)
            if row is not None and " " not in row.identity:
                new = apply(key)
                if new != row.identity:
                    changes.append((url_id, row.identity, new))
        collided_done = set(store.rekey_urls(changes))
        # A document an alias gave another host's identity (``m.h/x``, fetched before the
        # alias, now ``h/x``) stands for it as one fetched under it does: checked when due
        # (``_stands_for``: ``h/x`` fetched and compared), else held (``_hold``) — a link to
        # ``h/x`` itself is dropped as its repeat, and admitted again if the alias is
        # retracted or distrusted there. Else ``h/x`` is lost where the twin differs (the
        # real web's seed 4: a ``www`` twin's page fetched before the alias was learned).
        for url_id, _, new in changes:
            row = stored[url_id]
            if url_id not in collided_done and authority_of(new) != row.host:
                key = key_of[url_id]
                doc = QueuedURL(row.url, row.host, row.depth, row.priority, row.seed_id or 0,
                                row.kind, url_id, new)  # fmt: skip
                if not self._stands_for(doc, key, new):
                    self._hold(doc, key, new)
        # A document whose new identity a queued URL holds: that URL repeats the document.
        into_done = {new for i, _, new in changes if i in collided_done}
        # 2. The queued URLs, the window first (claimed, in memory), then the DB's queue.
        fetch_hosts = sorted({host, "www." + host} | self._fetch_hosts.get(host, set()))
        window: list[QueuedURL] = []
        if self.hosts is not None:
            for h in fetch_hosts:
                window += self.hosts.take_window(h)
        queued: list[tuple[int, str, str, StoredURL | QueuedURL]] = [
            (q.url_id, q.url, q.identity, q) for q in window
        ]
        for h in fetch_hosts:
            queued += [
                (u.id, u.url, u.identity, u) for u in store.queued_of_host(h, QUEUED_AT_ONCE)
            ]
        changes = []
        for url_id, url, identity, _ in queued:
            base = self._key(url) if " " not in identity else None
            if base is not None and base not in self._checking and apply(base) != identity:
                changes.append((url_id, identity, apply(base)))
        collided = set(store.rekey_urls(changes))
        new_of = {i: new for i, _, new in changes if i not in collided}
        # A queued URL whose new identity a fetched redirect holds is no repeat: it is the
        # redirect's target, discovered as a link before the rule made both one identity
        # (``/doc/x`` 301 to ``/sec/x``, then ``substitute /sec/ → /doc/``). Merged, it
        # would be lost: the identity's only fetch is a pointer (``crawl/redirect.py``
        # follows such a target only when the rule is in force at the redirect).
        pointed = {i for i, _, new in changes if i in collided and new in self._pointers}
        collided -= pointed
        collided |= {i for i, _, identity, _ in queued if new_of.get(i, identity) in into_done}
        merged: list[int] = []
        spellings: list[tuple[str, str]] = []
        kept: list[QueuedURL] = []
        for url_id, url, identity, item in queued:
            base = self._key(url) if url_id in collided else None
            ids = self._rule_ids(base) if base is not None else []
            due = base is not None and bool(ids) and self._due(ids, base)
            if base is None or not ids or due:
                # Stays queued (with its new identity); a merge due a check stays too.
                if isinstance(item, QueuedURL):
                    kept.append(dataclasses.replace(item, identity=new_of.get(url_id, identity)))
                if due and base is not None:
                    self._checking_for(ids, base)
                    self._keep(ids, base, item, url_id, checked=True)
                continue
            self._keep(ids, base, item, url_id)
            merged.append(url_id)
            spellings.append((apply(base), url))
        if kept and self.hosts is not None:
            self.hosts.give_back(kept)
        # 3. The links waiting for admission: admitted under the new identities.
        self._orders.append(self._rekey_pending(fetch_hosts))
        if merged:
            store.set_url_state(merged, URLState.MERGED)
        if spellings and self.spellings is not None:
            # The fallback if the merged-into spelling fails.
            self._orders += self.spellings.note(spellings)

    def _rekey_pending(self, fetch_hosts: list[str]) -> Rekey:
        """The re-key of the links waiting for admission on ``fetch_hosts``: applied once
        this commit returns, with the checks as they are now (a later host's re-key in the
        same commit adds some). The pointers change only as a page is handled, before."""
        apply, pointers = self.live.apply, self._pointers
        checking = frozenset(self._checking)

        def rekeyed(u: AdmitURL) -> str | None:
            base = self._key(u.url) if " " not in u.identity else None
            if base is None or base in checking:
                return None  # a check keeps the identity it is checked under
            new = apply(base)
            # A redirect's target waiting here keeps its identity, as queued ones do.
            return None if new in pointers else new

        return Rekey(frozenset(fetch_hosts), rekeyed)

    # -- retraction --------------------------------------------------------------------------

    def _readmit(self, r: Retraction) -> None:
        """Everything the retracted rule merged is admitted again (under today's rules)."""
        rid = self._ids.get((r.host, r.spec))
        if rid is None:
            return
        if rid in self._aliases:
            # Links waiting for admission took the alias's identities: today's instead.
            self._orders.append(
                Rekey(
                    frozenset({r.host}),
                    lambda u: None if " " in u.identity else self._identity(u.url),
                )
            )
            self._release(rid, None, r.host)  # the twin's spellings get their own identities back
        rows = [m for m in self.store.merges_of([rid]) if not m.checked]  # checks: fetched
        queued_ids = [m.url_id for m in rows if m.url_id is not None]
        back = [u for u in self.store.urls_by_id(queued_ids).values() if u.state is URLState.MERGED]
        if back:
            self.store.set_url_state([u.id for u in back], URLState.QUEUED)
            if self.hosts is not None:
                for u in back:
                    self.hosts.queued(u.host)
        again: list[AdmitURL] = []
        for m in rows:
            if m.url_id is not None:
                continue
            try:
                identity = self.discovery.identity(m.url)
            except InvalidURL:
                continue
            again.append(
                AdmitURL(
                    m.url,
                    identity,
                    m.host,
                    m.site,
                    m.depth,
                    m.kind,
                    m.seed_id,
                    m.parent_id,
                    m.external,
                )
            )
        if again:
            self._orders.append(Readmit(tuple(again)))
        self.store.drop_merges([rid])
        self.stats.duplicates_avoided -= min(self.stats.duplicates_avoided, len(rows))
        self.stats.readmitted += len(back) + len(again)

    # -- the file ----------------------------------------------------------------------------

    def ruleset(self) -> RuleSet:
        """The rules in force with their evidence, one site per host (the file's content)."""
        by_host: dict[str, list[LearnedRuleRow]] = {}
        for row in self._rows.values():
            by_host.setdefault(row.host, []).append(row)
        sites = []
        for host in sorted(by_host):
            rules = [
                rule_from_spec(r.spec, r.support, round(r.differ / r.pairs, 6) if r.pairs else 0.0)
                for r in sorted(by_host[host], key=lambda r: r.id or 0)
            ]
            sites.append(
                SiteScript(f"learned during the crawl: {host}", (host,), rules=tuple(rules))
            )
        return RuleSet(tuple(sites))

    def _write_file(self) -> None:
        if self.path is None:
            return
        text = dump_script(self.ruleset())
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


def _revisit_canonical(url: str, r: FetchResult) -> str | None:
    """The ``<link rel=canonical>`` of a page whose payload repeats an earlier one (a WARC
    revisit): the crawl does not parse it again for its links, but its declaration is the
    learner's best evidence — the page says which spelling it is (RFC 6596). Resolved
    against this page's URL: the same bytes may declare a relative canonical."""
    if not r.body or not is_html(r.mime):
        return None
    found = extract_links(r.body, url, r.header("content-type") or r.mime, anchor_text=False)
    return found.canonical


def _admit(u: AdmitURL, identity: str) -> AdmitURL:
    return AdmitURL(
        u.url,
        identity,
        u.host,
        u.site,
        u.depth,
        u.kind,
        u.seed_id,
        u.parent_id,
        u.external,
        u.given,
        u.priority,
    )
