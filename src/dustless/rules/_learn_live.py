"""Learning a site's URL equivalences while it is crawled: ``rules learn``, made incremental.

``rules learn`` (``_learn.py``) reads a finished crawl: DustBuster (Bar-Yossef, Keidar &
Schonfeld, WWW 2007) mines the URL pairs that hold the same document, ranks the rules they
suggest by support and keeps those whose merges rarely differ in content. Here the same
learner runs as the pages arrive, per host (an authority, the crawl's politeness key), so
that a rule joins the identity of every URL admitted after it (``crawl/learn.py``):

**Evidence** (:meth:`LiveLearner.observe`, in batches, once per commit):

* content — every fetched page gets a content class (``ContentIndex``: the same payload, or
  a near-duplicate text); two spellings in one class are an *equal pair*, a candidate
  rule's support; a spelling without a document (4xx, 5xx, no answer) merged with one that
  has a document is a counterexample;
* redirects — a permanent redirect (301, 308) to another spelling of the same site says
  both spellings are one document (seed 001: the server's own word);
* ``rel=canonical`` (RFC 6596) — a *claim* that a page is its canonical URL's document.
  It is evidence, never an order: a host's claims count only while the URLs it declared
  canonical and that were fetched were that document (``trusted``: at least one such — a
  page fetched at the very URL it declares counts — and no more refuted than the
  false-positive budget allows); a claim about a URL fetched since is replaced by what the
  fetch showed; and a rule needs at least one equal pair a fetch showed (``verified``) —
  declarations alone never merge anything.

**Rules**: the candidates of ``rules learn`` (``pair_candidates``) — irrelevant parameters,
parameter order, substitutions, default documents, trailing slashes, the path's case, and
host aliases — each gathers hints from the equal pairs that suggest it; one with
``min_support`` hints is validated (DustBuster §5) on everything the host showed so far,
with the rules in force applied first: it is accepted with at least ``min_support``
independent equal groups (``LiveEvidence.support``) and at most ``max_fp`` of the pairs it
merges differing.

**Retraction**: every page fetched afterwards is compared with the pages the rules in force
give its identity (the rules it took to merge them share the pair); a rule whose
counterexamples, old and new, exceed its budget is retracted (``LiveChanges.retracted``),
and never learned again in the crawl. The crawl then admits again what it merged.

Everything here is pure: facts in, rules out; the crawl does the I/O. Memory is bounded:
each site keeps at most ``max_docs`` documents, and the sites least recently heard from
forget their evidence (their rules stay) when the crawl holds ``max_total`` documents.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from dustless.errors import InvalidOption
from dustless.url import LenientParts, authority_of, replace_host, split_lenient, with_authority

from ._learn_hosts import spot_of
from ._learn_live_index import ContentIndex
from ._learn_live_rules import (
    NO_DOCUMENT,
    Entry,
    LiveEvidence,
    measure,
    pair_candidates,
    rule_from_spec,
    rule_spec,
)
from ._learned import DropParam, HostRedirect, LearnedRule
from ._site import RuleSet, SiteScript

__all__ = [
    "LiveChanges",
    "LiveLearner",
    "LiveOptions",
    "LiveRule",
    "PageFacts",
    "Retraction",
    "site_of_authority",
]

# Candidates are validated general first: a host alias, then parameters, normalizer steps,
# slashes, and substrings last (the specific rules the general ones make redundant).
_ORDER = {
    "hostRedirect": 0,
    "dropParam": 1,
    "fixParam": 1,
    "normalize": 2,
    "addSlash": 3,
    "queryToPath": 3,
    "stripPrefix": 3,
    "substitute": 4,
}
_WAITING_CAP = 4  # claims and redirects waiting for their target, per document kept
# A pair whose spellings differ by several parameters (``?a=1&b=2`` beside the bare URL)
# suggests dropping each, and no one of them alone merges it: the parameters are also tried
# together, as one candidate (a *group*), when they are at most this many.
_GROUP_MAX = 4
# A host alias is retracted once more than 1/ALIAS_SPOT_SHARE of the spots compared differ
# (``_Active.over_budget``).
ALIAS_SPOT_SHARE = 3


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """``max_fp``: the highest share of differing pairs a rule may merge (its budget);
    ``min_support``: independent equal groups a rule needs (k); ``max_bucket``: spellings of
    one document mined for candidates (DustBuster's bucket limit); ``max_docs``: documents
    kept per site; ``max_total``: in all; ``per_pass``: candidates validated per host per
    commit (the learner's cost per page stays small)."""

    max_fp: float = 0.01
    min_support: int = 2
    max_bucket: int = 32
    max_docs: int = 2000
    max_total: int = 50_000
    per_pass: int = 12

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_fp <= 1.0:
            raise InvalidOption(f"--max-fp must be a fraction in [0, 1], not {self.max_fp}")
        if self.min_support < 1:
            raise InvalidOption(f"--min-support must be >= 1, not {self.min_support}")


class PageFacts(NamedTuple):
    """One fetch as the learner sees it. Keys are identities *without* learned rules (the
    policy's form): what a learned rule is applied to."""

    key: str
    url_id: int
    document: bool  # a 2xx answer with a content identity
    no_document: bool  # 4xx, 5xx or no answer: this spelling reached nothing
    sha1: str | None = None
    fp: bytes | None = None
    redirect: str | None = None  # the key of a permanent redirect's target
    canonical: str | None = None  # the key of the canonical URL the page declares


@dataclass(frozen=True, slots=True)
class LiveRule:
    """A rule learned for ``host``: the rule (its ``support`` and ``fp_rate`` filled), its
    name, and the evidence it was accepted on, with where the evidence came from."""

    host: str
    spec: str
    rule: LearnedRule
    evidence: LiveEvidence
    sources: str


@dataclass(frozen=True, slots=True)
class Retraction:
    host: str
    spec: str
    reason: str


@dataclass(frozen=True, slots=True)
class LiveChanges:
    """What a batch changed. ``differed``: ``(host, spec, a, b)`` for each pair of spellings a
    rule in force merges and a fetch showed different (within its budget or not): the crawl
    checks the rest of that part of the rule's URL space (``crawl/learn.py``)."""

    learned: tuple[LiveRule, ...] = ()
    retracted: tuple[Retraction, ...] = ()
    differed: tuple[tuple[str, str, str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.learned or self.retracted)


_SEQ = itertools.count()


@dataclass(slots=True)
class _Active:
    rule: LearnedRule
    evidence: LiveEvidence  # when it was accepted
    equal: int = 0  # equal pairs met since
    differ: int = 0  # counterexamples met since
    # the order rules were put in force: a pair that needs several rules to merge is blamed
    # on the one that came last (``_monitor``)
    seq: int = field(default_factory=lambda: next(_SEQ))

    # A host alias is judged by *spots* (``spot_of``) where it is judged by pairs elsewhere:
    # the spots where a pair it merged was equal, and those where one differed. None: no alias.
    spots_equal: set[str] | None = None
    spots_differ: set[str] = field(default_factory=set)

    def over_budget(self, max_fp: float) -> bool:
        if self.spots_equal is not None:
            # A ``www`` twin differs by subtree (a part of the site left out of the mirror,
            # issue 25): a dozen differing pages there are one counterexample, not a dozen,
            # and the crawl fetches everything the alias merges in that part anyway
            # (``crawl/learn.py``, ``_distrust``). Retracted once more than a third of the
            # spots compared differ: a wrong alias, whose hosts differ widely, at its first
            # or second differing spot checked (its evidence holds a spot or two).
            spots = len(self.spots_equal | self.spots_differ)
            return len(self.spots_differ) * ALIAS_SPOT_SHARE > spots
        pairs = self.evidence.pairs + self.equal + self.differ
        return self.evidence.differ + self.differ > max_fp * pairs

    def count(self, equal: bool, identity: str) -> bool:
        """Count a pair the rule merges into ``identity``; False if it says nothing new (a
        differing pair in a spot where an alias was found to differ already)."""
        if equal:
            self.equal += 1
            if self.spots_equal is not None:
                self.spots_equal.add(spot_of(identity))
            return True
        if self.spots_equal is not None:
            spot = spot_of(identity)
            if spot in self.spots_differ:
                return False
            self.spots_differ.add(spot)
        self.differ += 1
        return True


@dataclass(slots=True)
class _Host:
    """The evidence of one host (authority)."""

    name: str
    # Spelling -> its content class (NO_DOCUMENT: none), each shown by a fetch or by a
    # permanent redirect to a fetched one (both "verified"); kept small, a few hundred bytes
    # a page: the learner's memory is that of the pages it keeps.
    entries: dict[str, int] = field(default_factory=dict)
    url_ids: dict[str, int] = field(default_factory=dict)
    # class -> its spellings on this host (a str while there is one: most documents)
    by_class: dict[int, str | list[str]] = field(default_factory=dict)
    # spec -> the pairs of spellings (under the rules in force) that suggested it, and those
    # of them a fetch showed on both sides (not only a canonical declaration)
    hints: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    fetched: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    candidates: dict[str, LearnedRule] = field(default_factory=dict)
    # a group's key (its members' specs, as a JSON list) -> its members, validated together
    groups: dict[str, tuple[LearnedRule, ...]] = field(default_factory=dict)
    # spec -> (hints, fetched hints) when it was last validated and rejected
    tried: dict[str, tuple[int, int]] = field(default_factory=dict)
    trust_ok: int = 0  # canonical declarations a fetch confirmed
    trust_bad: int = 0  # ... and refuted
    due: bool = False

    def trusted(self, max_fp: float) -> bool:
        ok, bad = self.trust_ok, self.trust_bad
        return ok >= 1 and bad <= max_fp * (ok + bad)


@dataclass(slots=True)
class _Site:
    """A site: a host and its ``www.``, mobile and printer twins (``site_of_authority``),
    which share content classes (aliases)."""

    index: ContentIndex
    hosts: dict[str, _Host] = field(default_factory=dict)
    # Monitoring, once one of its hosts has a rule: every spelling shown by a fetch, by its
    # identity under the rules in force (None: no rule yet, nothing to monitor).
    members: dict[str, list[tuple[str, int]]] | None = None
    waiting_claims: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    waiting_redirects: dict[str, list[str]] = field(default_factory=dict)
    alias_hints: Counter[tuple[str, str]] = field(default_factory=Counter)
    alias_tried: dict[tuple[str, str], int] = field(default_factory=dict)
    size: int = 0  # entries kept

    def host(self, name: str) -> _Host:
        h = self.hosts.get(name)
        if h is None:
            h = self.hosts[name] = _Host(name)
        return h


#: The first labels of the hosts a site serves its own documents on besides its main host:
#: ``www.h``, the mobile ``m.h``/``mobile.h``, ``amp.h`` and the printer ``print.h`` — the
#: hosts between which an alias is looked for (their templates differ, their main content
#: does not: the content classes compare the main content's fingerprint).
ALIAS_LABELS = frozenset({"www", "m", "mobile", "amp", "print", "wap", "touch"})


def site_of_authority(authority: str) -> str:
    """The site a host belongs to for aliases: its authority without a leading ``www.``,
    ``m.``, ``print.`` … (:data:`ALIAS_LABELS`), so that every such host of a site shares
    its content classes and may be found an alias of another."""
    label, dot, rest = authority.partition(".")
    if dot and label in ALIAS_LABELS and (label == "www" or "." in rest.partition(":")[0]):
        return rest
    return authority


def _alias_rank(host: str, site: str) -> int:
    """Which of two hosts of a site an alias leads to: the main host (0) before ``www.``
    (1) before the mobile, AMP and printer hosts (2), whose pages name the main host's as
    canonical."""
    if host == site:
        return 0
    return 1 if host.startswith("www.") else 2


def _path_query(parts: LenientParts) -> tuple[str, str | None]:
    return parts.path, parts.query


class LiveLearner:
    """Rules per host, learned from the facts of the pages fetched (module docstring)."""

    def __init__(self, options: LiveOptions | None = None) -> None:
        self.options = options or LiveOptions()
        self._sites: OrderedDict[str, _Site] = OrderedDict()
        self._active: dict[str, dict[str, _Active]] = {}
        self._retracted: dict[str, set[str]] = {}
        self._ruleset = RuleSet()
        self._without: dict[tuple[str, str], RuleSet] = {}  # the rule set less one rule
        self._total = 0
        self._differed: list[tuple[str, str, str, str]] = []
        # key -> its identity under ``_ruleset`` (the rule set it was computed for): the
        # learner asks again for every spelling of a host at each pass (``_reps``, ``_hint``)
        self._idents: dict[str, str] = {}
        self._idents_of: RuleSet = self._ruleset

    # -- the rules in force ------------------------------------------------------------------

    @property
    def ruleset(self) -> RuleSet:
        """The active rules, one ``SiteScript`` per host (identity: the authority)."""
        return self._ruleset

    def active(self) -> Iterator[tuple[str, str, LearnedRule]]:
        for host, rules in sorted(self._active.items()):
            for spec, a in rules.items():
                yield host, spec, a.rule

    def is_retracted(self, host: str, spec: str) -> bool:
        return spec in self._retracted.get(host, ())

    def apart(self, key: str) -> str:
        """The identity of ``key`` where its host's alias is distrusted (a part of the site
        where a check found the twin serving other documents): its own host's, with the rules
        of the host the alias leads to — a twin runs its host's software, and its session ids
        and tracking parameters mean there what they mean on the host. Only the bare spelling
        would fetch every one of them: while it is an alias the twin learns no rule of its
        own (the real web's seed 9 fetched 3,810 duplicates so when its alias stayed)."""
        host = authority_of(key)
        if not self._aliases([(host, spec) for spec in self._active.get(host, {})]):
            return key
        merged = self._ruleset.apply(key)
        return key if authority_of(merged) == host else with_authority(merged, host)

    def rules_changing(self, base: str) -> list[str]:
        """The specs of the rules of ``base``'s host that change it (all of the host's rules
        when only their combination does)."""
        rules = self._active.get(authority_of(base))
        if not rules:
            return []
        found = [spec for spec, a in rules.items() if a.rule.apply(base) != base]
        return found or list(rules)

    def adopt(self, host: str, spec: str, rule: LearnedRule, evidence: LiveEvidence) -> bool:
        """Put in force a rule learned before (a resumed crawl) or by another worker; False
        if it cannot be (retracted here, or the reverse of an alias in force)."""
        if spec in self._active.get(host, {}):
            return True
        if self.is_retracted(host, spec) or self._reverses(host, rule):
            return False
        found = _Active(_bare(rule), evidence)
        if isinstance(rule, HostRedirect):
            # The spots of the pairs it was learned on are not stored: they stand as one.
            found.spots_equal = {"(learned)"}
        self._active.setdefault(host, {})[spec] = found
        self._changed(host)
        return True

    def _reverses(self, host: str, rule: LearnedRule) -> bool:
        """Is ``rule`` a host alias whose reverse is in force, or was retracted? Both in
        force would make a cycle that settles nowhere (a rules file holding both applies
        neither, ``_site._settle``); and the pages that refuted one direction refute the
        other: an alias merges the same pairs either way."""
        if not isinstance(rule, HostRedirect):
            return False
        target = replace_host(host, rule.to)
        back = rule_spec(HostRedirect(split_lenient(f"http://{host}/").host))
        return back in self._active.get(target, {}) or self.is_retracted(target, back)

    def forget(self, host: str, spec: str) -> bool:
        """Retract a rule from outside (another worker retracted it); True if it was active."""
        rules = self._active.get(host, {})
        if spec not in rules:
            self._retracted.setdefault(host, set()).add(spec)
            return False
        del rules[spec]
        self._retracted.setdefault(host, set()).add(spec)
        self._changed(host)
        return True

    def _changed(self, host: str) -> None:
        sites = [
            SiteScript(f"learned during the crawl: {h}", (h,), rules=_rules_of(rules))
            for h, rules in sorted(self._active.items())
            if rules
        ]
        self._ruleset = RuleSet(tuple(sites))
        self._without.clear()
        site = self._sites.get(site_of_authority(host))
        if site is not None:
            self._rebuild_members(site)

    def _rules_without(self, host: str, spec: str) -> RuleSet:
        key = (host, spec)
        rs = self._without.get(key)
        if rs is None:
            sites = []
            for h, rules in sorted(self._active.items()):
                kept = {s: a for s, a in rules.items() if (h, s) != key}
                if kept:
                    sites.append(SiteScript(f"learned: {h}", (h,), rules=_rules_of(kept)))
            rs = self._without[key] = RuleSet(tuple(sites))
        return rs

    # -- evidence ----------------------------------------------------------------------------

    def observe(self, facts: Iterable[PageFacts]) -> LiveChanges:
        """Take the facts of a batch of fetches; the retractions their counterexamples cause
        (new rules come from :meth:`learn`)."""
        retracted: list[Retraction] = []
        self._differed = []
        for f in facts:
            retracted += self._observe(f)
        self._evict()
        differed, self._differed = tuple(self._differed), []
        return LiveChanges((), tuple(retracted), differed)

    def _site(self, authority: str) -> _Site:
        name = site_of_authority(authority)
        site = self._sites.get(name)
        if site is None:
            site = self._sites[name] = _Site(ContentIndex(self.options.max_docs))
        else:
            self._sites.move_to_end(name)
        return site

    def _observe(self, f: PageFacts) -> list[Retraction]:
        authority = authority_of(f.key)
        site = self._site(authority)
        host = site.host(authority)
        out: list[Retraction] = []
        if f.document:
            cls = site.index.classify(f.sha1, f.fp)
            if cls is None:
                return out  # the site holds as many documents as it may
            out += self._add(site, host, f.key, cls, f.url_id)
            if f.canonical is not None:
                self._claim(site, host, f.key, cls, f.canonical)
        elif f.no_document:
            out += self._add(site, host, f.key, NO_DOCUMENT, f.url_id)
        elif f.redirect is not None and f.redirect != f.key:
            target = authority_of(f.redirect)
            if site_of_authority(target) != site_of_authority(authority):
                return out  # another site: not a spelling of this one
            known = site.host(target).entries.get(f.redirect)
            if known is not None and known != NO_DOCUMENT:
                out += self._add(site, host, f.key, known, None, away=target != authority)
            elif len(site.waiting_redirects) < _WAITING_CAP * self.options.max_docs:
                site.waiting_redirects.setdefault(f.redirect, []).append(f.key)
        return out

    def _add(
        self,
        site: _Site,
        host: _Host,
        key: str,
        cls: int,
        url_id: int | None,
        *,
        away: bool = False,
    ) -> list[Retraction]:
        """A spelling shown by a fetch (or a redirect to one): mine, monitor, resolve.
        ``away``: a redirect to another host of the site, which says where the document
        lives, not that the host serves it (``_mine``)."""
        old = host.entries.get(key)
        if old is not None and (old != NO_DOCUMENT or cls == NO_DOCUMENT):
            return []  # known already (a document is not undone by a later failure)
        host.entries[key] = cls
        if url_id is not None:
            host.url_ids[key] = url_id
        site.size += old is None
        self._total += old is None
        out = self._monitor(site, key, cls) if site.members is not None else []
        if cls != NO_DOCUMENT:
            self._mine(site, host, key, cls, away=away)
        # What waited for this spelling: canonical claims about it, redirects to it.
        if site.waiting_claims:
            for declarer, claimed in site.waiting_claims.pop(key, ()):
                d = site.host(declarer)
                if claimed == cls:
                    d.trust_ok += 1
                else:
                    d.trust_bad += 1
        if cls != NO_DOCUMENT and site.waiting_redirects:
            for source in site.waiting_redirects.pop(key, ()):
                away = authority_of(source) != authority_of(key)
                out += self._add(
                    site, site.host(authority_of(source)), source, cls, None, away=away
                )
        return out

    def _claim(self, site: _Site, host: _Host, key: str, cls: int, canonical: str) -> None:
        """``key`` (document ``cls``) declares ``canonical`` its canonical URL."""
        if canonical == key:
            # The page at its own canonical URL: the declaration names the very document
            # fetched (a site that declares canonicals, and declares this one rightly).
            host.trust_ok += 1
            return
        target = authority_of(canonical)
        if site_of_authority(target) != site_of_authority(host.name):
            return  # a canonical on another site: counted by stats, no rule of this one
        known = site.host(target).entries.get(canonical)
        if known is not None:
            if known == cls:
                host.trust_ok += 1
            else:
                host.trust_bad += 1
            return
        if len(site.waiting_claims) < _WAITING_CAP * self.options.max_docs:
            site.waiting_claims.setdefault(canonical, []).append((host.name, cls))
        if target == host.name:
            self._hint(host, key, canonical, fetched=False)
        elif _path_query(split_lenient(canonical)) == _path_query(split_lenient(key)):
            # A mobile page naming the main host's page at its own path (RFC 6596 §4: the
            # canonical may be on another host): an alias hint, used only while the
            # declarer is trusted (``_entries``); a fetched pair must still show it.
            site.alias_hints[(host.name, target)] += 1
            site.alias_hints[(target, host.name)] += 1

    def _mine(self, site: _Site, host: _Host, key: str, cls: int, *, away: bool = False) -> None:
        """Pairs with the spellings of the same document: hints for candidate rules. A
        spelling that redirects ``away`` to another host of the site (``www.h/doc/x`` to
        ``h/sec/x``) pairs with no spelling of its own host: the document is the other
        host's, and ``www.h/sec/x`` holding it too is the alias's evidence, not a rule of
        ``www.h`` — such a rule (``substitute /sec/ → /doc/``) would merge the twin's pages
        into the other host's unchecked by subtree, and lose those where the twin differs
        (the real web's seed 4). It still shows the alias (``_alias_pairs``)."""
        if away:
            if len(site.hosts) > 1:
                self._alias_pairs(site, host, key, cls)
            return
        keys = _keys(host.by_class.get(cls))
        for other in keys:
            self._hint(host, key, other, fetched=True)
            if (owner := self._owner(site, key, other)) is not None and owner is not host:
                self._hint(owner, key, other, fetched=True)
        if len(site.hosts) > 1:
            self._alias_pairs(site, host, key, cls)
            self._cross_pairs(site, host, key, cls)
        if not keys:
            host.by_class[cls] = key
        elif len(keys) < self.options.max_bucket:
            host.by_class[cls] = [*keys, key]

    def _alias_pairs(self, site: _Site, host: _Host, key: str, cls: int) -> None:
        """The same path and query holding this document on another host of the site (its
        ``www.``, mobile, printer twin): a hint that one host is the other's alias. Compared
        as the rules in force spell them: the main host's ``/x;jsessionid=A`` is its ``/x``,
        a mobile host's ``/x`` beside it (once a host's session id is dropped, its bare
        spelling is merged, never fetched, and the twins would show no path in common)."""
        mine = self._path_of(key)
        for twin in site.hosts.values():
            if twin is host:
                continue
            for other in _keys(twin.by_class.get(cls)):
                if self._path_of(other) == mine:
                    site.alias_hints[(host.name, twin.name)] += 1
                    site.alias_hints[(twin.name, host.name)] += 1
                    break

    def _owner(self, site: _Site, a: str, b: str) -> _Host | None:
        """The host whose rules would merge ``a`` and ``b``: the one host both are spelled on
        under the rules in force, if it is no alias in force itself (None: none such)."""
        if not self._active:
            return None
        host = authority_of(self._identity(a))
        if host != authority_of(self._identity(b)) or not self._home(host):
            return None
        return site.hosts.get(host)

    def _cross_pairs(self, site: _Site, host: _Host, key: str, cls: int) -> None:
        """Pairs across a host alias in force: ``www.h/x`` (``h/x`` by its alias) beside
        ``h/index.php?page=x`` hints at the rules of ``h``. A twin's spelling fetched first
        holds the main host's identity (``crawl/spellings.py``), and the main host's own
        spelling of that page is never fetched: the main host's query form, its AMP or
        printer form then have no partner on their own host, and the main host's rules were
        learned only once it happened to fetch both forms of some pages itself (the real
        web's seed 1886: ``queryToPath`` at page 1,902 of 3,200, the twin's query forms each
        fetched as a document of its own until then)."""
        if not self._active:
            return
        for twin in site.hosts.values():
            if twin is host:
                continue
            for other in _keys(twin.by_class.get(cls)):
                owner = self._owner(site, key, other)
                if owner is not None:
                    self._hint(owner, key, other, fetched=True)

    def _remine_cross(self, site: _Site) -> None:
        """An alias was put in force: the pairs across it, fetched before, hint again."""
        for host in list(site.hosts.values()):
            for cls, found in list(host.by_class.items()):
                for key in _keys(found):
                    self._cross_pairs(site, host, key, cls)

    def _path_of(self, key: str) -> tuple[str, str | None]:
        return _path_query(split_lenient(self._identity(key) if self._active else key))

    def _hint(self, host: _Host, a: str, b: str, *, fetched: bool) -> None:
        """The pair ``a``, ``b`` (one document) hints at the rules that would merge it —
        mined on the spellings the rules in force give them, so that what those rules leave
        to do is found (parameters in another order once a session id is dropped)."""
        if self._active:
            a, b = self._identity(a), self._identity(b)
        if a == b:
            return
        pair = (a, b) if a < b else (b, a)
        k = self.options.min_support
        rules = pair_candidates(a, b)
        drops = [r for r in rules if isinstance(r, DropParam)]
        named: list[tuple[str, LearnedRule | None]] = [(rule_spec(r), r) for r in rules]
        if 1 < len(drops) <= _GROUP_MAX:
            group = _group_key([rule_spec(r) for r in drops])
            host.groups.setdefault(group, tuple(drops))
            named.append((group, None))
        for spec, rule in named:
            pairs = host.hints.setdefault(spec, set())
            pairs.add(pair)
            sure = host.fetched.setdefault(spec, set())
            if fetched:
                sure.add(pair)
            if rule is not None:
                host.candidates.setdefault(spec, rule)
            if len(pairs) >= k and (len(pairs), len(sure)) > host.tried.get(spec, (0, 0)):
                host.due = True  # validated at the next commit (again, if it gained since)

    def _remine(self, host: _Host) -> None:
        """A rule was put in force: the host's equal pairs hint again under it."""
        for found in host.by_class.values():
            keys = _keys(found)
            for i, a in enumerate(keys):
                for b in keys[i + 1 :]:
                    self._hint(host, a, b, fetched=True)

    # -- monitoring the rules in force -------------------------------------------------------

    def _rebuild_members(self, site: _Site) -> None:
        if not any(self._active.get(h) for h in site.hosts):
            site.members = None  # no rule of the site in force: nothing to monitor
            return
        apply = self._ruleset.apply
        members: dict[str, list[tuple[str, int]]] = {}
        for h in site.hosts.values():
            for key, cls in h.entries.items():
                members.setdefault(apply(key), []).append((key, cls))
        site.members = members

    def _monitor(self, site: _Site, new: str, new_cls: int) -> list[Retraction]:
        """Compare a new spelling with those the rules in force give its identity."""
        assert site.members is not None
        identity = self._ruleset.apply(new)
        group = site.members.setdefault(identity, [])
        out: list[Retraction] = []
        for key, cls in group:
            if key == new or (cls == NO_DOCUMENT and new_cls == NO_DOCUMENT):
                continue
            if out and self._ruleset.apply(key) != self._ruleset.apply(new):
                # A rule retracted just now merged these two: no rule left merges them, and
                # none may be blamed for them (the group was gathered before it went).
                continue
            equal = cls == new_cls
            necessary = self._necessary(key, new)
            if not equal and len(necessary) > 1 and not self._aliases(necessary):
                # Only together do these rules merge the pair: it was not merged before the
                # last of them came, while the others held on the pages they merged alone —
                # the newcomer is the one to blame (a session id dropped weeks ago is not
                # retracted because a sort parameter dropped now merges two orders of a list).
                # Not when a host alias is among them: a twin host differs by subtree, and
                # its first counterexample may well come through a path rule's spelling.
                last = max(necessary, key=self._seq_of)
                without = self._rules_without(*last)
                if without.apply(key) != without.apply(new):
                    necessary = [last]
            elif not equal and authority_of(key) != authority_of(new):
                # Two hosts' spellings, merged only through a host alias: the pair says the
                # twin serves another document there (a subtree left out of the mirror, a
                # mobile template keeping less of a page), not that a parameter of either
                # host selects one. The hosts' own rules are checked by their own pairs; one
                # blamed here would be retracted for good by a twin's difference (the real
                # web's seeds 9 and 17 lost ``jsessionid``, ``src`` and ``tab`` so).
                aliases = [r for r in necessary if self._aliases([r])]
                if len(aliases) > 1 and any(self._home(k) for k, _ in group):
                    # Two twins' spellings (``m.h/x``, ``www.h/x``), each merged into the
                    # third host's: the pair cannot say which twin serves another document,
                    # and would retract both aliases for one's difference (the real web's
                    # seed 15 lost its correct ``m.`` alias to its ``www`` twin's subtree).
                    # The third host's own spelling, there in the group, is compared with
                    # each and blames the twin that differs; without one, both are blamed.
                    continue
                necessary = aliases or necessary
            for rhost, spec in necessary:
                a = self._active.get(rhost, {}).get(spec)
                if a is None:
                    continue
                counted = a.count(equal, identity)
                if not equal:
                    self._differed.append((rhost, spec, key, new))
                    if counted and a.over_budget(self.options.max_fp):
                        out.append(self._retract(rhost, spec, a, key, new))
        group.append((new, new_cls))
        return out

    def _aliases(self, rules: list[tuple[str, str]]) -> bool:
        return any(
            isinstance(a.rule, HostRedirect)
            for h, spec in rules
            if (a := self._active.get(h, {}).get(spec)) is not None
        )

    def _home(self, key: str) -> bool:
        """Is ``key`` on a host that is no alias in force (its spellings are its own)?"""
        host = authority_of(key)
        return not self._aliases([(host, spec) for spec in self._active.get(host, {})])

    def _seq_of(self, rule: tuple[str, str]) -> int:
        a = self._active.get(rule[0], {}).get(rule[1])
        return -1 if a is None else a.seq

    def _necessary(self, a: str, b: str) -> list[tuple[str, str]]:
        """The active rules without which ``a`` and ``b`` would not be merged."""
        hosts = {authority_of(a), authority_of(b)}
        rules = [(h, s) for h in hosts for s in self._active.get(h, {})]
        if not rules:
            return []
        found = []
        for h, s in rules:
            without = self._rules_without(h, s)
            if without.apply(a) != without.apply(b):
                found.append((h, s))
        return found or rules

    def _retract(self, host: str, spec: str, a: _Active, left: str, right: str) -> Retraction:
        pairs = a.evidence.pairs + a.equal + a.differ
        differ = a.evidence.differ + a.differ
        if a.spots_equal is not None:
            spots = len(a.spots_equal | a.spots_differ)
            reason = (
                f"{len(a.spots_differ)} of {spots} spots compared differ "
                f"(more than 1/{ALIAS_SPOT_SHARE}); last: {left} vs {right}"
            )
        else:
            reason = (
                f"{differ} of {pairs} merged pairs differ (budget {self.options.max_fp:.2%}); "
                f"last: {left} vs {right}"
            )
        self.forget(host, spec)
        return Retraction(host, spec, reason)

    # -- learning ----------------------------------------------------------------------------

    def learn(self) -> LiveChanges:
        """Validate the candidates that gathered enough hints since the last call."""
        learned: list[LiveRule] = []
        for site in list(self._sites.values()):
            for host in list(site.hosts.values()):
                if host.due:
                    host.due = False
                    learned += self._learn_host(site, host)
            learned += self._learn_aliases(site)
        return LiveChanges(tuple(learned), ())

    def _entries(self, site: _Site, host: _Host) -> list[Entry]:
        """The host's spellings, with trusted canonical claims about unfetched URLs."""
        entries = [Entry(key, cls) for key, cls in host.entries.items()]
        trusted = {h.name for h in site.hosts.values() if h.trusted(self.options.max_fp)}
        if not trusted:
            return entries
        for key, claims in site.waiting_claims.items():
            if authority_of(key) != host.name or key in host.entries:
                continue
            classes = {cls for declarer, cls in claims if declarer in trusted}
            if len(classes) == 1 and len({cls for _, cls in claims}) == 1:
                entries.append(Entry(key, classes.pop(), verified=False))
        return entries

    def _aliased(self, site: _Site, host: _Host) -> list[Entry]:
        """The spellings of the hosts whose alias in force leads to ``host``, fetched there:
        they are ``host``'s pages under its own identities (``_cross_pairs``), measured with
        its own, which come first (``_reps`` keeps the first spelling of an identity). Not
        those in a spot where the alias was found to differ: there the twin serves other
        documents, and the pair says nothing of a rule of ``host`` (``_monitor`` blames
        such a pair on the alias alone)."""
        out: list[Entry] = []
        for twin in site.hosts.values():
            if twin is host:
                continue
            aliases = [
                a for a in self._active.get(twin.name, {}).values() if a.spots_equal is not None
            ]
            if not aliases:
                continue
            differ: set[str] = set()
            for a in aliases:
                differ |= a.spots_differ
            for key, cls in twin.entries.items():
                if cls == NO_DOCUMENT:
                    continue  # a twin's missing page says nothing of the host's rules
                ident = self._identity(key)
                if authority_of(ident) == host.name and spot_of(ident) not in differ:
                    out.append(Entry(key, cls))
        return out

    def _identity(self, key: str) -> str:
        """``key`` under the rules in force, remembered until they change."""
        if self._idents_of is not self._ruleset or len(self._idents) > 2 * self.options.max_total:
            self._idents = {}
            self._idents_of = self._ruleset
        found = self._idents.get(key)
        if found is None:
            found = self._idents[key] = self._ruleset.apply(key)
        return found

    def _reps(self, entries: list[Entry]) -> list[Entry]:
        """One spelling per identity under the rules in force (a document before none)."""
        apply = self._identity
        reps: dict[str, Entry] = {}
        for e in entries:
            akey = apply(e.key) if self._active else e.key
            old = reps.get(akey)
            if old is None or (old.cls == NO_DOCUMENT and e.cls != NO_DOCUMENT):
                reps[akey] = Entry(akey, e.cls, e.verified)
        return list(reps.values())

    def _accepts(self, ev: LiveEvidence) -> bool:
        o = self.options
        return ev.support >= o.min_support and ev.verified >= 1 and ev.differ <= o.max_fp * ev.pairs

    def _learn_host(self, site: _Site, host: _Host) -> list[LiveRule]:
        if self._aliases([(host.name, spec) for spec in self._active.get(host.name, {})]):
            # The host is an alias in force: its URLs go to the other host before any rule
            # of its own could apply, and that host learns from the same pairs. (Its hints
            # are kept: if the alias is retracted, they are validated then.)
            host.due = True
            return []
        k = self.options.min_support
        active = set(self._active.get(host.name, {}))
        retracted = self._retracted.get(host.name, set())
        tried = host.tried
        ready = [
            (spec, n)
            for spec, pairs in host.hints.items()
            for n in [(len(pairs), len(host.fetched.get(spec, ())))]
            if n[0] >= k and n > tried.get(spec, (0, 0)) and spec not in active | retracted
        ]
        if not ready:
            return []

        def order(sn: tuple[str, tuple[int, int]]) -> tuple[int, int, str]:
            # A group after its members: one of them alone may be all the site needs.
            group = sn[0] in host.groups
            element = "dropParam" if group else host.candidates[sn[0]].element
            return (_ORDER[element] * 2 + group, -sn[1][0], sn[0])

        ready.sort(key=order)
        entries = self._entries(site, host) + self._aliased(site, host)
        reps = self._reps(entries)
        out: list[LiveRule] = []
        for spec, n in ready[: self.options.per_pass]:
            if spec in host.groups:
                found = self._learn_group(host, spec, reps)
                if not found:
                    host.tried[spec] = n
                    continue
                out += found
                reps = self._reps(entries)
                continue
            if spec in self._active.get(host.name, {}):
                continue  # learned just now, with a group
            rule = host.candidates[spec]
            ev = measure(rule.apply, reps)
            if not self._accepts(ev):
                host.tried[spec] = n
                continue
            out.append(self._accept(host.name, spec, rule, ev, reps))
            reps = self._reps(entries)  # the next candidates are measured with it in force
        if out:
            self._remine(host)
            self._remine_cross(site)
        if len(ready) > self.options.per_pass:
            host.due = True  # the rest at the next commit
        return out

    def _learn_group(self, host: _Host, group: str, reps: list[Entry]) -> list[LiveRule]:
        """Parameters that never matter together (``?a=1&b=2`` and the bare URL): validated
        as one candidate, each dropped by a rule of its own once they pass. Every member
        alone must keep within the budget too: each is applied alone where the other
        parameter is missing."""
        active = self._active.get(host.name, {})
        retracted = self._retracted.get(host.name, set())
        members = [(rule_spec(r), r) for r in host.groups[group]]
        if any(spec in retracted for spec, _ in members):
            return []
        todo = [(spec, r) for spec, r in members if spec not in active]
        if len(todo) < 2:
            return []  # what is left is one parameter: its own candidate

        def apply(url: str) -> str:
            for _, r in todo:
                url = r.apply(url)
            return url

        ev = measure(apply, reps)
        if not self._accepts(ev):
            return []
        o = self.options
        for _, r in todo:
            alone = measure(r.apply, reps)
            if alone.differ > o.max_fp * alone.pairs:
                return []
        names = ", ".join(r.describe() for _, r in todo)
        return [self._accept(host.name, spec, r, ev, reps, together=names) for spec, r in todo]

    def _accept(
        self,
        host: str,
        spec: str,
        rule: LearnedRule,
        ev: LiveEvidence,
        reps: list[Entry],
        *,
        together: str | None = None,
        spots: set[str] | None = None,
    ) -> LiveRule:
        fetched = sum(1 for e in reps if e.verified)
        claimed = len(reps) - fetched
        sources = f"{ev.verified} pair{'' if ev.verified == 1 else 's'} fetched"
        if claimed and ev.verified < ev.equal:
            sources += f", {ev.equal - ev.verified} declared canonical"
        if together is not None:
            sources += f" (together: {together})"
        self._active.setdefault(host, {})[spec] = _Active(rule, ev, spots_equal=spots)
        self._changed(host)
        return LiveRule(host, spec, _with_evidence(rule, ev), ev, sources)

    def _learn_aliases(self, site: _Site) -> list[LiveRule]:
        """A host whose pages are its ``www.`` twin's (or the reverse): a host alias."""
        k = self.options.min_support
        out: list[LiveRule] = []
        for (src, dst), n in list(site.alias_hints.items()):
            if n < k or n <= site.alias_tried.get((src, dst), 0):
                continue
            s, d = site.hosts.get(src), site.hosts.get(dst)
            if s is None or d is None:
                continue
            # Between a host and its ``www.`` twin the target is the host with more
            # documents (the spelling the site links most), the bare host on a tie — as
            # ``rules learn`` chooses; a mobile, AMP or printer host leads to the main host
            # (or ``www.``), never the reverse; two of those are no alias of each other.
            name = site_of_authority(src)
            rank_src, rank_dst = _alias_rank(src, name), _alias_rank(dst, name)
            if rank_src < 2 and rank_dst < 2:
                n_src, n_dst = len(s.entries), len(d.entries)
                if n_src > n_dst or (n_src == n_dst and not src.startswith("www.")):
                    continue
            elif rank_dst >= rank_src or (rank_dst == 1 and name in site.hosts):
                # ... and to ``www.`` only on a site whose main host was never seen: a
                # ``www.`` twin may differ from the main host in a subtree, and the mobile
                # pages merged into its spellings would hold identities of that subtree.
                continue
            rule = HostRedirect(split_lenient(f"http://{dst}/").host)
            spec = rule_spec(rule)
            if spec in self._active.get(src, {}) or self.is_retracted(src, spec):
                continue
            if any(isinstance(a.rule, HostRedirect) for a in self._active.get(src, {}).values()):
                continue  # one alias per host: m.h → www.h and m.h → h would fight
            if self._reverses(src, rule):
                continue  # never both ways: the alias in force stays the one
            apply = self._ruleset.apply
            entries = [
                Entry(apply(rule.apply(e.key)), e.cls, e.verified, side=0)
                for e in self._entries(site, s)
            ] + [Entry(apply(e.key), e.cls, e.verified, side=1) for e in self._entries(site, d)]
            ev = measure(lambda u: u, entries, sides=True)
            site.alias_tried[(src, dst)] = n
            site.alias_tried[(dst, src)] = n
            if self._accepts(ev):
                # Where the two hosts were seen to agree: the alias's first spots.
                mine = {e.key: e.cls for e in entries if e.side == 0 and e.cls != NO_DOCUMENT}
                spots = {
                    spot_of(e.key) for e in entries if e.side == 1 and mine.get(e.key) == e.cls
                }
                out.append(self._accept(src, spec, rule, ev, entries, spots=spots))
        if out:
            self._remine_cross(site)
        return out

    # -- memory ------------------------------------------------------------------------------

    def _evict(self) -> None:
        """Forget the evidence of the sites least recently heard from (rules stay)."""
        while self._total > self.options.max_total and len(self._sites) > 1:
            _, site = self._sites.popitem(last=False)
            self._total -= site.size

    # -- for tests and the crawl's figures -------------------------------------------------

    def trust(self, host: str) -> tuple[int, int]:
        """``(confirmed, refuted)`` canonical declarations of ``host`` so far."""
        site = self._sites.get(site_of_authority(host))
        h = site.hosts.get(host) if site is not None else None
        return (h.trust_ok, h.trust_bad) if h is not None else (0, 0)

    def documents(self, host: str) -> dict[str, int]:
        """``key -> url id`` of the documents of ``host`` fetched (and kept)."""
        site = self._sites.get(site_of_authority(host))
        h = site.hosts.get(host) if site is not None else None
        if h is None:
            return {}
        return {k: i for k, i in h.url_ids.items() if h.entries[k] != NO_DOCUMENT}


def _bare(rule: LearnedRule) -> LearnedRule:
    """The rule without its evidence (evidence lives beside it)."""
    return rule_from_spec(rule_spec(rule))


def _with_evidence(rule: LearnedRule, ev: LiveEvidence) -> LearnedRule:
    return rule_from_spec(rule_spec(rule), ev.support, round(ev.fp_rate, 6))


def _group_key(specs: list[str]) -> str:
    return json.dumps(sorted(specs), separators=(",", ":"))


def _keys(found: str | list[str] | None) -> list[str]:
    if found is None:
        return []
    return [found] if isinstance(found, str) else found


def _rules_of(rules: dict[str, _Active]) -> tuple[LearnedRule, ...]:
    return tuple(a.rule for a in rules.values())
