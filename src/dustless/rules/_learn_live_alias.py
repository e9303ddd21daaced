"""The live learner's host-alias part (``_learn_live.py``): judging the rules in force and
retracting them, learning a host alias, and the pairs of URLs across an alias in force.

A host alias (``HostRedirect``: ``www.h``, ``m.h`` … to ``h``) is judged and mined unlike
the other rules: by *spots* (``spot_of``), not pairs, since a twin differs by subtree; blamed
alone for a pair of two hosts' spellings; and the pairs it merges hint at the rules of the
host it leads to. That logic is all here, in a mixin ``LiveLearner`` inherits, so that the
learner's module keeps to evidence and learning; the methods are the learner's own, moved
as they were. What they use of the learner is declared below (its state, and its methods
for ``mypy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dustless.url import authority_of, replace_host, split_lenient, with_authority

from ._learn_hosts import spot_of
from ._learn_live_rules import NO_DOCUMENT, Entry, LiveEvidence, measure, rule_spec
from ._learn_live_state import (
    ALIAS_SPOT_SHARE,
    LiveOptions,
    LiveRule,
    Retraction,
    _Active,
    _Host,
    _keys,
    _Site,
    site_of_authority,
)
from ._learned import HostRedirect, LearnedRule
from ._site import RuleSet

__all__ = ["HostAliases"]


def _alias_rank(host: str, site: str) -> int:
    """Which of two hosts of a site an alias leads to: the main host (0) before ``www.``
    (1) before the mobile, AMP and printer hosts (2), whose pages name the main host's as
    canonical."""
    if host == site:
        return 0
    return 1 if host.startswith("www.") else 2


class HostAliases:
    """The host-alias part of ``LiveLearner`` (module docstring); ``LiveLearner`` sets the
    state below."""

    options: LiveOptions
    _active: dict[str, dict[str, _Active]]
    _ruleset: RuleSet
    _differed: list[tuple[str, str, str, str]]

    if TYPE_CHECKING:  # ``LiveLearner``'s methods this part calls

        def is_retracted(self, host: str, spec: str) -> bool: ...
        def forget(self, host: str, spec: str) -> bool: ...
        def _rules_without(self, host: str, spec: str) -> RuleSet: ...
        def _identity(self, key: str) -> str: ...
        def _path_of(self, key: str) -> tuple[str, str | None]: ...
        def _hint(self, host: _Host, a: str, b: str, *, fetched: bool) -> None: ...
        def _entries(self, site: _Site, host: _Host) -> list[Entry]: ...
        def _accepts(self, ev: LiveEvidence) -> bool: ...
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
        ) -> LiveRule: ...

    # -- an alias in force -------------------------------------------------------------------

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

    # -- pairs across an alias --------------------------------------------------------------

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

    # -- learning an alias -------------------------------------------------------------------

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
