"""What each normalization step costs and saves on one crawl (``dustless evaluate``).

Seed 000 §3–§4 measured, on 170 million URLs, the redundancy rate (formula 1) and coverage
loss rate (formula 2) of every method of four factors — path case, trailing slash, ``www``,
default document — and summed them up in Table 1. This module does the same for a crawl
directory, with seed 001's further steps (sort query, fragment, collapse slashes, tracking
and session parameters), using the pure formulas of :mod:`dustless.analysis._metrics` and the
normalizer's own steps as the methods (:mod:`dustless.analysis._factors`), so the figures
describe what dustless would do.

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
import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from dustless.analysis._canonical_eval import canonical_rows
from dustless.analysis._content import CONTENT_MODES, document_classes
from dustless.analysis._evaltypes import (
    Disagreement,
    Evaluation,
    EvaluationRow,
    HostPolicy,
    RecommendedPolicy,
    RowDetail,
    Unexplained,
)
from dustless.analysis._factors import (
    FACTOR_ORDER,
    MEASURED_ONLY,
    PAPER_DEFAULT_DOCUMENTS,
    VARIANT_FACTORS,
    build_factors,
    composite_key,
    crawl_evidence,
    strip_fragment,
)
from dustless.analysis._metrics import (
    READINGS,
    CrawlIndex,
    Factor,
    MethodRow,
    MethodSpec,
)
from dustless.analysis._metrics import evaluate as evaluate_rows
from dustless.analysis._recommend import PAPER_TABLE_1, recommend
from dustless.analysis._sitepolicy import variant_rules
from dustless.analysis._stats import GATE_STATES
from dustless.analysis._unexplained import unexplained, without_soft404
from dustless.errors import InvalidOption, InvalidURL
from dustless.states import NetState
from dustless.store import CrawlReader, evaluation_rows, soft404_count
from dustless.url import authority_of

__all__ = [
    "DISAGREEMENT",
    "FACTOR_ORDER",
    "PAPER_DEFAULT_DOCUMENTS",
    "Disagreement",
    "Evaluation",
    "EvaluationRow",
    "HostPolicy",
    "Observations",
    "RecommendedPolicy",
    "RowDetail",
    "Unexplained",
    "build_factors",
    "evaluate_crawl",
    "load_observations",
    "unfetched_forms",
]

BASE_POLICY = "standard"  # 000 §2.2: every factor is measured after standard normalization
MAX_REDIRECTS = 5
# The crawler's own soft-404 verdict: a final state of its own (a 200 page that is a "not
# found" page) where states.py has it. Such a fetch is no document: the SQL below counts
# only the states of an answer with a payload as downloads, and this one is counted apart.
_SOFT404_STATE: str | None = getattr(getattr(NetState, "soft404", None), "value", None)


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
    #: URLs the crawler itself found soft 404s (``NetState.soft404``): requested, no document
    soft404: frozenset[str] = frozenset()
    soft404_classes: int = 0  # of the soft 404s read from content (their documents)


def load_observations(
    db: CrawlReader,
    *,
    batch: int | None = None,
    follow_redirects: bool = True,
    content: str = "near",
) -> Observations:
    """Read every counted fetch once (the store's ``evaluation_rows``: one scan) into
    ``URL -> content id``.

    SQL does the per-row tests (is it a probe, a gate, a download, a redirect), so the
    Python loop only fills a dict: at 1,000,000 fetches that loop is the cost. A download is
    a complete 2xx answer (not a truncated ``tooBig`` one) with a payload hash; its content
    id is the payload's SHA-1 (``content="exact"``) or its near-duplicate class
    (``"near"``, :func:`~dustless.analysis._near.near_classes`). The dict keeps the order in
    which the crawl first fetched each URL: the order the crawler's reading tries spellings.
    """

    if content not in CONTENT_MODES:
        raise InvalidOption(f"content must be one of {', '.join(CONTENT_MODES)}, not {content!r}")
    crawl = db.crawl_batches(batch)
    probes = db.probe_batches()
    gates = tuple(sorted(GATE_STATES))
    outcome: dict[str, str | None] = {}
    member_urls: set[str] | None = set() if probes else None
    locations: dict[str, str] = {}
    probe_fetches = 0
    get = outcome.get
    soft404: set[str] = set()
    rows = evaluation_rows(db, crawl, probes, gates, _SOFT404_STATE or "")
    for url, probe, gate, sha, location, soft in rows:
        if soft and not probe:
            soft404.add(url)
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
    classes = document_classes(db, content)
    if classes:
        for url, h in outcome.items():
            if h is not None and h in classes:
                outcome[url] = classes[h]
    # A redirect counts with its target's download, as the paper's robot followed them.
    finals = _follow_redirects(outcome, locations) if locations else {}
    std, members, fragment_outcome, fragment_members = _strip_fragments(outcome, member_urls)
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
        soft404=frozenset(soft404),
    )


def _follow_redirects(outcome: dict[str, str | None], locations: dict[str, str]) -> dict[str, str]:
    """Give each redirect without a download of its own its final target's content id (in
    ``outcome``); answer ``redirect -> final target`` (fragments stripped)."""
    from dustless.url import Normalizer

    rfc = Normalizer("rfc3986").normalize
    finals: dict[str, str] = {}
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
            finals[strip_fragment(url)] = strip_fragment(target)
            if outcome.get(target) is not None:
                outcome[url] = outcome[target]
    return finals


def _strip_fragments(
    outcome: dict[str, str | None], member_urls: set[str] | None
) -> tuple[
    dict[str, str | None], frozenset[str] | None, dict[str, str | None], frozenset[str] | None
]:
    """The outcome and members by URL without its fragment (the first download of a
    fragment's base wins), and the URLs with a fragment and their bases as fetched."""
    with_fragment = [u for u in outcome if "#" in u]
    std = outcome
    members = None if member_urls is None else frozenset(member_urls)
    fragment_outcome: dict[str, str | None] = {}
    if with_fragment:
        bases = {strip_fragment(u) for u in with_fragment}
        fragment_outcome = {u: outcome[u] for u in (*with_fragment, *bases) if u in outcome}
        std = {}
        for u, h in outcome.items():
            s = strip_fragment(u)
            if std.get(s) is None:
                std[s] = h
        if members is not None:
            members = frozenset(strip_fragment(u) for u in members)
    fragment_members = (
        None if member_urls is None else frozenset(u for u in fragment_outcome if u in member_urls)
    )
    return std, members, fragment_outcome, fragment_members


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


_READS_EVIDENCE = frozenset({"variant-params", "query-to-path"})


def _crawled(obs: Observations) -> Mapping[str, str | None]:
    """The outcomes of the crawl's own URLs (``U``), not of ``--fetch``'s lookups: what the
    evidence-based factors read, so a probe never changes the candidate sets."""
    members = obs.members
    if members is None:
        return obs.outcome
    return {u: h for u, h in obs.outcome.items() if u in members}


def unfetched_forms(obs: Observations, factors: Sequence[Factor]) -> list[str]:
    """The normalized forms the crawl never requested: what ``evaluate --fetch`` requests.

    The factors that read the crawl's evidence are built again from ``obs`` when given
    without it (as ``build_factors(docs)`` gives them), so the forms are those
    :func:`evaluate_crawl` measures."""
    forms: dict[str, None] = {}
    read = {f.name: f for f in build_factors(evidence=crawl_evidence(_crawled(obs)))}
    factors = [read[f.name] if f.name in _READS_EVIDENCE else f for f in factors]
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
        u: by_std[strip_fragment(u)] for u in obs.fragment_outcome if strip_fragment(u) in by_std
    }
    return by_std, by_frag


def _host(key: str) -> str:
    """The host of a set's key (a URL in its standard form): ``host[:port]``, no userinfo —
    as ``stats``, the crawl DB and the learned rules name a host, so two sites that differ
    only by their port are two rows, and a row names the host the other commands show."""
    return authority_of(key)


def _method_rows(
    obs: Observations,
    factors: Sequence[Factor],
    truth_std: Mapping[str, str | None] | None,
    truth_frag: Mapping[str, str | None] | None,
    reading: str,
    tries: int,
    progress: Callable[[str, int], None] | None = None,
) -> list[MethodRow]:
    rows: list[MethodRow] = []
    for factor in factors:
        view = _factor_view(obs, factor)
        t = truth_frag if factor.name == "fragment" else truth_std
        rows.extend(
            evaluate_rows(view.index, [view.factor], t, reading=reading, tries=tries, host_of=_host)
        )
        del view
        if progress is not None:
            progress("factors compared", 1)
    return rows


def _truth_observations(
    obs: Observations,
    truth_std: Mapping[str, str | None],
    truth_frag: Mapping[str, str | None],
) -> Observations:
    """The crawl's URLs with the truth's resource ids as their documents (``--truth``): a URL
    the truth names no resource (a 404, a redirect) has none; one it does not know keeps
    its content id."""
    outcome = {u: truth_std.get(u, h) for u, h in obs.outcome.items()}
    fragment = {u: truth_frag.get(u, h) for u, h in obs.fragment_outcome.items()}
    members = obs.members
    downloaded = sum(
        1 for u, h in outcome.items() if h is not None and (members is None or u in members)
    )
    return dataclasses.replace(
        obs, outcome=outcome, fragment_outcome=fragment, downloaded=downloaded
    )


def _disagreements(
    truth_rows: Sequence[MethodRow], content_rows: Sequence[MethodRow], tolerance: float
) -> tuple[Disagreement, ...]:
    content = {(r.host, r.factor, r.method): r for r in content_rows}
    out: list[Disagreement] = []
    for r in truth_rows:
        c = content.get((r.host, r.factor, r.method))
        if c is None:
            continue
        for what, t, e in (
            ("redundancy", r.redundancy_rate, c.redundancy_rate),
            ("coverage loss", r.coverage_loss_rate, c.coverage_loss_rate),
        ):
            if abs(t - e) > tolerance + 1e-12:
                out.append(Disagreement(r.host, r.factor, r.method, what, t, e))
    return tuple(out)


DISAGREEMENT = 0.05  # truth and content estimate further apart than this are flagged


def evaluate_crawl(
    db: CrawlReader,
    *,
    max_loss: float = 0.01,
    default_documents: Sequence[str] = PAPER_DEFAULT_DOCUMENTS,
    truth: Mapping[str, str | None] | None = None,
    truth_file: str | None = None,
    batch: int | None = None,
    follow_redirects: bool = True,
    factors: Iterable[str] | None = None,
    content: str = "near",
    reading: str = "crawler",
    tries: int = 3,
    progress: Callable[[str, int], None] | None = None,
) -> Evaluation:
    """Table 1 of seed 000 for the crawl in ``db``, per host and overall, and the policy.

    ``content``: ``near`` or ``exact`` (what "the same document" is); ``reading``:
    ``crawler`` or ``paper`` (how coverage loss is read, docs/evaluation.md); with ``truth``
    the rows, the loss and the recommendation are the truth's, and the rows where the
    content estimate is off by more than :data:`DISAGREEMENT` are listed. ``progress(what,
    n)`` is told of each factor compared (the CLI's progress line; no clock here).
    """
    if reading not in READINGS:
        raise InvalidOption(f"reading must be one of {', '.join(READINGS)}, not {reading!r}")
    if tries < 1:
        raise InvalidOption(f"--spelling-tries must be >= 1, not {tries}")
    obs = load_observations(db, batch=batch, follow_redirects=follow_redirects, content=content)
    chosen = set(FACTOR_ORDER if factors is None else factors)
    # The evidence-based factors read the crawl's own documents (the content, never the
    # truth: the factors are what a user without a truth file gets, measured by both).
    evidence = crawl_evidence(_crawled(obs))
    every = build_factors(default_documents, evidence)
    cleaned = without_soft404(obs, composite_key(every))
    if cleaned is not obs:  # a "not found" page is no evidence that a parameter is irrelevant
        obs = cleaned
        evidence = crawl_evidence(_crawled(obs))
        every = build_factors(default_documents, evidence)
    all_factors = [f for f in every if f.name in chosen]
    rules = variant_rules(
        _crawled(obs),
        {f.name: f.candidate_key() for f in all_factors if f.name in VARIANT_FACTORS},
        evidence,
    )
    truth_std, truth_frag = _truth_views(truth, obs)
    method_rows = _method_rows(obs, all_factors, truth_std, truth_frag, reading, tries, progress)
    disagreements: tuple[Disagreement, ...] = ()
    if truth_std is not None and truth_frag is not None:
        content_rows = method_rows
        obs = _truth_observations(obs, truth_std, truth_frag)
        method_rows = _method_rows(
            obs, all_factors, truth_std, truth_frag, reading, tries, progress
        )
        disagreements = _disagreements(method_rows, content_rows, DISAGREEMENT)
        del content_rows
    ev = _assemble(
        db,
        db.crawl_batches(batch),
        obs,
        method_rows,
        max_loss,
        tuple(default_documents),
        follow_redirects,
        truth_file,
    )
    return dataclasses.replace(
        ev,
        content=content,
        identity="content" if truth is None else "truth",
        reading=reading,
        spelling_tries=tries,
        disagreements=disagreements,
        canonical=canonical_rows(db, all_factors, db.crawl_batches(batch)),
        unexplained=unexplained(obs, all_factors),
        soft404s=soft404_count(db, db.crawl_batches(batch)),  # not documents (issue 25)
        variant_rules=rules,
    )


def _row(r: MethodRow) -> EvaluationRow:
    return EvaluationRow(
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
        host=r.host,
    )


def _detail(r: MethodRow) -> RowDetail:
    t = r.truth
    return RowDetail(
        factor=r.factor,
        method=r.method,
        steps=tuple(sorted(r.steps)),
        normal_documents=r.normal_documents,
        unmeasured_sets=r.unmeasured_sets,
        set_downloads=r.set_downloads,
        set_unique_documents=r.set_unique_documents,
        set_redundancy_rate=r.set_redundancy_rate,
        duplicates_removed=r.duplicates_removed,
        true_pairs=None if t is None else t.pairs,
        true_same_pairs=None if t is None else t.same_pairs,
        merged_pairs=None if t is None else t.merged_pairs,
        false_positives=None if t is None else t.false_positives,
        false_negatives=None if t is None else t.false_negatives,
        wrong_merge_share=None if t is None else t.wrong_merge_share,
        host=r.host,
    )


def _policy_rows(rows: Sequence[MethodRow]) -> list[MethodRow]:
    # A recommended policy names normalizer steps: the measured-only factors (path
    # parameters, sort/view parameters) have none yet, so they are figures, not choices.
    return [r for r in rows if r.factor not in MEASURED_ONLY]


def _site_policy(host_rows: Sequence[MethodRow], max_loss: float) -> tuple[HostPolicy, ...]:
    """The recommender per host, on that host's own sets (000 §4.1: servers differ)."""
    by_host: dict[str, list[MethodRow]] = {}
    for r in host_rows:
        by_host.setdefault(r.host or "", []).append(r)
    out = []
    for host, rows in sorted(by_host.items()):
        rec = recommend(_policy_rows(rows), max_loss)
        out.append(
            HostPolicy(
                host=host,
                choices=rec.choices,
                steps=tuple(sorted(rec.steps)),
                coverage_loss=rec.coverage_loss,
                duplicates_removed=rec.duplicates_removed,
            )
        )
    return tuple(out)


def _assemble(
    db: CrawlReader,
    batches: tuple[int, ...],
    obs: Observations,
    method_rows: Sequence[MethodRow],
    max_loss: float,
    docs: tuple[str, ...],
    follow_redirects: bool,
    truth_file: str | None,
) -> Evaluation:
    overall = [r for r in method_rows if r.host is None]
    per_host = [r for r in method_rows if r.host is not None]
    per_host.sort(key=lambda r: r.host or "")  # stable: factor order kept within a host
    rec = recommend(_policy_rows(overall), max_loss)
    steps = tuple(sorted(rec.steps))
    policy = BASE_POLICY + "".join(f" + {s}" for s in steps)
    return Evaluation(
        directory=db.source,
        batches=batches,
        urls=len(obs.outcome) if obs.members is None else len(obs.members),
        downloaded=obs.downloaded,
        probe_fetches=obs.probe_fetches,
        default_documents=docs,
        follow_redirects=follow_redirects,
        truth_file=truth_file,
        rows=tuple(map(_row, overall)),
        details=tuple(map(_detail, overall)),
        recommendation=RecommendedPolicy(
            policy=policy,
            steps=steps,
            choices=rec.choices,
            coverage_loss=rec.coverage_loss,
            max_loss=rec.max_loss,
            duplicates_removed=rec.duplicates_removed,
        ),
        host_rows=tuple(map(_row, per_host)),
        host_details=tuple(map(_detail, per_host)),
        site_policy=_site_policy(per_host, max_loss),
    )


def paper_figures() -> dict[tuple[str, str], tuple[float, float]]:
    """Seed 000 Table 1 as ``(factor, method) -> (redundancy, coverage loss)``."""
    return {(p.factor, p.method): (p.redundancy_rate, p.coverage_loss_rate) for p in PAPER_TABLE_1}
