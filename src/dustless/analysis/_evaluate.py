"""What each normalization step costs and saves on one crawl (``dustless evaluate``).

Seed 000 §3–§4 measured, on 170 million URLs, the redundancy rate (formula 1) and coverage
loss rate (formula 2) of every method of four factors — path case, trailing slash, ``www``,
default document — and summed them up in Table 1. This module does the same for a crawl
directory, with seed 001's further steps (sort query, fragment, collapse slashes, tracking
and session parameters), using the pure formulas of :mod:`dustless.analysis._metrics` and the
normalizer's own steps as the methods, so the figures describe what dustless would do.

How the crawl becomes the paper's ``U`` (000 §3): every URL the crawl *requested* (its last
fetches in the crawl batches, a fetch stopped by robots.txt or the URL filter not counting),
after standard normalization (000 §4: "표준 문서의 정규화 방안을 따라 정규화를 수행"). A URL
whose fetch was a redirect counts with the outcome of the redirect's target when the crawl
fetched it (up to 5 hops): the paper's robot followed redirects — it is *why* ``/pubs`` and
``/pubs/`` are the same URL (§4.2). A download is a 2xx answer with a payload hash.

The normalized form of a set may be a URL the crawl never requested (``/ASP/x`` and ``/Asp/x``
lowercase to ``/asp/x``). Without ``--fetch`` such a form counts as lost and the row is flagged
as an estimate (an upper bound on the loss); ``evaluate --fetch`` requests those forms (see
:mod:`dustless.analysis._probe`) into a batch of their own, which this module uses only to
look forms up — they never join ``U``, so the "none" rows do not move.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from dustless.analysis._crawlreader import CrawlDB
from dustless.analysis._metrics import CrawlIndex, Factor, MethodRow, MethodSpec
from dustless.analysis._metrics import evaluate as evaluate_rows
from dustless.analysis._recommend import FACTOR_METHODS, PAPER_TABLE_1, recommend
from dustless.analysis._stats import GATE_STATES
from dustless.errors import InvalidURL

__all__ = [
    "FACTOR_ORDER",
    "PAPER_DEFAULT_DOCUMENTS",
    "Evaluation",
    "EvaluationRow",
    "Observations",
    "RecommendedPolicy",
    "RowDetail",
    "build_factors",
    "evaluate_crawl",
    "load_observations",
    "unfetched_forms",
]

FACTOR_ORDER: tuple[str, ...] = tuple(FACTOR_METHODS)
# 000 §4.4: the defaults of Apache and IIS, the only default documents the paper measured.
PAPER_DEFAULT_DOCUMENTS: tuple[str, ...] = ("index.htm", "index.html", "default.htm")
BASE_POLICY = "standard"  # 000 §2.2: every factor is measured after standard normalization
MAX_REDIRECTS = 5

# Which step each factor's candidate sets are built with: URLs equal after it differ only in
# that factor (000 §3, "F가 적용될 때 동일 URL로 간주되는 URL들의 집합").
_KEY_STEP: Mapping[str, str] = {
    "path-case": "lowercase-path",
    "trailing-slash": "remove-trailing-slash",
    "www": "remove-www",
    "default-document": "remove-default-document",
    "sort-query": "sort-query",
    "fragment": "remove-fragment",
    "collapse-slashes": "collapse-slashes",
    "tracking-params": "remove-query-params",
}


@dataclass(frozen=True, slots=True)
class EvaluationRow:
    """One row of ``evaluate --json`` (issue 5 names exactly these fields), Table 1 shaped."""

    factor: str
    method: str
    candidate_urls: int
    sets: int
    requests: int
    downloads: int
    unique_documents: int
    redundancy_rate: float
    coverage_loss_rate: float
    coverage_loss_measured: bool
    true_fp_rate: float | None
    true_fn_rate: float | None


@dataclass(frozen=True, slots=True)
class RowDetail:
    """The rest of a :class:`~dustless.analysis.MethodRow`: what the row's figures come from."""

    factor: str
    method: str
    steps: tuple[str, ...]
    normal_documents: int  # N_normal of formula (2)
    unmeasured_sets: int  # sets whose normalized form the crawl never requested
    set_downloads: int  # Σ n(D_i)
    set_unique_documents: int  # Σ un(D_i)
    set_redundancy_rate: float
    duplicates_removed: int
    # Against --truth: pairs of URLs within the candidate sets (TruthRates), of which same
    # resource, the pairs the method merges, its wrong merges (FP) and wrong splits (FN), and
    # the share of its merges that are wrong (FP / merged pairs).
    true_pairs: int | None
    true_same_pairs: int | None
    merged_pairs: int | None
    false_positives: int | None
    false_negatives: int | None
    wrong_merge_share: float | None


@dataclass(frozen=True, slots=True)
class RecommendedPolicy:
    """The recommender's answer (000 §5) as a policy expression usable with ``--policy``."""

    policy: str
    steps: tuple[str, ...]
    choices: tuple[tuple[str, str], ...]
    coverage_loss: float
    max_loss: float
    duplicates_removed: int


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Everything ``dustless evaluate`` prints (``--json`` adds ``recommended_policy`` as a
    string next to ``rows``)."""

    directory: str
    batches: tuple[int, ...]
    urls: int  # |U|: distinct URLs requested, after standard normalization
    downloaded: int  # of them, with a document
    probe_fetches: int  # fetches of normalized forms by `evaluate --fetch`, all runs
    default_documents: tuple[str, ...]
    follow_redirects: bool
    truth_file: str | None
    rows: tuple[EvaluationRow, ...]
    details: tuple[RowDetail, ...]
    recommendation: RecommendedPolicy

    @property
    def estimated(self) -> bool:
        return not all(r.coverage_loss_measured for r in self.rows)


# ---- the methods: the normalizer's steps, guarded so a URL they cannot change costs a test ----


def _always(_u: str) -> bool:
    return True


def _guard(step: str, docs: tuple[str, ...]) -> Callable[[str], bool]:
    # A cheap necessary condition for the step to change the URL (URLs here are already in
    # their standard form): a million URLs × eight keys must not each go through the parser.
    if step == "lowercase-path":
        return lambda u: u != u.lower()
    if step == "remove-trailing-slash":
        return lambda u: u.endswith("/") or "/?" in u or "/#" in u
    if step == "remove-www":
        return lambda u: "www." in u or "WWW." in u
    if step == "remove-default-document":
        needles = tuple("/" + d for d in docs)
        return lambda u: any(n in u for n in needles)
    if step == "sort-query":
        return lambda u: "&" in u
    if step == "remove-fragment":
        return lambda u: "#" in u
    if step == "collapse-slashes":
        return lambda u: "//" in u[u.find("//") + 2 :]
    if step == "remove-query-params":
        return lambda u: "?" in u
    return _always


def _step_method(step: str, docs: tuple[str, ...]) -> Callable[[str], str]:
    from dustless.url import Normalizer, get_policy

    policy = get_policy("rfc3986").with_options(default_documents=docs)
    # Only the one step: the URLs are in their standard form already.
    normalizer = Normalizer(
        type(policy)(f"evaluate {step}", frozenset({step}), policy.options, policy.pipeline)
    )
    normalize = normalizer.normalize
    guard = _guard(step, docs)

    def method(url: str) -> str:
        if not guard(url):
            return url
        try:
            return normalize(url)
        except InvalidURL:
            return url

    method.__name__ = f"method_{step.replace('-', '_')}"
    return method


def _path_end(url: str) -> int:
    q = url.find("?")
    h = url.find("#")
    if q < 0:
        return len(url) if h < 0 else h
    return q if h < 0 or q < h else h


def _key_lower_path(url: str) -> str:
    # lowercase-path as a grouping key. In the standard form scheme and host are lowercase
    # and escapes are upper-case hex of non-letters' bytes, so lowercasing everything before
    # "?"/"#" groups exactly the URLs that lowercase-path makes equal, without parsing.
    i = _path_end(url)
    head = url[:i]
    low = head.lower()
    return url if low == head else low + url[i:]


def _key_trailing_slash(url: str) -> str:
    # remove-trailing-slash as a grouping key: "/a/" and "/a" meet, the root "/" stays.
    i = _path_end(url)
    head = url[:i]
    if not head.endswith("/"):
        return url
    start = head.find("/", head.find("//") + 2)
    if start < 0 or len(head) - start <= 1:
        return url
    stripped = head.rstrip("/")
    if len(stripped) <= start:
        stripped = head[: start + 1]
    return stripped + url[i:]


def _key_remove_www(docs: tuple[str, ...]) -> Callable[[str], str]:
    # remove-www touches the authority only: decide once per distinct authority.
    step = _step_method("remove-www", docs)
    cache: dict[str, str] = {}

    def key(url: str) -> str:
        a = url.find("//") + 2
        e = url.find("/", a)
        if e < 0:
            e = len(url)
        auth = url[a:e]
        if "www." not in auth:
            return url
        new = cache.get(auth)
        if new is None:
            probe = step(f"http://{auth}/")
            new = probe[7:-1] if probe.startswith("http://") and probe.endswith("/") else auth
            cache[auth] = new
        return url if new == auth else url[:a] + new + url[e:]

    return key


def _factor_key(name: str, docs: tuple[str, ...]) -> Callable[[str], str]:
    """The key that builds a factor's candidate sets, as cheap as its step allows."""
    if name == "path-case":
        slow = _step_method("lowercase-path", docs)
        return lambda u: slow(u) if "@" in u else _key_lower_path(u)
    if name == "trailing-slash":
        return _key_trailing_slash
    if name == "www":
        return _key_remove_www(docs)
    if name == "fragment":
        return _strip_fragment
    return _step_method(_KEY_STEP[name], docs)


def build_factors(
    default_documents: Sequence[str] = PAPER_DEFAULT_DOCUMENTS,
) -> tuple[Factor, ...]:
    """The factors of 000 §4 and 001, each method one normalizer step (``FACTOR_METHODS``)."""
    docs = tuple(default_documents)
    factors = []
    for name in FACTOR_ORDER:
        methods = tuple(
            MethodSpec(m, None, steps)
            if not steps
            else MethodSpec(m, _step_method(next(iter(steps)), docs), steps)
            for m, steps in FACTOR_METHODS[name].items()
        )
        factors.append(Factor(name, methods, key=_factor_key(name, docs)))
    return tuple(factors)


# ---- the crawl as observations ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Observations:
    """The crawl's URLs with their outcomes: ``URL -> payload hash`` (``None``: requested,
    nothing downloaded), keyed by standard form (``outcome``) and, for the fragment factor, by
    the crawled spelling of the URLs that have a fragment and their bases
    (``fragment_outcome``). ``members``: the URLs of ``U`` when some outcomes are lookups only
    (``evaluate --fetch`` probes); ``None`` when every URL is in ``U``.
    """

    outcome: Mapping[str, str | None]
    members: frozenset[str] | None
    fragment_outcome: Mapping[str, str | None]
    fragment_members: frozenset[str] | None
    downloaded: int
    probe_fetches: int
    redirects: Mapping[str, str]  # a redirecting URL -> where its chain ended (standard form)


def _strip_fragment(url: str) -> str:
    return url.split("#", 1)[0] if "#" in url else url


def load_observations(
    db: CrawlDB, *, batch: int | None = None, follow_redirects: bool = True
) -> Observations:
    """Read every counted fetch once (one SQL scan) into ``URL -> hash``.

    SQL does the per-row tests (is it a probe, a gate, a download, a redirect), so the
    Python loop only fills a dict: at 1,000,000 fetches that loop is the cost.
    """
    from dustless.url import Normalizer

    crawl = db.crawl_batches(batch)
    probes = db.probe_batches()
    wanted = (*crawl, *probes)
    gates = tuple(sorted(GATE_STATES))
    # "+f.batch": scan fetches in id order rather than through the batch index and a sort.
    sql = (
        "SELECT u.url, f.batch IN ({p}) , f.state IN ({g}), "
        "CASE WHEN f.content_sha1 IS NOT NULL AND f.status BETWEEN 200 AND 299 "
        "THEN f.content_sha1 END, "
        "CASE WHEN f.status BETWEEN 300 AND 399 THEN f.location END "
        "FROM fetches f JOIN urls u ON u.id = f.url_id WHERE +f.batch IN ({w}) ORDER BY f.id"
    ).format(
        p=",".join("?" * len(probes)) or "NULL",
        g=",".join("?" * len(gates)),
        w=",".join("?" * len(wanted)) or "NULL",
    )
    outcome: dict[str, str | None] = {}
    member_urls: set[str] | None = set() if probes else None
    locations: dict[str, str] = {}
    finals: dict[str, str] = {}
    probe_fetches = 0
    get = outcome.get
    for url, probe, gate, sha, location in db.iterate(sql, (*probes, *gates, *wanted)):
        if probe:
            probe_fetches += 1
        elif gate:
            continue  # stopped before any request (robots, filter): neither in U nor a lookup
        elif member_urls is not None:
            member_urls.add(url)
        if sha is not None:
            if get(url) is None:  # the first download wins (CrawlIndex's merge rule)
                outcome[url] = sha
        else:
            if url not in outcome:
                outcome[url] = None
            if location and follow_redirects:
                locations[url] = location
    # A redirect counts with its target's download, as the paper's robot followed them.
    if locations:
        rfc = Normalizer("rfc3986").normalize
        redirects: dict[str, str] = {}
        for url, location in locations.items():
            with contextlib.suppress(InvalidURL):
                redirects[url] = rfc(location)
        for url, target in redirects.items():
            if outcome.get(url) is not None:
                continue
            seen = {url}
            hop = 0
            while target in redirects and target not in seen and hop < MAX_REDIRECTS:
                seen.add(target)
                target = redirects[target]
                hop += 1
            if target not in redirects:
                finals[_strip_fragment(url)] = _strip_fragment(target)
                if outcome.get(target) is not None:
                    outcome[url] = outcome[target]

    with_fragment = [u for u in outcome if "#" in u]
    std = outcome
    members = None if member_urls is None else frozenset(member_urls)
    fragment_outcome: dict[str, str | None] = {}
    if with_fragment:
        bases = {_strip_fragment(u) for u in with_fragment}
        fragment_outcome = {u: outcome[u] for u in (*with_fragment, *bases) if u in outcome}
        std = {}
        for u, h in outcome.items():
            s = _strip_fragment(u)
            if std.get(s) is None:
                std[s] = h
        if members is not None:
            members = frozenset(_strip_fragment(u) for u in members)
    fragment_members = (
        None if member_urls is None else frozenset(u for u in fragment_outcome if u in member_urls)
    )
    downloaded = sum(
        1 for u, h in std.items() if h is not None and (members is None or u in members)
    )
    return Observations(
        outcome=std,
        members=members,
        fragment_outcome=fragment_outcome,
        fragment_members=fragment_members,
        downloaded=downloaded,
        probe_fetches=probe_fetches,
        redirects=finals,
    )


@dataclass(frozen=True, slots=True)
class _FactorView:
    """One factor's candidates, reduced so the formulas only see what can matter."""

    index: CrawlIndex  # the candidates and the forms their methods give that the crawl knows
    factor: Factor  # methods memoized; the key makes every non-candidate a singleton
    forms: frozenset[str]  # every normalized form of the candidates


def _factor_view(obs: Observations, factor: Factor) -> _FactorView:
    # 000 §3 drops singleton sets, and in a real crawl most URLs are singletons for every
    # factor: find the URLs whose key collides first (C-level map and Counter), and hand the
    # formulas only those and the forms their methods give.
    fragment = factor.name == "fragment"
    outcome = obs.fragment_outcome if fragment else obs.outcome
    members = obs.fragment_members if fragment else obs.members
    urls = list(outcome) if members is None else [u for u in outcome if u in members]
    key = factor.candidate_key()
    keys = list(map(key, urls))
    repeated = {k for k, n in Counter(keys).items() if n > 1}
    key_of = {u: k for u, k in zip(urls, keys, strict=True) if k in repeated}
    del keys, urls
    methods = []
    forms: set[str] = set()
    for spec in factor.methods:
        if spec.apply is None:
            methods.append(spec)
            continue
        memo = {u: spec.apply(u) for u in key_of}
        forms.update(memo.values())
        methods.append(MethodSpec(spec.name, memo.__getitem__, spec.steps))
    rows = [(u, True, outcome[u] is not None, outcome[u]) for u in key_of]
    rows += [
        (f, True, outcome[f] is not None, outcome[f]) for f in forms - key_of.keys() if f in outcome
    ]
    get = key_of.get

    def candidate_key(url: str) -> str:
        k = get(url)
        return "\x00" + url if k is None else k  # a lookup: a singleton of its own

    return _FactorView(
        CrawlIndex.from_rows(rows),
        Factor(factor.name, tuple(methods), key=candidate_key),
        frozenset(forms),
    )


def unfetched_forms(obs: Observations, factors: Sequence[Factor]) -> list[str]:
    """The normalized forms the crawl never requested: what ``evaluate --fetch`` requests."""
    forms: dict[str, None] = {}
    for factor in factors:
        view = _factor_view(obs, factor)
        outcome = obs.fragment_outcome if factor.name == "fragment" else obs.outcome
        forms.update((f, None) for f in sorted(view.forms) if f not in outcome)
    return list(forms)


def _truth_views(
    truth: Mapping[str, str | None] | None, obs: Observations
) -> tuple[dict[str, str | None] | None, dict[str, str | None] | None]:
    if truth is None:
        return None, None
    from dustless.url import Normalizer

    std = Normalizer(BASE_POLICY).normalize
    by_std: dict[str, str | None] = {}
    for url, resource in truth.items():
        try:
            by_std.setdefault(std(url), resource)
        except InvalidURL:
            continue
    # A redirecting URL is the resource its redirect leads to (as its outcome is, above); the
    # test web's truth names every redirect "redirect", which would make them all one resource.
    for url, target in obs.redirects.items():
        if target in by_std:
            by_std[url] = by_std[target]
    by_frag = {
        u: by_std[_strip_fragment(u)] for u in obs.fragment_outcome if _strip_fragment(u) in by_std
    }
    return by_std, by_frag


def evaluate_crawl(
    db: CrawlDB,
    *,
    max_loss: float = 0.01,
    default_documents: Sequence[str] = PAPER_DEFAULT_DOCUMENTS,
    truth: Mapping[str, str | None] | None = None,
    truth_file: str | None = None,
    batch: int | None = None,
    follow_redirects: bool = True,
    factors: Iterable[str] | None = None,
) -> Evaluation:
    """Table 1 of seed 000 for the crawl in ``db``, and the recommended policy."""
    obs = load_observations(db, batch=batch, follow_redirects=follow_redirects)
    chosen = set(FACTOR_ORDER if factors is None else factors)
    all_factors = [f for f in build_factors(default_documents) if f.name in chosen]
    truth_std, truth_frag = _truth_views(truth, obs)
    method_rows: list[MethodRow] = []
    for factor in all_factors:
        view = _factor_view(obs, factor)
        t = truth_frag if factor.name == "fragment" else truth_std
        method_rows.extend(evaluate_rows(view.index, [view.factor], t))
        del view
    return _assemble(
        db,
        db.crawl_batches(batch),
        obs,
        method_rows,
        max_loss,
        tuple(default_documents),
        follow_redirects,
        truth_file,
    )


def _assemble(
    db: CrawlDB,
    batches: tuple[int, ...],
    obs: Observations,
    method_rows: Sequence[MethodRow],
    max_loss: float,
    docs: tuple[str, ...],
    follow_redirects: bool,
    truth_file: str | None,
) -> Evaluation:
    rows = tuple(
        EvaluationRow(
            factor=r.factor,
            method=r.method,
            candidate_urls=r.candidate_urls,
            sets=r.sets,
            requests=r.requests,
            downloads=r.downloads,
            unique_documents=r.unique_documents,
            redundancy_rate=r.redundancy_rate,
            coverage_loss_rate=r.coverage_loss_rate,
            coverage_loss_measured=r.coverage_loss_measured,
            true_fp_rate=r.true_fp_rate,
            true_fn_rate=r.true_fn_rate,
        )
        for r in method_rows
    )
    details = tuple(
        RowDetail(
            factor=r.factor,
            method=r.method,
            steps=tuple(sorted(r.steps)),
            normal_documents=r.normal_documents,
            unmeasured_sets=r.unmeasured_sets,
            set_downloads=r.set_downloads,
            set_unique_documents=r.set_unique_documents,
            set_redundancy_rate=r.set_redundancy_rate,
            duplicates_removed=r.duplicates_removed,
            true_pairs=None if r.truth is None else r.truth.pairs,
            true_same_pairs=None if r.truth is None else r.truth.same_pairs,
            merged_pairs=None if r.truth is None else r.truth.merged_pairs,
            false_positives=None if r.truth is None else r.truth.false_positives,
            false_negatives=None if r.truth is None else r.truth.false_negatives,
            wrong_merge_share=None if r.truth is None else r.truth.wrong_merge_share,
        )
        for r in method_rows
    )
    rec = recommend(method_rows, max_loss)
    steps = tuple(sorted(rec.steps))
    policy = BASE_POLICY + "".join(f" + {s}" for s in steps)
    return Evaluation(
        directory=str(db.directory),
        batches=batches,
        urls=len(obs.outcome) if obs.members is None else len(obs.members),
        downloaded=obs.downloaded,
        probe_fetches=obs.probe_fetches,
        default_documents=docs,
        follow_redirects=follow_redirects,
        truth_file=truth_file,
        rows=rows,
        details=details,
        recommendation=RecommendedPolicy(
            policy=policy,
            steps=steps,
            choices=rec.choices,
            coverage_loss=rec.coverage_loss,
            max_loss=rec.max_loss,
            duplicates_removed=rec.duplicates_removed,
        ),
    )


def paper_figures() -> dict[tuple[str, str], tuple[float, float]]:
    """Seed 000 Table 1 as ``(factor, method) -> (redundancy, coverage loss)``."""
    return {(p.factor, p.method): (p.redundancy_rate, p.coverage_loss_rate) for p in PAPER_TABLE_1}
