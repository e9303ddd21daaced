"""The factors ``dustless evaluate`` measures and their methods (seed 000 §4, seed 001).

A *factor* (path case, trailing slash, ``www``, default document, and seed 001's sort query,
fragment, doubled slashes, tracking parameters) groups the URLs of a crawl into candidate
sets — URLs that differ only in that factor — and each of its *methods* is one normalizer
step, so the figures describe what dustless itself would do. The keys that build the sets are
written to be cheap: a million URLs × eight factors must not each go through the parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from dustless.analysis._metrics import Factor, MethodSpec
from dustless.analysis._recommend import FACTOR_METHODS
from dustless.errors import InvalidURL

__all__ = [
    "FACTOR_ORDER",
    "MEASURED_ONLY",
    "PAPER_DEFAULT_DOCUMENTS",
    "SORT_VIEW_PARAMS",
    "build_factors",
    "remove_path_params",
    "remove_sort_view_params",
    "strip_fragment",
]

#: Factors measured with a method of their own that no normalizer step stands for (the
#: issue's "kinds of duplicates real sites make"): their rows are figures, never part of a
#: recommended policy (a policy can only name steps).
MEASURED_ONLY: tuple[str, ...] = ("path-params", "sort-view-params")
FACTOR_ORDER: tuple[str, ...] = (*FACTOR_METHODS, *MEASURED_ONLY)
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
        return strip_fragment
    return _step_method(_KEY_STEP[name], docs)


# ---- the measured-only factors: plain functions of a URL in its standard form ----


def remove_path_params(url: str) -> str:
    """Drop the ``;name=value`` parameters of every path segment (RFC 3986 §3.3: a segment
    may carry parameters after ";"). Servlet containers put the session there —
    ``/view.jsp;jsessionid=8CBC…`` — and ignore it when serving, so every page a session
    visits gets a spelling of its own. A ``;`` part without ``=`` stays: it is no parameter
    of the ``name=value`` kind these servers write. The query (Apache's ``?C=N;O=D``) is
    left alone."""
    i = _path_end(url)
    head = url[:i]
    if ";" not in head:
        return url
    a = head.find("//")
    start = head.find("/", a + 2) if a >= 0 else head.find("/")
    if start < 0 or ";" not in head[start:]:
        return url
    segments = []
    for seg in head[start:].split("/"):
        if ";" in seg:
            first, *params = seg.split(";")
            seg = ";".join([first, *(p for p in params if "=" not in p)])
        segments.append(seg)
    return head[:start] + "/".join(segments) + url[i:]


#: Query parameters that only reorder or re-present a listing (the issue's "sort orders",
#: docs/evaluation.md "Path parameters and sort/view parameters"), matched without case:
#: the list is the same documents in another order or layout.
SORT_VIEW_PARAMS: frozenset[str] = frozenset(
    {
        "sort",
        "sort_by",
        "sortby",
        "sort_order",
        "sortorder",
        "order",
        "orderby",
        "order_by",
        "view",
        "display",
        "layout",
    }
)
# "dir"/"direction" name a directory as often as a sort direction: only with a direction.
_DIRECTION_PARAMS = frozenset({"dir", "direction"})
_DIRECTIONS = frozenset({"asc", "desc", "ascending", "descending", "a", "d", "up", "down"})
# Apache mod_autoindex: C (sort column N/M/S/D), O (order A/D), F (format 0/1/2), V (version
# sort); P (a pattern) filters the listing and stays. Single letters mean anything elsewhere,
# so they go only from a query made of autoindex's arguments alone (``?C=N;O=D``).
_AUTOINDEX_DROP = frozenset({"C", "O", "F", "V"})
_AUTOINDEX_ALL = _AUTOINDEX_DROP | {"P"}


def remove_sort_view_params(url: str) -> str:
    """Drop the query parameters that only sort or re-present a page (``SORT_VIEW_PARAMS``,
    ``dir=asc``, autoindex's ``C``/``O``/``F``/``V``); "&" and ";" both separate them
    (autoindex writes ``?C=N;O=D``). The other parameters stay byte for byte, in order."""
    q = url.find("?")
    if q < 0:
        return url
    h = url.find("#", q)
    end = len(url) if h < 0 else h
    query = url[q + 1 : end]
    pieces = re.split(r"([&;])", query)
    params = pieces[0::2]
    names = [p.split("=", 1)[0] for p in params]
    autoindex = all(n in _AUTOINDEX_ALL for n in names)
    kept: list[str] = []
    for k, (param, name) in enumerate(zip(params, names, strict=True)):
        low = name.lower()
        drop = (
            low in SORT_VIEW_PARAMS
            or (low in _DIRECTION_PARAMS and param[len(name) + 1 :].lower() in _DIRECTIONS)
            or (autoindex and name in _AUTOINDEX_DROP)
        )
        if not drop:
            kept.append(param if not kept else pieces[2 * k - 1] + param)
    if len(kept) == len(params):
        return url
    rest = url[end:]
    return url[:q] + ("?" + "".join(kept) if kept else "") + rest


_MEASURED: Mapping[str, Callable[[str], str]] = {
    "path-params": remove_path_params,
    "sort-view-params": remove_sort_view_params,
}


def build_factors(
    default_documents: Sequence[str] = PAPER_DEFAULT_DOCUMENTS,
) -> tuple[Factor, ...]:
    """The factors of 000 §4 and 001, each method one normalizer step (``FACTOR_METHODS``),
    then the measured-only ones (:data:`MEASURED_ONLY`: ``none`` and ``remove``)."""
    docs = tuple(default_documents)
    factors = []
    for name in FACTOR_METHODS:
        methods = tuple(
            MethodSpec(m, None, steps)
            if not steps
            else MethodSpec(m, _step_method(next(iter(steps)), docs), steps)
            for m, steps in FACTOR_METHODS[name].items()
        )
        factors.append(Factor(name, methods, key=_factor_key(name, docs)))
    for name in MEASURED_ONLY:
        fn = _MEASURED[name]
        factors.append(Factor(name, (MethodSpec("none", None), MethodSpec("remove", fn)), key=fn))
    return tuple(factors)
