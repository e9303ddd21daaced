"""The factors ``dustless evaluate`` measures that no normalizer step stands for (issue 25).

Real sites make duplicates no step of seed 000 or 001 undoes: Tomcat's ``;jsessionid=`` in
the path, a listing's sort and view parameters, printer, mobile and AMP templates of one page
(a parameter, a path prefix, a host), and a CMS's ``/index.php?page=X`` beside ``/X``. Each
function here maps a URL in its standard form to the form its factor's method gives; two
of them read what the crawl itself shows (:class:`CrawlEvidence`). All pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

__all__ = [
    "SORT_VIEW_PARAMS",
    "VARIANT_HOST_LABELS",
    "VARIANT_PARAM_NAMES",
    "VARIANT_PREFIXES",
    "CrawlEvidence",
    "crawl_evidence",
    "path_end",
    "query_to_path_method",
    "remove_path_params",
    "remove_sort_view_params",
    "remove_variant_host",
    "remove_variant_path",
    "rules_of_merge",
    "variant_params_method",
]


def path_end(url: str) -> int:
    q = url.find("?")
    h = url.find("#")
    if q < 0:
        return len(url) if h < 0 else h
    return q if h < 0 or q < h else h


# ---- the measured-only factors: plain functions of a URL in its standard form ----


def remove_path_params(url: str) -> str:
    """Drop the ``;name=value`` parameters of every path segment (RFC 3986 §3.3: a segment
    may carry parameters after ";"). Servlet containers put the session there —
    ``/view.jsp;jsessionid=8CBC…`` — and ignore it when serving, so every page a session
    visits gets a spelling of its own. A ``;`` part without ``=`` stays: it is no parameter
    of the ``name=value`` kind these servers write. The query (Apache's ``?C=N;O=D``) is
    left alone."""
    i = path_end(url)
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


def _is_sort_view(name: str, value: str) -> bool:
    low = name.lower()
    return low in SORT_VIEW_PARAMS or (low in _DIRECTION_PARAMS and value.lower() in _DIRECTIONS)


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


# ---- template variants and the query form (issue 25) ----

#: Parameters whose presence, with any value, asks for a printer, mobile or AMP template of
#: the same page (lowercase names).
VARIANT_PARAM_NAMES: frozenset[str] = frozenset(
    {"print", "printable", "printer", "printview", "printversion", "mobile", "amp", "lite"}
)
#: Parameters that ask for a variant only with one of these values: ``view=print`` is a
#: printer page, ``view=grid`` is no variant (sort/view parameters are a factor of their own).
_VARIANT_VALUES: frozenset[str] = frozenset(
    {"print", "printable", "printer", "mobile", "amp", "lite", "text", "plain"}
)
_VARIANT_VALUED: frozenset[str] = frozenset(
    {"format", "view", "output", "outputtype", "device", "mode", "layout", "version", "type",
     "template", "tmpl", "skin", "theme"}
)  # fmt: skip
#: ``m=1`` (a mobile switch) only with a true value: ``m`` alone is too short a name to trust.
_SWITCHES: frozenset[str] = frozenset({"m"})
_TRUE = frozenset({"1", "true", "yes", "on", "mobile"})
#: First path segments that serve a template variant of the rest of the path.
VARIANT_PREFIXES: tuple[str, ...] = ("print", "printable", "printer", "amp", "mobile", "m")
#: Host labels of a variant host of the bare host (``m.example.org``), like ``www.``.
VARIANT_HOST_LABELS: frozenset[str] = frozenset({"m", "mobile", "amp", "print", "printer"})


def _is_variant_param(name: str, value: str) -> bool:
    low = name.lower()
    if low in VARIANT_PARAM_NAMES:
        return True
    v = value.lower()
    if low in _VARIANT_VALUED:
        return v in _VARIANT_VALUES
    return low in _SWITCHES and v in _TRUE


def _authority_span(url: str) -> tuple[int, int]:
    a = url.find("//") + 2
    e = url.find("/", a)
    q = url.find("?", a)
    if q >= 0 and (e < 0 or q < e):
        e = q
    return a, len(url) if e < 0 else e


def _drop_params(url: str, drop: Callable[[str, str], bool]) -> str:
    """``url`` without the query parameters ``drop(name, value)`` names; the others stay byte
    for byte, in order ("&" and ";" both separate, as in :func:`remove_sort_view_params`)."""
    q = url.find("?")
    if q < 0:
        return url
    h = url.find("#", q)
    end = len(url) if h < 0 else h
    pieces = re.split(r"([&;])", url[q + 1 : end])
    params = pieces[0::2]
    kept: list[str] = []
    for k, param in enumerate(params):
        name, _, value = param.partition("=")
        if not drop(name, value):
            kept.append(param if not kept else pieces[2 * k - 1] + param)
    if len(kept) == len(params):
        return url
    return url[:q] + ("?" + "".join(kept) if kept else "") + url[end:]


def remove_variant_path(url: str) -> str:
    """``/print/a/b.html`` → ``/a/b.html``: a first path segment that names a template
    variant (:data:`VARIANT_PREFIXES`) of the path after it; ``/print/`` alone stays. Every
    such prefix goes (``/amp/print/a.html``), so the form is the same when applied twice."""
    _a, e = _authority_span(url)
    rest = url[e:]
    while rest.startswith("/"):
        seg_end = rest.find("/", 1)
        if seg_end < 0 or seg_end + 1 >= len(rest) or rest[seg_end + 1] in "?#":
            break
        if rest[1:seg_end].split(";", 1)[0].lower() not in VARIANT_PREFIXES:
            break
        rest = rest[seg_end:]
    return url if len(rest) == len(url) - e else url[:e] + rest


def remove_variant_host(url: str) -> str:
    """``m.example.org`` → ``example.org`` (:data:`VARIANT_HOST_LABELS`), as ``remove-www``
    folds a ``www`` twin: only when what is left still has a dot (``m.org`` stays)."""
    a, e = _authority_span(url)
    auth = url[a:e]
    at = auth.rfind("@") + 1
    host = auth[at:]
    label, dot, rest = host.partition(".")
    if not dot or label.lower() not in VARIANT_HOST_LABELS or "." not in rest.split(":", 1)[0]:
        return url
    return url[: a + at] + rest + url[e:]


@dataclass(frozen=True, slots=True)
class CrawlEvidence:
    """What the crawl itself shows, for the factors that read it (issue 25: "detect by names
    *and* by the crawl's own evidence").

    ``params``: per host, the query parameters whose presence never changed the document
    (same main-content class with and without them, :func:`crawl_evidence`). ``query_forms``:
    per host, the ``(script path, parameter)`` pairs whose value is a path the crawl also
    requested (``/index.php`` and ``page`` when ``/index.php?page=doc/a.html`` and
    ``/doc/a.html`` were both requested).
    """

    params: Mapping[str, frozenset[str]] = field(default_factory=dict)
    query_forms: Mapping[str, frozenset[tuple[str, str]]] = field(default_factory=dict)


# A parameter is read as irrelevant when the crawl saw it leave the document alone on at
# least two paths, and change it on at most one path in five. Counted by path, not by URL:
# one script that answers the parameter with another page (a search form that rejects it,
# a "not found" page) is one path against every page the parameter left alone.
_PARAM_MIN_SAME = 2
_PARAM_MAX_DIFF_SHARE = 0.2


def _split(url: str) -> tuple[str, str, list[tuple[str, str]]]:
    """``(authority, path without path parameters, [(name, value)…])`` of a standard URL."""
    a, e = _authority_span(url)
    end = path_end(url)
    path = remove_path_params("http://h" + url[e:end])[8:] if ";" in url[e:end] else url[e:end]
    q = url.find("?")
    pairs: list[tuple[str, str]] = []
    if 0 <= q < len(url):
        h = url.find("#", q)
        for p in re.split(r"[&;]", url[q + 1 : len(url) if h < 0 else h]):
            if p:
                name, _, value = p.partition("=")
                pairs.append((name, value))
    return url[a:e], path, pairs


def crawl_evidence(outcome: Mapping[str, str | None]) -> CrawlEvidence:
    """Read :class:`CrawlEvidence` from ``URL -> document`` (``None``: no document).

    Parameters: each downloaded URL with a query is compared with the downloaded URL of the
    same host and path (path parameters and a trailing default document aside) whose
    parameters are the largest subset of its own; the parameters it has beyond that one are
    *same* when the two documents are one, else *different*. Query forms: a parameter value
    that, as a path, is a path the crawl requested on the host.
    """
    paths: dict[str, set[str]] = {}
    for url in outcome:
        auth, path, _pairs = _split(url)
        paths.setdefault(auth, set()).add(path)
    forms: dict[str, set[tuple[str, str]]] = {}
    for url in outcome:
        if "?" not in url:
            continue
        auth, path, pairs = _split(url)
        base = path[: -len("index.html")] if path.endswith("/index.html") else path
        known = paths.get(auth, set())
        for name, value in pairs:
            # A value that reads as a path (a "/" inside, or a file name), and is one.
            target = "/" + unquote(value).lstrip("/")
            pathlike = "/" in value.strip("/") or "." in value
            if pathlike and len(target) > 1 and target in known and target != base:
                forms.setdefault(auth, set()).add((base, name))
    # Parameters are compared on the path form: `/index.php?page=a.html&x=1` against
    # `/a.html` (what the PHP form is, above), not against the site's home page.
    frozen = {a: frozenset(fs) for a, fs in forms.items()}
    rewrite = query_to_path_method(CrawlEvidence(query_forms=frozen))
    by_base: dict[tuple[str, str], list[tuple[frozenset[str], str]]] = {}
    split: list[tuple[str, str, frozenset[str], str]] = []
    for url, doc in outcome.items():
        if doc is None:
            continue
        auth, path, pairs = _split(rewrite(url))
        if any(_is_variant_param(n, v) or _is_sort_view(n, v) for n, v in pairs):
            continue  # another template or order may well be another text: no evidence
        base = path[: -len("index.html")] if path.endswith("/index.html") else path
        names = frozenset(n for n, _ in pairs)
        split.append((auth, base, names, doc))
        by_base.setdefault((auth, base), []).append((names, doc))
    same: dict[tuple[str, str], set[str]] = {}
    diff: dict[tuple[str, str], set[str]] = {}
    for auth, base, names, doc in split:
        if not names:
            continue
        best: tuple[frozenset[str], str] | None = None
        for other_names, other_doc in by_base.get((auth, base), ()):
            if other_names < names and (best is None or len(other_names) > len(best[0])):
                best = (other_names, other_doc)
        if best is None:
            continue
        paths_of = same if best[1] == doc else diff
        for name in names - best[0]:
            paths_of.setdefault((auth, name), set()).add(base)
    params: dict[str, set[str]] = {}
    for (auth, name), same_paths in same.items():
        changed = diff.get((auth, name), set())
        n = len(same_paths - changed)  # a path seen both ways counts as changed
        if n >= _PARAM_MIN_SAME and len(changed) <= _PARAM_MAX_DIFF_SHARE * n:
            params.setdefault(auth, set()).add(name)
    return CrawlEvidence(
        params={a: frozenset(ns) for a, ns in params.items()},
        query_forms=frozen,
    )


def variant_params_method(evidence: CrawlEvidence) -> Callable[[str], str]:
    """Drop the variant parameters (by name and value) and the parameters the crawl showed
    never change the document on the URL's host."""
    params = evidence.params

    def method(url: str) -> str:
        if "?" not in url:
            return url
        a, e = _authority_span(url)
        extra = params.get(url[a:e], frozenset())
        return _drop_params(url, lambda n, v: n in extra or _is_variant_param(n, v))

    method.__name__ = "method_remove_variant_params"
    return method


def _named(name: str) -> Callable[[str, str], bool]:
    return lambda n, _v: n == name


def query_to_path_method(evidence: CrawlEvidence) -> Callable[[str], str]:
    """``/index.php?page=doc/a.html&x=1`` → ``/doc/a.html?x=1`` on a host where the crawl
    requested both forms (:class:`CrawlEvidence` ``query_forms``); path parameters of the
    script (``/index.php;jsessionid=…``) go with it."""
    forms = evidence.query_forms

    def method(url: str) -> str:
        if "?" not in url:
            return url
        a, e = _authority_span(url)
        pairs = forms.get(url[a:e])
        if not pairs:
            return url
        _auth, path, params = _split(url)
        for script, name in pairs:
            if script != path and not (script.endswith("/") and path == script + "index.html"):
                continue
            value = next((v for n, v in params if n == name), None)
            if value is None:
                continue
            target = "/" + unquote(value).lstrip("/")
            rest = _drop_params(url, _named(name))
            q = rest.find("?")
            tail = rest[q:] if q >= 0 else rest[path_end(rest) :]
            return url[:e] + target + tail
        return url

    method.__name__ = "method_query_to_path"
    return method


def rules_of_merge(
    factor: str, url: str, form: str, evidence: CrawlEvidence
) -> list[tuple[str, str, str, str]]:
    """The site rules (docs/pattern-scripts.md) that take ``url`` to ``form`` as ``factor``'s
    method does, as ``(element, identity, name, to)``: ``identity`` is the host the rule
    lives on. A parameter becomes ``dropParam``; a variant path prefix a ``stripPrefix``
    (``name`` the whole prefix, ``/print/``), whose leading segments alone match; a query
    form a ``queryToPath`` (``name`` the script and parameter, ``/index.php?page``, ``to``
    ``/{x}``), which keeps the other parameters; a variant host a ``hostRedirect`` to the
    bare host."""
    a, e = _authority_span(url)
    auth = url[a:e]
    if factor == "variant-hosts":
        fa, fe = _authority_span(form)
        return [("hostRedirect", auth, "", form[fa:fe].rsplit(":", 1)[0])]
    if factor == "variant-paths":
        removed = url[e : len(url) - (len(form) - e)]  # the prefixes: "/print" or "/amp/print"
        return [("stripPrefix", auth, removed.rstrip("/") + "/", "")]
    _auth, path, pairs = _split(url)
    if factor == "variant-params":
        kept = {n for n, _v in _split(form)[2]}
        return [("dropParam", auth, n, "") for n, _v in pairs if n not in kept]
    if factor == "query-to-path":
        for script, name in sorted(evidence.query_forms.get(auth, ())):
            if any(n == name for n, _v in pairs) and (
                script == path or path == script + "index.html"
            ):
                return [("queryToPath", auth, f"{path}?{name}", "/{x}")]
    return []
