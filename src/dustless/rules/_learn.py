"""Learning URL rules from a crawl: DustBuster plus what the servers said (seed 001).

``learn_rules(observations)`` is pure: it takes the crawl's fetches as
``(url, status, payload sha1, redirect location)`` and returns a ``RuleSet`` of learned
rules (one ``<site>`` per host, written with ``dump_script``) and every finding, accepted
or not, with its evidence. The stages follow the order in which ``SiteScript.apply`` runs
the rules, and each stage learns on the URLs the earlier ones already rewrote:

1. host rules — permanent redirects (``/dir`` → ``/dir/``: ``AddSlash``; a host to another:
   ``HostRedirect``), right by the server's word; and ``www`` twins serving the same pages;
2. query-parameter rules (``_learn_params``): drop or fix;
3. template rules (``_learn_subst.learn_templates``): a leading path prefix
   (``/amp/{rest}`` → ``/{rest}``) and a query form of the path
   (``/index.php?page={x}`` → ``/{x}``), one rule where substrings would need one per
   section;
4. substring substitutions (``_learn_subst``): DustBuster's mining, ranking by support,
   redundancy elimination and validation against the fetched content (``max_fp``).

The only I/O is ``dustless.analysis.read_observations``, a thin reader over the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dustless.errors import InvalidOption
from dustless.url import split_lenient

from ._learn_evidence import Doc, Evidence, Observation, documents_by_host, measure
from ._learn_hosts import learn_aliases, learn_redirects
from ._learn_params import learn_params
from ._learn_subst import learn_substitutions, learn_templates
from ._learned import HostRedirect, LearnedRule
from ._site import RuleSet, SiteScript

__all__ = ["Finding", "LearnOptions", "LearnResult", "evaluate_rules", "learn_rules"]


@dataclass(frozen=True, slots=True)
class LearnOptions:
    """``max_fp``: the highest measured false-positive rate a content-learned rule may have
    (DustBuster validates at a few percent; seed 000 §5 accepts about 1 % coverage loss).
    ``min_support``: fewest equal-content URL pairs a content-learned rule needs
    (redirect rules need one redirect: the server said so). ``max_bucket``: DustBuster's
    bucket-size limit — larger groups of URLs with one payload are not mined.
    ``redirects=False`` leaves out the rules learned from redirects (see the docs: a crawler
    must follow a redirect to a URL of the same identity, or such a rule loses the page)."""

    max_fp: float = 0.01
    min_support: int = 2
    max_bucket: int = 64
    redirects: bool = True  # learn the rules servers state by redirecting (seed 001)

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_fp <= 1.0:
            raise InvalidOption(f"--max-fp must be a fraction in [0, 1], not {self.max_fp}")
        if self.min_support < 1:
            raise InvalidOption(f"--min-support must be >= 1, not {self.min_support}")
        if self.max_bucket < 2:
            raise InvalidOption(f"bucket size limit must be >= 2, not {self.max_bucket}")


@dataclass(frozen=True, slots=True)
class Finding:
    """One candidate rule for ``host``: the rule (with support and fp), evidence, verdict."""

    host: str
    stage: str  # "redirect", "alias", "param", "template", "substitute"
    rule: LearnedRule
    evidence: Evidence
    accepted: bool
    reason: str


@dataclass(frozen=True, slots=True)
class LearnResult:
    rules: RuleSet
    findings: tuple[Finding, ...]
    observations: int
    documents: int
    hosts: int
    overall: Evidence  # all the rules together on the crawl's documents

    @property
    def accepted(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.accepted)

    @property
    def rejected(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.accepted)


class _Rules:
    """The accepted rules per host, in the order ``SiteScript`` applies them."""

    def __init__(self) -> None:
        self.by_host: dict[str, list[LearnedRule]] = {}

    def add(self, host: str, rule: LearnedRule) -> None:
        self.by_host.setdefault(host, []).append(rule)

    def ruleset(self) -> RuleSet:
        sites = [
            SiteScript(f"learned: {host}", (host,), rules=tuple(rules))
            for host, rules in sorted(self.by_host.items())
            if rules
        ]
        return RuleSet(tuple(sites))


def _regroup(by_host: Mapping[str, Sequence[Doc]], rules: RuleSet) -> dict[str, list[Doc]]:
    out: dict[str, list[Doc]] = {}
    seen: set[str] = set()
    for docs in by_host.values():
        for d in docs:
            url = rules.apply(d.url)
            if url in seen:
                continue  # one document per URL: the first spelling stands for the others
            seen.add(url)
            out.setdefault(split_lenient(url).host, []).append(Doc(url, d.sha1))
    return out


def learn_rules(
    observations: Iterable[Observation], options: LearnOptions | None = None
) -> LearnResult:
    """Learn per-host rules from a crawl's fetches (pure; see the module docstring)."""
    opts = options or LearnOptions()
    obs = list(observations)
    by_host = documents_by_host(obs)
    findings: list[Finding] = []
    rules = _Rules()

    # 1. What the servers said, then www twins that serve the same pages.
    for f in learn_redirects(obs, by_host) if opts.redirects else ():
        findings.append(Finding(f.host, "redirect", f.rule, f.evidence, f.accepted, f.reason))
        if f.accepted:
            rules.add(f.host, f.rule)
    redirected = {h for h, rs in rules.by_host.items() if any(_is_host(r) for r in rs)}
    for f in learn_aliases(
        by_host, max_fp=opts.max_fp, min_support=opts.min_support, skip=redirected
    ):
        findings.append(Finding(f.host, "alias", f.rule, f.evidence, f.accepted, f.reason))
        if f.accepted:
            rules.add(f.host, f.rule)

    # 2. Parameters, on the documents moved to their canonical hosts.
    current = _regroup(by_host, rules.ruleset())
    for host in sorted(current):
        for p in learn_params(
            host, current[host], max_fp=opts.max_fp, min_support=opts.min_support
        ):
            findings.append(Finding(host, "param", p.rule, p.evidence, p.accepted, p.reason))
            if p.accepted:
                rules.add(host, p.rule)

    # 3. Template rules, then 4. DustBuster substitutions, each on the URLs the rules found
    # before it already rewrote (the same candidates and the same acceptance).
    for kind, learn in (("template", learn_templates), ("substitute", learn_substitutions)):
        current = _regroup(by_host, rules.ruleset())
        for host in sorted(current):
            for c in learn(
                host,
                current[host],
                max_fp=opts.max_fp,
                min_support=opts.min_support,
                max_bucket=opts.max_bucket,
            ):
                findings.append(Finding(host, kind, c.rule, c.evidence, c.accepted, c.reason))
                if c.accepted:
                    rules.add(host, c.rule)

    learned = rules.ruleset()
    all_docs = [d for docs in by_host.values() for d in docs]
    return LearnResult(
        learned,
        tuple(findings),
        observations=len(obs),
        documents=len(all_docs),
        hosts=len(by_host),
        overall=measure(learned.apply, all_docs),
    )


def _is_host(rule: LearnedRule) -> bool:
    return isinstance(rule, HostRedirect)


def evaluate_rules(rules: RuleSet, observations: Iterable[Observation]) -> Evidence:
    """All the rules together on a crawl's documents: merged pairs and equal ones."""
    docs = [d for ds in documents_by_host(observations).values() for d in ds]
    return measure(rules.apply, docs)
