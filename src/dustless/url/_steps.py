"""The normalization steps: names, safety classes, options, and the one fixed order.

Names and safety classes are ARCHITECTURE "Names for the normalization steps"; the classes
follow seed 001's three groups (의미론을 보존하는 / 일반적으로 의미론을 유지하는 / 의미를 변경하는
정규화). Each step is a set of small functions, one per URL component it touches, so that
:class:`~dustless.url.Normalizer` can run a component's steps together (and skip them when
the component is already clean) while :func:`~dustless.url.explain` runs them one by one.
Both give the same result because steps touching different components commute.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from dustless.url import _host, _pathquery, _percent
from dustless.url._parse import Parts

__all__ = [
    "ORDER",
    "SESSION_PARAMS",
    "STEPS",
    "TRACKING_PARAMS",
    "Safety",
    "SiteRule",
    "StepInfo",
    "StepOptions",
]


class Safety(enum.Enum):
    SAFE = "safe"  # RFC 3986 §6.2.2–6.2.3: preserves semantics
    USUALLY = "usually"  # §6.2.4: usually preserves semantics
    UNSAFE = "unsafe"  # changes semantics: may merge different resources (000 measures these)


@dataclass(frozen=True, slots=True)
class StepInfo:
    name: str
    safety: Safety
    description: str  # one line


@runtime_checkable
class SiteRule(Protocol):
    """A per-site rewrite (pattern script or learned DUST rule, seed 001 "URI 리스트에 근거한
    정규화", seed 002). Pattern scripts and learned rules fill it; the ``site-rules`` step calls
    ``apply``."""

    def apply(self, url: str) -> str: ...


# Common tracking parameters: campaign tags that never select content.
TRACKING_PARAMS: tuple[str, ...] = (
    "utm_*",
    "fbclid",
    "gclid",
    "gclsrc",
    "dclid",
    "gbraid",
    "wbraid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "yclid",
    "igshid",
    "_ga",
    "_gl",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    "oly_anon_id",
    "oly_enc_id",
    "vero_id",
    "ref_src",
)
# Session identifiers servers put in the query (PHP, Java, ASP, ColdFusion, …).
SESSION_PARAMS: tuple[str, ...] = (
    "PHPSESSID",
    "phpsessid",
    "jsessionid",
    "JSESSIONID",
    "sid",
    "sessionid",
    "session_id",
    "SESSIONID",
    "ASPSESSIONID*",
    "CFID",
    "CFTOKEN",
    "zenid",
    "osCsid",
)


@dataclass(frozen=True, slots=True)
class StepOptions:
    """Typed options of the steps that have any (CONVENTIONS §3: never dicts of strings)."""

    # remove-default-document: the paper's three (000 §4.4: what Apache and IIS serve for a
    # directory "when the user does not change the configuration"), and the other documents
    # IIS lists by default — default.asp (seed 001's own example), default.aspx, index.asp
    # and iisstart.htm. Table 1 and `evaluate` measure the paper's three
    # (analysis.PAPER_DEFAULT_DOCUMENTS); index.php and the like are an option.
    default_documents: tuple[str, ...] = (
        "index.htm",
        "index.html",
        "default.htm",
        "default.asp",
        "default.aspx",
        "index.asp",
        "iisstart.htm",
    )
    # remove-query-params: names or shell patterns ("utm_*"), matched against the name as
    # written; both tuples are removed.
    remove_params: tuple[str, ...] = TRACKING_PARAMS
    session_params: tuple[str, ...] = SESSION_PARAMS
    # remove-default-query-values: (name, value) pairs whose presence changes nothing, and
    # whether a blank value ("id=") counts as a default (001's example).
    default_query_values: tuple[tuple[str, str], ...] = ()
    drop_blank_values: bool = True
    # remove-default-port: RFC 3986 §6.2.3, the scheme's default port.
    default_ports: tuple[tuple[str, int], ...] = (
        ("http", 80),
        ("https", 443),
        ("ws", 80),
        ("wss", 443),
        ("ftp", 21),
    )
    # site-rules: objects with apply(url) -> str, run last in the order given.
    site_rules: tuple[SiteRule, ...] = field(default=())


AuthorityFn = Callable[[Parts, StepOptions, str], None]
PathFn = Callable[[str, StepOptions], str]
# Query and fragment functions are called only on a query or fragment that is present; they
# return None to remove it (with its "?" or "#").
OptFn = Callable[[str, StepOptions], str | None]
URLFn = Callable[[str, StepOptions], str]
# A path function that needs the scheme (only empty-path-to-slash): (scheme, path, options).
SchemePathFn = Callable[[str, str, StepOptions], str]


@dataclass(frozen=True, slots=True)
class StepImpl:
    info: StepInfo
    authority: AuthorityFn | None = None
    path: PathFn | None = None
    query: OptFn | None = None
    fragment: OptFn | None = None
    url: URLFn | None = None
    scheme_path: SchemePathFn | None = None


# ---- authority-side functions -------------------------------------------------------------


def _encode_authority(p: Parts, _o: StepOptions, _url: str) -> None:
    # The host is not percent-encoded here: a non-ASCII host is idna-host's business.
    if p.userinfo is not None:
        p.userinfo = _percent.encode_userinfo(p.userinfo, None)


def _upper_hex_authority(p: Parts, _o: StepOptions, _url: str) -> None:
    if p.userinfo is not None:
        p.userinfo = _percent.upper_hex(p.userinfo)
    if not p.host.startswith("["):
        p.host = _percent.upper_hex(p.host)


def _decode_authority(p: Parts, _o: StepOptions, _url: str) -> None:
    if p.userinfo is not None:
        p.userinfo = _percent.decode_unreserved(p.userinfo)
    if not p.host.startswith("["):
        p.host = _percent.decode_unreserved(p.host)


def _lower_scheme(p: Parts, _o: StepOptions, _url: str) -> None:
    p.scheme = p.scheme.lower()  # §3.1: the scheme is ASCII by its grammar


def _https_to_http(p: Parts, _o: StepOptions, _url: str) -> None:
    if p.scheme.lower() == "https":
        p.scheme = "http"
        # https://h:443/ is https://h/, which maps to http://h/ — not to http://h:443/.
        if p.port is not None and p.port.lstrip("0") == "443":
            p.port = None


def _lower_host(p: Parts, _o: StepOptions, _url: str) -> None:
    p.host = _host.lower_host(p.host)


def _idna_host(p: Parts, _o: StepOptions, url: str) -> None:
    p.host = _host.idna_host(p.host, url)


def _remove_default_port(p: Parts, o: StepOptions, _url: str) -> None:
    # §6.2.3: an empty port or the scheme's default is omitted. "080" is port 80 too (§3.2.3
    # reads the port as a decimal number).
    if p.port is None:
        return
    if p.port == "":
        p.port = None
        return
    scheme = p.scheme.lower()
    number = int(p.port)
    for name, default in o.default_ports:
        if name == scheme and default == number:
            p.port = None
            return


def _add_www(p: Parts, _o: StepOptions, _url: str) -> None:
    p.host = _host.add_www(p.host)


def _remove_www(p: Parts, _o: StepOptions, _url: str) -> None:
    p.host = _host.remove_www(p.host)


# ---- query-side functions -----------------------------------------------------------------


def _remove_params(q: str, o: StepOptions) -> str | None:
    return _pathquery.remove_query_params(q, o.remove_params + o.session_params)


def _remove_default_values(q: str, o: StepOptions) -> str | None:
    return _pathquery.remove_default_query_values(q, o.default_query_values, o.drop_blank_values)


def _remove_empty_query(q: str, _o: StepOptions) -> str | None:
    return None if q == "" else q


def _remove_fragment(_f: str, _o: StepOptions) -> str | None:
    return None


# RFC 3986 §6.2.3: an empty path is "/" only where the scheme says so — http and https
# (RFC 9110 §4.2.3: "an empty path component is equivalent to an absolute path of '/'") and
# ws and wss (RFC 6455 §3: the resource name is "/" when the path is empty). For any other
# scheme "a://b" and "a://b/" may name different resources, so the path is kept.
EMPTY_PATH_IS_SLASH = frozenset({"http", "https", "ws", "wss"})


def _empty_path_to_slash(scheme: str, path: str, _o: StepOptions) -> str:
    if path or scheme.lower() not in EMPTY_PATH_IS_SLASH:
        return path
    return "/"


def _site_rules(url: str, o: StepOptions) -> str:
    for rule in o.site_rules:
        url = rule.apply(url)
    return url


def _info(name: str, safety: Safety, description: str) -> StepInfo:
    return StepInfo(name, safety, description)


S, U, X = Safety.SAFE, Safety.USUALLY, Safety.UNSAFE

# THE ORDER. Every policy runs its steps in this order; docs/normalization.md explains it.
#  1. Percent-encoding first, so that every later step sees each character in one spelling
#     (a decoded "%41" must still be lowercased by lowercase-host, "%2E%2E" removed as "..").
#  2. Scheme, then the authority: https-to-http before remove-default-port, so that
#     https://h:443 → http://h and https://h:80 → http://h:80 → http://h in one pass.
#  3. The path: dot segments (§5.2.4) before collapse-slashes (so "/a//../b" is read as the
#     RFC reads it), case before the default document (so "/INDEX.HTM" is recognised), the
#     default document before the trailing slash.
#  4. The query: remove parameters before sorting, then drop what is left empty.
#  5. The fragment, then site rules, which see the URL as every other step left it.
_IMPLS: tuple[StepImpl, ...] = (
    StepImpl(
        _info("encode-unsafe", S, "percent-encode characters not allowed in a URI, as UTF-8"),
        authority=_encode_authority,
        path=_percent.encode_path,
        query=_percent.encode_query,
        fragment=_percent.encode_query,
    ),
    StepImpl(
        _info("uppercase-percent-hex", S, "write percent-escapes in upper case: %2f → %2F"),
        authority=_upper_hex_authority,
        path=_percent.upper_hex,
        query=_percent.upper_hex,
        fragment=_percent.upper_hex,
    ),
    StepImpl(
        _info(
            "decode-unreserved",
            S,
            "decode escapes of unreserved characters (%7E → ~); %2F %3F %23 %25 %26 %3D stay",
        ),
        authority=_decode_authority,
        path=_percent.decode_unreserved,
        query=_percent.decode_unreserved,
        fragment=_percent.decode_unreserved,
    ),
    StepImpl(_info("lowercase-scheme", S, "lowercase the scheme: HTTP → http"), _lower_scheme),
    StepImpl(
        _info("https-to-http", X, "rewrite https to http (001: 제한 프로토콜)"), _https_to_http
    ),
    StepImpl(
        _info("lowercase-host", S, "lowercase the host; IPv6 literals in RFC 5952 form"),
        _lower_host,
    ),
    StepImpl(_info("idna-host", S, "internationalized host names to punycode (xn--…)"), _idna_host),
    StepImpl(
        _info("remove-default-port", S, "drop an empty port or the scheme's default (:80)"),
        _remove_default_port,
    ),
    StepImpl(_info("add-www", X, "add www. to a bare registrable domain (000 §4.3)"), _add_www),
    StepImpl(
        _info("remove-www", X, "drop a leading www. label, never leaving a public suffix"),
        _remove_www,
    ),
    StepImpl(
        _info("remove-dot-segments", S, "resolve . and .. path segments (RFC 3986 §5.2.4)"),
        path=_pathquery.remove_dot_segments,
    ),
    StepImpl(
        _info(
            "empty-path-to-slash",
            S,
            "an empty path becomes / where the scheme says so (http, https, ws, wss)",
        ),
        scheme_path=_empty_path_to_slash,
    ),
    StepImpl(
        _info("collapse-slashes", X, "replace runs of slashes in the path by one: //a → /a"),
        path=_pathquery.collapse_slashes,
    ),
    StepImpl(
        _info("lowercase-path", X, "lowercase the path (000 §4.1; escapes keep their hex)"),
        path=_pathquery.lower_path,
    ),
    StepImpl(
        _info("uppercase-path", X, "uppercase the path (000 §4.1, for measurement only)"),
        path=_pathquery.upper_path,
    ),
    StepImpl(
        _info(
            "remove-default-document",
            X,
            "drop a last segment named in default_documents: /a/index.html → /a/",
        ),
        path=lambda v, o: _pathquery.remove_default_document(v, o.default_documents),
    ),
    StepImpl(
        _info(
            "add-trailing-slash",
            U,
            "append / to a path whose last segment has no extension: /pubs → /pubs/",
        ),
        path=_pathquery.add_trailing_slash,
    ),
    StepImpl(
        _info("remove-trailing-slash", X, "drop trailing slashes except the root: /pubs/ → /pubs"),
        path=_pathquery.remove_trailing_slash,
    ),
    StepImpl(
        _info(
            "remove-query-params",
            X,
            "drop query parameters named in remove_params and session_params (utm_*, fbclid…)",
        ),
        query=_remove_params,
    ),
    StepImpl(
        _info(
            "remove-default-query-values",
            X,
            "drop parameters with a blank or configured default value: ?id=&sort=ascending",
        ),
        query=_remove_default_values,
    ),
    StepImpl(
        _info("sort-query", X, "sort query parameters by name, stable, each kept byte for byte"),
        query=_pathquery.sort_query,
    ),
    StepImpl(
        _info("remove-empty-query", X, "drop a ? with nothing after it"), query=_remove_empty_query
    ),
    StepImpl(
        _info("remove-fragment", U, "drop the #fragment: the server never sees it (000 §2.2)"),
        fragment=_remove_fragment,
    ),
    StepImpl(
        _info("site-rules", X, "per-site rewrites: pattern scripts and learned rules"),
        url=_site_rules,
    ),
)

IMPLS: Mapping[str, StepImpl] = MappingProxyType({i.info.name: i for i in _IMPLS})
ORDER: tuple[str, ...] = tuple(i.info.name for i in _IMPLS)
STEPS: Mapping[str, StepInfo] = MappingProxyType({i.info.name: i.info for i in _IMPLS})

# Steps that undo each other: a policy may hold at most one of each pair.
CONFLICTS: tuple[tuple[str, str], ...] = (
    ("add-www", "remove-www"),
    ("add-trailing-slash", "remove-trailing-slash"),
    ("lowercase-path", "uppercase-path"),
)

# The steps a clean component (no "%", nothing to encode, no dot segment) skips unchanged.
SKIPPABLE: frozenset[str] = frozenset(
    {"encode-unsafe", "uppercase-percent-hex", "decode-unreserved", "remove-dot-segments"}
)
