"""The pieces of the live learner that know rules: names, candidates, measures (pure).

* :func:`rule_spec` / :func:`rule_from_spec`: a rule's identity as a short JSON text (what the
  crawl DB keeps per host), without its evidence.
* :func:`pair_candidates`: the rules an equal-content URL pair suggests — the candidates of
  ``rules learn`` (DustBuster, Bar-Yossef, Keidar & Schonfeld, WWW 2007, §4: a pair of URLs
  with the same document suggests the rule that rewrites one into the other): a query
  parameter that differs (``dropParam``), parameters in another order, a substring
  (``substitute``), a default document, a trailing slash, the path's case (``normalize``).
* :func:`measure`: what a rule merges among a site's documents, and how often the merged ones
  differ — DustBuster §5's validation, with the crawler's own counterexample added: a
  spelling that yields no document merged with one that does (``no_document``).
* :class:`LiveRules`: the learned rules as the normalizer's ``site-rules`` step sees them,
  swapped whole when a rule is learned or retracted (the crawl's one writer is its loop).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dustless.errors import ScriptError
from dustless.url import authority_of, replace_host, split_lenient, with_authority

from ._learn_hosts import directory_of, in_part
from ._learn_params import _params
from ._learn_subst import _canon_key, _segment_rules, diff_rule, template_candidates
from ._learned import (
    AddSlash,
    DropParam,
    FixParam,
    HostRedirect,
    LearnedRule,
    NormalizeStep,
    QueryToPath,
    StripPrefix,
    Substitute,
)
from ._site import RuleSet

__all__ = [
    "NO_DOCUMENT",
    "Entry",
    "LiveEvidence",
    "LiveRules",
    "measure",
    "pair_candidates",
    "rule_from_spec",
    "rule_spec",
]

#: The class of a spelling that yielded no document (4xx, 5xx, no answer).
NO_DOCUMENT = -1

# Normalizer steps a pair may show a site needs; each is tried on both URLs of the pair.
_STEPS = (
    "lowercase-path",
    "add-trailing-slash",
    "remove-trailing-slash",
    "collapse-slashes",
    "remove-empty-query",
)


# -- names -----------------------------------------------------------------------------------


def rule_spec(rule: LearnedRule) -> str:
    """The rule's identity (kind and parameters, not its evidence) as canonical JSON."""
    data: dict[str, str] = {"element": rule.element}
    if isinstance(rule, Substitute):
        data.update({"from": rule.find, "to": rule.replace})
    elif isinstance(rule, DropParam):
        data["name"] = rule.name
        if rule.path is not None:
            data["path"] = rule.path
    elif isinstance(rule, FixParam):
        data.update({"name": rule.name, "value": rule.value})
        if rule.path is not None:
            data["path"] = rule.path
    elif isinstance(rule, AddSlash):
        if rule.path is not None:
            data["path"] = rule.path
    elif isinstance(rule, HostRedirect):
        data["to"] = rule.to
    elif isinstance(rule, StripPrefix):
        data["prefix"] = rule.prefix
    elif isinstance(rule, QueryToPath):
        data.update({"path": rule.path, "param": rule.param, "to": rule.to})
    else:
        data["step"] = rule.step
        if rule.documents is not None:
            data["documents"] = rule.documents
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def rule_from_spec(
    spec: str, support: int | None = None, fp_rate: float | None = None
) -> LearnedRule:
    """The rule a :func:`rule_spec` text names, with the evidence given (``ScriptError`` if
    the text names no rule)."""
    try:
        data = json.loads(spec)
        element = data["element"]
        path = data.get("path")
        if element == "substitute":
            return Substitute(data["from"], data["to"], support, fp_rate)
        if element == "dropParam":
            return DropParam(data["name"], path, support, fp_rate)
        if element == "fixParam":
            return FixParam(data["name"], data["value"], path, support, fp_rate)
        if element == "addSlash":
            return AddSlash(path, support, fp_rate)
        if element == "hostRedirect":
            return HostRedirect(data["to"], support, fp_rate)
        if element == "stripPrefix":
            return StripPrefix(data["prefix"], support, fp_rate)
        if element == "queryToPath":
            return QueryToPath(data["path"], data["param"], data["to"], support, fp_rate)
        if element == "normalize":
            return NormalizeStep(data["step"], data.get("documents"), support, fp_rate)
    except (ValueError, KeyError, TypeError) as exc:
        raise ScriptError(f"learned rule {spec!r} cannot be read: {exc}") from None
    raise ScriptError(f"learned rule {spec!r}: unknown element {element!r}")


# -- candidates --------------------------------------------------------------------------------


def _step(name: str, documents: str | None = None) -> Callable[[str], str]:
    return NormalizeStep(name, documents).apply


def _last_segment_difference(a_path: str, b_path: str) -> str | None:
    """``index.php`` when one path is ``/dir/`` and the other ``/dir/index.php``."""
    short, long_ = sorted((a_path, b_path), key=len)
    if short.endswith("/") and long_.startswith(short):
        rest = long_[len(short) :]
        if rest and "/" not in rest and ";" not in rest:
            return rest
    return None


def pair_candidates(a: str, b: str) -> list[LearnedRule]:
    """The rules that would make two spellings of one document (same authority) one."""
    pa, pb = split_lenient(a), split_lenient(b)
    if pa.authority != pb.authority or a == b:
        return []
    out: list[LearnedRule] = []
    path_a, params_a = _params(a)
    path_b, params_b = _params(b)
    if path_a == path_b:
        # Only the parameters differ (query, or ;name=value in the path): DustBuster's
        # "parameter" DUST. Each parameter that differs may be one that never matters.
        da, db = dict(params_a), dict(params_b)
        names = (da.keys() ^ db.keys()) | {n for n in da.keys() & db.keys() if da[n] != db[n]}
        for name in sorted(n for n in names if n):
            out.append(DropParam(name))
        if not names and sorted(params_a, key=str) == sorted(params_b, key=str):
            out.append(NormalizeStep("sort-query"))
    else:
        # The paths differ: substrings (DustBuster §4), the canonical spelling the target.
        head = f"{pa.scheme}://{pa.authority}"
        rest_a, rest_b = a[len(head) :], b[len(head) :]
        canon, variant = sorted((rest_a, rest_b), key=_canon_key)
        found = [diff_rule(variant, canon), *_segment_rules(variant, canon)]
        for rule in dict.fromkeys(r for r in found if r is not None):
            with contextlib.suppress(ScriptError):  # "to" contains "from": never settles
                out.append(Substitute(*rule))
        if pa.query == pb.query:
            document = _last_segment_difference(pa.path, pb.path)
            if document is not None and "." in document:
                out.append(NormalizeStep("remove-default-document", document))
            if pa.path + "/" == pb.path or pb.path + "/" == pa.path:
                out.append(AddSlash())
        out += template_candidates(a, b)
        for name in _STEPS:
            step = _step(name)
            sa, sb = step(a), step(b)
            if sa == sb and (sa != a or sb != b):
                out.append(NormalizeStep(name))
    return out


# -- measuring -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entry:
    """What the learner knows of one spelling: its class (``NO_DOCUMENT`` if it yielded
    none), and whether a fetch showed it (``verified``) or only a page's declaration did."""

    key: str
    cls: int
    verified: bool = True
    side: int = 0  # for a host alias: 0 the host merged, 1 the host it is merged into


@dataclass(frozen=True, slots=True)
class LiveEvidence:
    """What a rule does to a site's spellings: ``pairs`` merged of which ``equal`` have the
    same document and ``differ`` not; ``support``: merged groups holding an equal pair
    (independent evidence: one group is one resource); ``verified``: equal pairs a fetch
    showed on both sides (not a canonical declaration)."""

    pairs: int = 0
    equal: int = 0
    support: int = 0
    verified: int = 0

    @property
    def differ(self) -> int:
        return self.pairs - self.equal

    @property
    def fp_rate(self) -> float:
        return self.differ / self.pairs if self.pairs else 0.0

    def __add__(self, other: LiveEvidence) -> LiveEvidence:
        return LiveEvidence(
            self.pairs + other.pairs,
            self.equal + other.equal,
            self.support + other.support,
            self.verified + other.verified,
        )


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def measure(
    apply: Callable[[str], str],
    entries: Iterable[Entry],
    *,
    sides: bool = False,
) -> LiveEvidence:
    """The pairs of ``entries`` that ``apply`` gives one URL (each entry a distinct spelling).

    A pair of documents counts equal or differ by class; a spelling without a document
    merged with one that has a document differs (merging them could cost that page); two
    without a document are no pair (neither is a resource). ``sides``: only pairs across the
    two ``Entry.side`` count (a host alias merges one host into another; pairs inside one
    host are not its doing).
    """
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(apply(e.key), []).append(e)
    pairs = equal = support = verified = 0
    for members in groups.values():
        if len(members) < 2:
            continue
        if not sides:
            docs = [m for m in members if m.cls != NO_DOCUMENT]
            n_doc = len(docs)
            n_none = len(members) - n_doc
            counts = Counter(m.cls for m in docs)
            same = sum(_pairs(c) for c in counts.values())
            sure = Counter(m.cls for m in docs if m.verified)
            pairs += _pairs(n_doc) + n_doc * n_none
            equal += same
            verified += sum(_pairs(c) for c in sure.values())
            support += same > 0
            continue
        left = [m for m in members if m.side == 0]
        right = [m for m in members if m.side == 1]
        got = 0
        for x in left:
            for y in right:
                if x.cls == NO_DOCUMENT and y.cls == NO_DOCUMENT:
                    continue
                pairs += 1
                if x.cls == y.cls:
                    got += 1
                    verified += x.verified and y.verified
        equal += got
        support += got > 0
    return LiveEvidence(pairs, equal, support, verified)


# -- applying ------------------------------------------------------------------------------------


class LiveRules:
    """The learned rules in force, as the normalizer's ``site-rules`` step: ``apply(url)``.

    Only URLs of a host with a rule are touched (one ``str.find`` and a set lookup for the
    others); their rules run as a ``RuleSet`` does — host rules first, then parameters,
    substrings, normalizer steps, slashes — until nothing changes, and a host rule hands the
    URL on to the rules of the host it names.
    """

    __slots__ = ("_apart", "_hosts", "_rules", "_touched")

    def __init__(self) -> None:
        self._rules = RuleSet()
        self._hosts: frozenset[str] = frozenset()
        self._touched: frozenset[str] = frozenset()
        # host -> the directories where its alias is distrusted (``keep_apart``)
        self._apart: dict[str, set[str]] = {}

    def keep_apart(self, host: str, directory: str) -> None:
        """A check found ``host`` (an alias) serving other documents in ``directory`` of the
        site: its URLs there (and below, but for the top level: its own pages only) keep
        their host, with the rules of the host the alias leads to (``with_authority``) — a link to
        the twin's page there is the twin's from its first admission, not the main host's
        page until its fetch says otherwise."""
        self._apart.setdefault(host, set()).add(directory)

    def set(self, rules: RuleSet) -> None:
        """Put ``rules`` in force (one ``SiteScript`` per host, identity = its authority)."""
        self._rules = rules
        self._hosts = frozenset(i for s in rules.sites for i in s.identities)
        targets = {
            replace_host(i, r.to)
            for s in rules.sites
            for i in s.identities
            for r in s.rules
            if isinstance(r, HostRedirect)
        }
        self._touched = self._hosts | targets

    @property
    def rules(self) -> RuleSet:
        return self._rules

    @property
    def hosts(self) -> frozenset[str]:
        """The authorities with rules: the only URLs ``apply`` changes."""
        return self._hosts

    @property
    def touched(self) -> frozenset[str]:
        """Where a rewritten URL may lead: the hosts with rules and the hosts they alias to."""
        return self._touched

    def apply(self, url: str) -> str:
        if not self._hosts or (host := authority_of(url)) not in self._hosts:
            return url
        out = self._rules.apply(url)
        parts = self._apart.get(host)
        if not parts or authority_of(out) == host:
            return out  # the common case first: a link of no distrusted part
        if any(in_part(directory_of(out), p) for p in parts):
            return with_authority(out, host)
        return out
