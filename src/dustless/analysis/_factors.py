"""The factors ``dustless evaluate`` measures and their methods (seed 000 §4, seed 001).

A *factor* (path case, trailing slash, ``www``, default document, and seed 001's sort query,
fragment, doubled slashes, tracking parameters) groups the URLs of a crawl into candidate
sets — URLs that differ only in that factor — and each of its *methods* is one normalizer
step, so the figures describe what dustless itself would do. The keys that build the sets are
written to be cheap: a million URLs × eight factors must not each go through the parser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from dustless.analysis._metrics import Factor, MethodSpec
from dustless.analysis._recommend import FACTOR_METHODS
from dustless.analysis._variants import (
    SORT_VIEW_PARAMS,
    CrawlEvidence,
    crawl_evidence,
    path_end,
    query_to_path_method,
    remove_path_params,
    remove_sort_view_params,
    remove_variant_host,
    remove_variant_path,
    variant_params_method,
)
from dustless.errors import InvalidURL

__all__ = [
    "FACTOR_ORDER",
    "MEASURED_ONLY",
    "PAPER_DEFAULT_DOCUMENTS",
    "SORT_VIEW_PARAMS",
    "VARIANT_FACTORS",
    "CrawlEvidence",
    "build_factors",
    "composite_key",
    "crawl_evidence",
    "remove_path_params",
    "remove_sort_view_params",
    "remove_variant_host",
    "remove_variant_path",
    "strip_fragment",
]

#: Factors measured with a method of their own that no normalizer step stands for (the
#: issue's "kinds of duplicates real sites make"): their rows are figures, never part of a
#: recommended policy (a policy can only name steps).
MEASURED_ONLY: tuple[str, ...] = ("path-params", "sort-view-params")
#: The template variants and the query form of a page (issue 25): printer, mobile and AMP
#: parameters, path prefixes and hosts, and ``/index.php?page=X`` beside ``/X``. Their
#: methods are no normalizer step either, but each is a site rule ``crawl --rules`` knows
#: (``dropParam``, ``stripPrefix``, ``queryToPath``, ``hostRedirect``): the recommender may
#: pick them, and ``--rules-out`` writes them (``_sitepolicy``).
VARIANT_FACTORS: tuple[str, ...] = (
    "variant-params",
    "variant-paths",
    "variant-hosts",
    "query-to-path",
)
FACTOR_ORDER: tuple[str, ...] = (*FACTOR_METHODS, *MEASURED_ONLY, *VARIANT_FACTORS)
# 000 §4.4: the defaults of Apache and IIS, the only default documents the paper measured.
PAPER_DEFAULT_DOCUMENTS: tuple[str, ...] = ("index.htm", "index.html", "default.htm")

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


def strip_fragment(url: str) -> str:
    return url.split("#", 1)[0] if "#" in url else url


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


def _key_lower_path(url: str) -> str:
    # lowercase-path as a grouping key. In the standard form scheme and host are lowercase
    # and escapes are upper-case hex of non-letters' bytes, so lowercasing everything before
    # "?"/"#" groups exactly the URLs that lowercase-path makes equal, without parsing.
    i = path_end(url)
    head = url[:i]
    low = head.lower()
    return url if low == head else low + url[i:]


def _key_trailing_slash(url: str) -> str:
    # remove-trailing-slash as a grouping key: "/a/" and "/a" meet, the root "/" stays.
    i = path_end(url)
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
        return strip_fragment
    return _step_method(_KEY_STEP[name], docs)


def build_factors(
    default_documents: Sequence[str] = PAPER_DEFAULT_DOCUMENTS,
    evidence: CrawlEvidence | None = None,
) -> tuple[Factor, ...]:
    """The factors of 000 §4 and 001, each method one normalizer step (``FACTOR_METHODS``),
    then the measured-only ones (:data:`MEASURED_ONLY`) and the variant ones
    (:data:`VARIANT_FACTORS`), each ``none`` and ``remove`` (``rewrite`` for the query
    form). ``evidence`` is what the crawl shows (:func:`crawl_evidence`): without it
    ``variant-params`` goes by names only and ``query-to-path`` has nothing to rewrite."""
    docs = tuple(default_documents)
    ev = evidence or CrawlEvidence()
    factors = []
    for name in FACTOR_METHODS:
        methods = tuple(
            MethodSpec(m, None, steps)
            if not steps
            else MethodSpec(m, _step_method(next(iter(steps)), docs), steps)
            for m, steps in FACTOR_METHODS[name].items()
        )
        factors.append(Factor(name, methods, key=_factor_key(name, docs)))
    variants: dict[str, tuple[str, Callable[[str], str]]] = {
        "path-params": ("remove", remove_path_params),
        "sort-view-params": ("remove", remove_sort_view_params),
        "variant-params": ("remove", variant_params_method(ev)),
        "variant-paths": ("remove", remove_variant_path),
        "variant-hosts": ("remove", remove_variant_host),
        "query-to-path": ("rewrite", query_to_path_method(ev)),
    }
    for name in (*MEASURED_ONLY, *VARIANT_FACTORS):
        method, fn = variants[name]
        factors.append(Factor(name, (MethodSpec("none", None), MethodSpec(method, fn)), key=fn))
    return tuple(factors)


# The order the composite key applies the factors' keys in: what a URL's spelling wraps
# outermost comes off first (a session in the path before the script's query is read, the
# variant host before ``www``), and case last, as the other keys compare names as written.
_COMPOSITE_ORDER: tuple[str, ...] = (
    "path-params",
    "fragment",
    "variant-hosts",
    "www",
    "query-to-path",
    "variant-paths",
    "variant-params",
    "tracking-params",
    "sort-view-params",
    "default-document",
    "trailing-slash",
    "collapse-slashes",
    "sort-query",
    "path-case",
)


def composite_key(factors: Sequence[Factor]) -> Callable[[str], str]:
    """Every factor's key applied in turn (twice, so a key that another one's change
    enables still applies): the form a URL has once each factor has merged what it merges.
    Two URLs with one composite form differ only in factors — their duplicates are
    explained even when no single factor relates them (``/docs/`` and
    ``/docs/index.html?a=1``)."""
    by_name = {f.name: f.candidate_key() for f in factors}
    keys = [by_name[n] for n in _COMPOSITE_ORDER if n in by_name]
    keys += [k for n, k in by_name.items() if n not in _COMPOSITE_ORDER]

    def key(url: str) -> str:
        for _ in range(2):
            for k in keys:
                url = k(url)
        return url

    return key
