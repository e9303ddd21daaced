"""The live learner's values (``_learn_live.py``): its options, the facts it is given, what
it answers, and the evidence it keeps per host and per site.

Apart from ``LiveLearner`` because they are plain data with small methods of their own, read
by both the learner and its host-alias part (``_learn_live_alias.py``): a rule in force
(``_Active``, its budget and, for a host alias, its spots), a host's spellings and hints
(``_Host``), a site's hosts and what waits for a fetch (``_Site``), and which hosts form a
site (``site_of_authority``).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from dustless.errors import InvalidOption

from ._learn_hosts import spot_of
from ._learn_live_index import ContentIndex
from ._learn_live_rules import LiveEvidence
from ._learned import LearnedRule

__all__ = [
    "ALIAS_LABELS",
    "ALIAS_SPOT_SHARE",
    "LiveChanges",
    "LiveOptions",
    "LiveRule",
    "PageFacts",
    "Retraction",
    "site_of_authority",
]

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


def _keys(found: str | list[str] | None) -> list[str]:
    if found is None:
        return []
    return [found] if isinstance(found, str) else found
