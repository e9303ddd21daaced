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

The learner's values (options, facts, the state kept per host and site) are in
``_learn_live_state.py``; its host-alias part (judging the rules in force, learning an
alias, the pairs across one) in ``_learn_live_alias.py``, a mixin it inherits.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from dustless.url import LenientParts, authority_of, split_lenient

from ._learn_live_alias import HostAliases
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
from ._learn_live_state import (
    LiveChanges,
    LiveOptions,
    LiveRule,
    PageFacts,
    Retraction,
    _Active,
    _Host,
    _keys,
    _Site,
    site_of_authority,
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


def _path_query(parts: LenientParts) -> tuple[str, str | None]:
    return parts.path, parts.query


class LiveLearner(HostAliases):
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


def _rules_of(rules: dict[str, _Active]) -> tuple[LearnedRule, ...]:
    return tuple(a.rule for a in rules.values())
