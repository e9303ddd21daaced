"""Redundancy rate and coverage loss rate of a normalization method (seed 000 §3).

Seed 000 §3 defines, for a normalization factor F:

* the *candidate sets* ``U_i``: the URLs that F regards as the same URL; the whole URL set
  ``U`` is partitioned into them, and a set with a single element is left out of both
  metrics ("1개의 원소만을 가진 동일 후보 URL 집합은 … 제외");
* ``D_i``: the documents downloaded successfully from ``U_i``; ``n(D_i)`` their number and
  ``un(D_i)`` the number of distinct documents (distinct payload hashes);
* formula (1), redundancy rate = Σ (n(D_i) − un(D_i)) / Σ n(D_i);
* formula (2), coverage loss rate = 1 − N_normal / Σ un(D_i), where ``N_normal`` is the
  number of documents downloaded successfully from the normalized URLs.

Table 1 of seed 000 reports, for every method of a factor, the redundancy of what that
method downloads (0.52 for "leave the path alone", 0 for "lowercase it": the method requests
one URL per set) and its coverage loss (0 for "leave it alone"). :class:`MethodRow` holds
both, plus the redundancy of the candidate sets themselves (the "before" figure of the
worked example), so a caller can show how much redundancy a method removes.

Everything here is pure: observations in, rows out. The caller passes the methods as plain
functions (``lambda u: normalize(u, policy)``) so this module never imports the normalizer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from types import MappingProxyType

from dustless.analysis._truth import PairCounter, TruthRates
from dustless.errors import InvalidOption

__all__ = [
    "READINGS",
    "CandidateSet",
    "CrawlIndex",
    "Factor",
    "MethodRow",
    "MethodSpec",
    "Observation",
    "candidate_sets",
    "coverage_loss_rate",
    "evaluate",
    "evaluate_factor",
    "redundancy_rate",
    "unexplained_duplicates",
]

#: A normalization method as the caller sees it: a URL in, its normalized form out.
Method = Callable[[str], str]

# Per-URL state inside a CrawlIndex: the payload hash of a successful download, ``True``
# for "requested, nothing downloaded", ``False`` for "known but never requested". One small
# value per URL keeps a million-URL index cheap; Observation is the public view of it.
_State = str | bool


@dataclass(frozen=True, slots=True)
class Observation:
    """What the crawl knows about one URL (an element of seed 000's ``U``).

    ``success`` means a document was downloaded (seed 004's network state ``OK``), and then
    ``payload_hash`` identifies its content (``un(D_i)`` counts distinct hashes).
    """

    url: str
    requested: bool
    success: bool = False
    payload_hash: str | None = None

    def __post_init__(self) -> None:
        if self.success and not self.requested:
            raise InvalidOption(f"observation of {self.url!r}: downloaded but never requested")
        if self.success and not self.payload_hash:
            raise InvalidOption(f"observation of {self.url!r}: downloaded without a payload hash")


@dataclass(frozen=True, slots=True)
class CrawlIndex:
    """Every URL of a crawl with its fetch outcome, indexed once for all methods.

    Build it with :meth:`build`; when a URL is observed twice (say a normalized form that
    ``evaluate --fetch`` requested again) the observations are merged: requested if either
    was, and the first successful download's hash wins.
    """

    _states: Mapping[str, _State]

    @classmethod
    def build(cls, observations: Iterable[Observation]) -> CrawlIndex:
        return cls.from_rows((o.url, o.requested, o.success, o.payload_hash) for o in observations)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, bool, bool, str | None]]) -> CrawlIndex:
        """Rows ``(url, requested, success, payload_hash)``: what a DB query yields.

        This path skips the per-row :class:`Observation` objects, which matters at the
        scale of seed 000 (170 million URLs) and of the 1,000,000-fetch benchmark.
        """
        states: dict[str, _State] = {}
        get = states.get
        for url, requested, success, payload_hash in rows:
            if success:
                if not payload_hash:
                    raise InvalidOption(f"observation of {url!r}: downloaded without a hash")
                new: _State = payload_hash
            else:
                new = bool(requested)
            old = get(url)
            # Merge rule: a download beats a failed request beats "never requested".
            if old is None or old is False or (old is True and new is not False):
                states[url] = new
        return cls(MappingProxyType(states))

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, url: object) -> bool:
        return url in self._states

    @property
    def urls(self) -> Iterable[str]:
        return self._states.keys()

    def get(self, url: str) -> Observation | None:
        state = self._states.get(url)
        if state is None:
            return None
        if isinstance(state, str):
            return Observation(url, True, True, state)
        return Observation(url, state)


@dataclass(frozen=True, slots=True)
class CandidateSet:
    """One candidate set ``U_i`` of seed 000 §3: URLs a factor regards as the same."""

    key: str
    urls: tuple[str, ...]


def candidate_sets(urls: Iterable[str], key: Method) -> tuple[CandidateSet, ...]:
    """Partition ``urls`` by ``key`` and drop the singletons (seed 000 §3).

    ``key`` is a factor's method: URLs that become equal under it form one set. Sets come
    out in order of first appearance, their URLs in input order, so results are stable.
    """
    groups = _candidate_groups(urls, key)
    return tuple(CandidateSet(k, tuple(us)) for k, us in groups.items())


def redundancy_rate(downloads: int, unique_documents: int) -> float:
    """Formula (1) of seed 000 §3 from its two sums: Σ(n − un) / Σ n; 0 when Σ n = 0.

    "If every URL of the candidate sets is a distinct URL the redundancy rate is 0" (§3),
    which also covers the empty case.
    """
    if unique_documents < 0 or unique_documents > downloads:
        raise InvalidOption(f"unique documents {unique_documents} not within 0..{downloads}")
    return (downloads - unique_documents) / downloads if downloads else 0.0


def coverage_loss_rate(normal_documents: int, unique_documents: int) -> float:
    """Formula (2) of seed 000 §3: 1 − N_normal / Σ un(D_i); 0 when nothing can be lost."""
    if normal_documents < 0 or normal_documents > unique_documents:
        raise InvalidOption(f"N_normal {normal_documents} not within 0..{unique_documents}")
    return 1.0 - normal_documents / unique_documents if unique_documents else 0.0


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One method of a factor (a row of seed 000 Table 1).

    ``apply`` maps a URL to its normalized form; ``None`` means "leave the URL as it is"
    (the paper's method (1), standard normalization only). ``steps`` names the normalizer
    steps the method stands for, so the recommender can answer with a policy.
    """

    name: str
    apply: Method | None
    steps: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Factor:
    """A normalization factor of seed 000 §4 with its methods.

    ``key`` builds the candidate sets; by default the first method that changes URLs
    (for path case, lowercasing: URLs equal up to the case of their path).
    """

    name: str
    methods: tuple[MethodSpec, ...]
    key: Method | None = None

    def candidate_key(self) -> Method:
        if self.key is not None:
            return self.key
        for m in self.methods:
            if m.apply is not None:
                return m.apply
        raise InvalidOption(f"factor {self.name!r}: no method changes URLs; give it a key")


@dataclass(frozen=True, slots=True)
class MethodRow:
    """One row of a seed 000 Table 1-shaped evaluation, with the counts behind it.

    Counts are over the candidate sets only. ``requests`` is the number of distinct URLs the
    method requests for the sets (one per set for a method that merges each set);
    ``downloads`` / ``unique_documents`` are Σ n / Σ un over what those requests downloaded,
    and ``redundancy_rate`` is formula (1) over them. ``set_downloads`` /
    ``set_unique_documents`` are Σ n(D_i) / Σ un(D_i) of the sets themselves (the same for
    every method of a factor) and ``set_redundancy_rate`` their formula (1), the figure of the
    worked example. ``coverage_loss_rate`` is formula (2); it is *measured* when every set's
    normalized forms were requested (or what was downloaded already covers the set), and
    otherwise an *estimate* that counts a normalized form the crawl never requested as
    lost, so it is an upper bound; ``unmeasured_sets`` says how many sets were estimated.
    """

    factor: str
    method: str
    steps: frozenset[str]
    candidate_urls: int
    sets: int
    requests: int
    downloads: int
    unique_documents: int
    redundancy_rate: float
    normal_documents: int
    coverage_loss_rate: float
    coverage_loss_measured: bool
    unmeasured_sets: int
    set_downloads: int
    set_unique_documents: int
    set_redundancy_rate: float
    truth: TruthRates | None = field(default=None)
    host: str | None = None  # None: every host; else the host of the sets' keys

    @property
    def duplicates(self) -> int:
        """Duplicate downloads this method still makes: Σ (n − un)."""
        return self.downloads - self.unique_documents

    @property
    def duplicates_removed(self) -> int:
        """Duplicate downloads of the sets that this method avoids."""
        return (self.set_downloads - self.set_unique_documents) - self.duplicates

    @property
    def lost_documents(self) -> int:
        return self.set_unique_documents - self.normal_documents

    @property
    def true_fp_rate(self) -> float | None:
        return None if self.truth is None else self.truth.fp_rate

    @property
    def true_fn_rate(self) -> float | None:
        return None if self.truth is None else self.truth.fn_rate


#: How a method's coverage loss is read (docs/evaluation.md "Two readings of coverage loss").
#: ``paper``: seed 000 §3 — the normalized form of each set is requested, and what it returns
#: is what the crawl keeps. ``crawler``: what dustless does (ARCHITECTURE "Which URL the
#: crawler fetches") — for each group of URLs the method merges, the first spelling the crawl
#: met is fetched, and when it gives no document the next spellings, up to ``tries``.
READINGS = ("paper", "crawler")


def evaluate(
    index: CrawlIndex,
    factors: Sequence[Factor],
    truth: Mapping[str, str | None] | None = None,
    *,
    reading: str = "paper",
    tries: int = 3,
    host_of: Callable[[str], str] | None = None,
) -> tuple[MethodRow, ...]:
    """All rows of a Table 1-shaped evaluation: every method of every factor."""
    rows: list[MethodRow] = []
    for factor in factors:
        rows.extend(
            evaluate_factor(index, factor, truth, reading=reading, tries=tries, host_of=host_of)
        )
    return tuple(rows)


class _Sums:
    """One method's counts over the sets of one host (or of all)."""

    __slots__ = (
        "downloads",
        "normal",
        "pairs",
        "requests",
        "set_n",
        "set_un",
        "sets",
        "unique",
        "unmeasured",
        "urls",
    )

    def __init__(self, truth: bool) -> None:
        self.sets = self.urls = self.requests = self.downloads = self.unique = 0
        self.normal = self.unmeasured = self.set_n = self.set_un = 0
        self.pairs = PairCounter() if truth else None

    def row(self, factor: str, spec: MethodSpec, host: str | None) -> MethodRow:
        return MethodRow(
            factor=factor,
            method=spec.name,
            steps=spec.steps,
            candidate_urls=self.urls,
            sets=self.sets,
            requests=self.requests,
            downloads=self.downloads,
            unique_documents=self.unique,
            redundancy_rate=redundancy_rate(self.downloads, self.unique),
            normal_documents=self.normal,
            coverage_loss_rate=coverage_loss_rate(self.normal, self.set_un),
            coverage_loss_measured=self.unmeasured == 0,
            unmeasured_sets=self.unmeasured,
            set_downloads=self.set_n,
            set_unique_documents=self.set_un,
            set_redundancy_rate=redundancy_rate(self.set_n, self.set_un),
            truth=None if self.pairs is None else self.pairs.rates(),
            host=host,
        )


def evaluate_factor(
    index: CrawlIndex,
    factor: Factor,
    truth: Mapping[str, str | None] | None = None,
    *,
    reading: str = "paper",
    tries: int = 3,
    host_of: Callable[[str], str] | None = None,
) -> tuple[MethodRow, ...]:
    """Build the factor's candidate sets once and compute one row per method.

    Cost: one call of the factor's key per URL of the index, then one call of each method
    per *candidate* URL (the key method's results are reused), and dict lookups. ``truth``
    maps a URL to its resource id (``None`` for a URL that is no resource, e.g. a 404) and
    adds the true false-positive / false-negative rates, counted over pairs of URLs within
    the same candidate set.

    ``reading`` (:data:`READINGS`) says which URL a method requests for a group of URLs it
    merges: its normalized form (``paper``), or the group's spellings in the order the crawl
    met them — the index's order — until one gives a document, at most ``tries`` of them
    (``crawler``; always measured: every spelling tried was requested by the crawl).

    With ``host_of`` (a set's key → its host) the rows of every host follow the overall
    rows, each with its ``host``; a set belongs to the host of its key.
    """
    if reading not in READINGS:
        raise InvalidOption(f"reading must be one of {', '.join(READINGS)}, not {reading!r}")
    if tries < 1:
        raise InvalidOption(f"spelling tries must be >= 1, not {tries}")
    key = factor.candidate_key()
    states = index._states
    sets = list(_candidate_groups(list(states), key).items())
    crawler = reading == "crawler"
    specs = factor.methods
    overall = [_Sums(truth is not None) for _ in specs]
    by_host: dict[str, list[_Sums]] = {}

    for k, us in sets:
        hashes = [s for s in map(states.get, us) if isinstance(s, str)]
        set_n = len(hashes)
        un_i = len(set(hashes))
        sums = [overall]
        if host_of is not None:
            host = host_of(k)
            h = by_host.get(host)
            if h is None:
                h = by_host[host] = [_Sums(truth is not None) for _ in specs]
            sums.append(h)
        for m, spec in enumerate(specs):
            forms = _forms(spec.apply, key, k, us)
            if crawler:
                requests, n_i, docs, unknown = _crawler_requests(us, forms, states, tries)
            else:
                requests, n_i, docs, unknown = _paper_requests(forms, states)
            un_norm = len(docs)
            for acc in sums:
                a = acc[m]
                a.sets += 1
                a.urls += len(us)
                a.requests += requests
                a.downloads += n_i
                a.unique += un_norm
                # N_normal counts the documents downloaded from the normalized URLs, whatever
                # they are (§3), capped per set at un(D_i): a form the crawl never saw
                # (fetched by `evaluate --fetch`) may return a page outside D_i, e.g. a soft
                # 404, and a set cannot keep more documents than it had. The cap keeps (2)
                # within [0, 1]; such a page still counts as covering the set, as in the
                # paper (the truth rates are what catch it).
                a.normal += min(un_norm, un_i)
                if unknown and un_norm < un_i:
                    a.unmeasured += 1
                a.set_n += set_n
                a.set_un += un_i
                if a.pairs is not None and truth is not None:
                    a.pairs.add_set(us, forms, truth)
    rows = [a.row(factor.name, spec, None) for a, spec in zip(overall, specs, strict=True)]
    for host in sorted(by_host):
        rows += [a.row(factor.name, s, host) for a, s in zip(by_host[host], specs, strict=True)]
    return tuple(rows)


def _forms(apply: Method | None, key: Method, k: str, us: Sequence[str]) -> list[str]:
    """The forms a method gives the URLs of the set of key ``k`` (the key method's are
    ``k`` itself: not computed again)."""
    if apply is None:
        return list(us)
    if apply is key:
        return [k] * len(us)
    return [apply(u) for u in us]


# What a method's requests for one candidate set found: requests made, downloads among
# them (N_i), the distinct documents they gave, and whether a form was never fetched.
_Found = tuple[int, int, set[str], bool]


def _crawler_requests(
    us: Sequence[str], forms: Sequence[str], states: Mapping[str, _State], tries: int
) -> _Found:
    """The crawler's reading: per merged group, its spellings in crawl order until one gives
    a document, at most ``tries`` of them (always measured: the crawl requested each)."""
    groups: dict[str, list[str]] = {}
    for u, form in zip(us, forms, strict=True):
        groups.setdefault(form, []).append(u)
    requests = n_i = 0
    docs: set[str] = set()
    for members in groups.values():
        for u in members[:tries]:
            requests += 1
            state = states.get(u, False)
            if isinstance(state, str):
                n_i += 1
                docs.add(state)
                break
    return requests, n_i, docs, False


def _paper_requests(forms: Sequence[str], states: Mapping[str, _State]) -> _Found:
    """The paper's reading: each distinct normalized form, requested once."""
    requests = n_i = 0
    docs: set[str] = set()
    unknown = False
    for form in dict.fromkeys(forms):
        requests += 1
        state = states.get(form, False)
        if isinstance(state, str):
            n_i += 1
            docs.add(state)
        elif state is False:
            unknown = True
    return requests, n_i, docs, unknown


def _candidate_groups(urls: Iterable[str], key: Method) -> dict[str, list[str]]:
    """Group ``urls`` by ``key``, keeping only the groups of two or more (the sets U_i).

    Seed 000 grouped 170 million URLs; the benchmark groups 1,000,000 per factor. The key
    is called once per URL; counting (``Counter``) and filtering (``compress``) run in C,
    so Python only loops over the candidate URLs, which are a small share of a crawl.
    """
    urls = urls if isinstance(urls, list | tuple) else list(urls)
    keys = list(map(key, urls))
    counts = Counter(keys)
    if len(counts) == len(keys):
        return {}
    repeated = {k for k, c in counts.items() if c > 1}
    groups: dict[str, list[str]] = {}
    for url, k in compress(zip(urls, keys, strict=True), map(repeated.__contains__, keys)):
        g = groups.get(k)
        if g is None:
            groups[k] = [url]
        else:
            g.append(url)
    return groups


#: A document served by more than this many spellings that no method relates is read as a
#: soft 404 or an error page (a "Page not found" answered with 200 to every broken link),
#: not as duplicates of a document: DustBuster skips such buckets for the same reason.
SOFT404_SPELLINGS = 8


def _find(parent: list[int], i: int) -> int:
    """Union-find's root of ``i``, halving the path on the way."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@dataclass(frozen=True, slots=True)
class UnexplainedCounts:
    """What :func:`unexplained_duplicates` finds (see there)."""

    duplicates: int
    unexplained: int
    soft404_classes: int
    soft404_fetches: int
    examples: tuple[tuple[str, str], ...]


def unexplained_duplicates(
    documents: Iterable[tuple[str, str]],
    factors: Sequence[Factor],
    *,
    soft404_spellings: int = SOFT404_SPELLINGS,
    examples: int = 5,
) -> UnexplainedCounts:
    """The duplicate fetches that no method of any factor merges.

    ``documents`` are ``(url, document id)`` of the downloads, in crawl order. A class of
    ``n`` URLs with one document makes ``n − 1`` duplicate fetches; two of its URLs are
    merged when some method gives them one form, and merges chain (a case twin of a ``www``
    twin is explained by the two methods a policy would combine). What is left, the class's
    groups of merged URLs less one, is *unexplained*. A class of more than
    ``soft404_spellings`` groups is a soft 404 and counted apart, not as duplicates.
    """
    classes: dict[str, list[str]] = {}
    for url, doc in documents:
        classes.setdefault(doc, []).append(url)
    methods = [m.apply for f in factors for m in f.methods if m.apply is not None]
    duplicates = unexplained = soft_classes = soft_fetches = 0
    pairs: list[tuple[str, str]] = []
    for urls in classes.values():
        if len(urls) < 2:
            continue
        parent = list(range(len(urls)))
        for apply in methods:
            first: dict[str, int] = {}
            for i, u in enumerate(urls):
                j = first.setdefault(apply(u), i)
                if j != i:
                    a, b = _find(parent, i), _find(parent, j)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
        roots = list(dict.fromkeys(_find(parent, i) for i in range(len(urls))))
        if len(roots) > soft404_spellings:
            soft_classes += 1
            soft_fetches += len(urls)
            continue
        duplicates += len(urls) - 1
        unexplained += len(roots) - 1
        for r in roots[1:]:
            if len(pairs) < examples:
                pairs.append((urls[roots[0]], urls[r]))
    return UnexplainedCounts(duplicates, unexplained, soft_classes, soft_fetches, tuple(pairs))
