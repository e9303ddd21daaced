"""Rules learned from a crawl, kept in the same file as hand-written pattern scripts.

Seed 001 ends with "URL-list-based normalization": rules for one site found in a crawl's
URL list (DustBuster, Bar-Yossef, Keidar & Schonfeld, WWW 2007): *substring substitutions*
(``/story?id=`` → ``/story_``) and *query-parameter rules* (a parameter that never changes
the content is dropped; one whose value never matters is fixed). Seed 001 also names the
rules a server states itself by redirecting: ``/dir`` → ``/dir/`` and a bare host → ``www.``.

Every rule applies to the URLs of its site (the ``<identity>`` hosts), carries the evidence
it was accepted on (``support``: how many URL pairs or redirects showed it; ``fp_rate``: the
share of those whose content differed), and has an ``apply(url) -> str`` that never raises
and returns ``url`` unchanged when it does not apply.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from dustless.errors import ScriptError
from dustless.url import LenientParts, replace_host, split_lenient

__all__ = [
    "NORMALIZE_STEPS",
    "AddSlash",
    "DropParam",
    "FixParam",
    "HostRedirect",
    "LearnedRule",
    "NormalizeStep",
    "QueryToPath",
    "StripPrefix",
    "Substitute",
]


def _check_stats(support: int | None, fp_rate: float | None) -> None:
    if support is not None and support < 0:
        raise ScriptError(f"support {support} is negative; expected a count ≥ 0")
    if fp_rate is not None and (math.isnan(fp_rate) or not 0.0 <= fp_rate <= 1.0):
        raise ScriptError(f"fp_rate {fp_rate} is out of range; expected a fraction in [0, 1]")


def _absolute(url: str) -> LenientParts | None:
    parts = split_lenient(url)
    return parts if parts.is_absolute else None


def _check_path(path: str | None, what: str) -> None:
    if path is not None and not path.startswith("/"):
        raise ScriptError(
            f"{what} path {path!r} does not start with '/'; expected an absolute path"
        )


@dataclass(frozen=True, slots=True)
class Substitute:
    """DustBuster substring substitution: ``find`` → ``replace`` after the host.

    Applied to path, query and fragment only, so a per-host rule never moves a URL to
    another host. ``replace`` may not contain ``find``: such a rule would never settle.
    """

    element: ClassVar[str] = "substitute"
    find: str
    replace: str
    support: int | None = None
    fp_rate: float | None = None
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_stats(self.support, self.fp_rate)
        if not self.find.strip():
            raise ScriptError("substitute has an empty 'from'; expected the text to replace")
        if self.find in self.replace:
            raise ScriptError(
                f"substitute 'to' {self.replace!r} contains 'from' {self.find!r}; expected a "
                "replacement that does not re-create what it replaces"
            )

    def apply(self, url: str) -> str:
        if self.find not in url:
            return url  # the usual case, and the learner measures a rule on every URL
        parts = _absolute(url)
        if parts is None:
            return url
        head = f"{parts.scheme}://{parts.authority}"
        return head + url[len(head) :].replace(self.find, self.replace)

    def describe(self) -> str:
        return f"substitute {self.find!r} → {self.replace!r}"


@dataclass(frozen=True, slots=True)
class DropParam:
    """A query parameter that never changes the content: removed (on ``path`` only, if set)."""

    element: ClassVar[str] = "dropParam"
    name: str
    path: str | None = None
    support: int | None = None
    fp_rate: float | None = None
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_stats(self.support, self.fp_rate)
        _check_path(self.path, "dropParam")
        if not self.name.strip():
            raise ScriptError("dropParam has an empty name; expected a parameter name")

    def apply(self, url: str) -> str:
        if self.name not in url:
            return url  # the usual case, and the learner measures a rule on every URL
        parts = _absolute(url)
        if parts is None:
            return url
        # The parameter may also sit in the path, as a segment parameter (RFC 3986 §3.3:
        # "/view.jsp;jsessionid=8CBC…?no=4", the Java servlet spelling of a session id).
        path = drop_path_param(parts.path, self.name)
        if self.path not in (None, path):
            return url
        query = parts.query
        if query is not None:
            pieces = query.split("&")
            kept = [p for p in pieces if p.partition("=")[0] != self.name]
            if len(kept) != len(pieces):
                query = "&".join(kept) if any(kept) else None
        if path == parts.path and query == parts.query:
            return url
        return LenientParts(parts.scheme, parts.authority, path, query, parts.fragment).unsplit()

    def describe(self) -> str:
        where = f" on {self.path}" if self.path is not None else ""
        return f"drop parameter {self.name!r}{where}"


def drop_path_param(path: str, name: str) -> str:
    """``path`` without the segment parameters ``;name=value`` (or ``;name``) named ``name``."""
    if ";" not in path:
        return path
    segments = []
    for segment in path.split("/"):
        if ";" in segment:
            head, *params = segment.split(";")
            kept = [p for p in params if p.partition("=")[0] != name]
            segment = ";".join([head, *kept])
        segments.append(segment)
    return "/".join(segments)


@dataclass(frozen=True, slots=True)
class FixParam:
    """A parameter whose value never matters: present with any value → ``value``."""

    element: ClassVar[str] = "fixParam"
    name: str
    value: str
    path: str | None = None
    support: int | None = None
    fp_rate: float | None = None
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_stats(self.support, self.fp_rate)
        _check_path(self.path, "fixParam")
        if not self.name.strip():
            raise ScriptError("fixParam has an empty name; expected a parameter name")

    def apply(self, url: str) -> str:
        if self.name not in url:
            return url
        parts = _absolute(url)
        if parts is None or parts.query is None or (self.path not in (None, parts.path)):
            return url
        fixed = f"{self.name}={self.value}"
        pieces = [fixed if p.partition("=")[0] == self.name else p for p in parts.query.split("&")]
        query = "&".join(pieces)
        if query == parts.query:
            return url
        return LenientParts(
            parts.scheme, parts.authority, parts.path, query, parts.fragment
        ).unsplit()

    def describe(self) -> str:
        where = f" on {self.path}" if self.path is not None else ""
        return f"fix parameter {self.name!r} = {self.value!r}{where}"


@dataclass(frozen=True, slots=True)
class AddSlash:
    """The server redirected ``/dir`` to ``/dir/`` (seed 001): add the slash.

    With ``path``: that path only (what the server said). Without: every path whose last
    segment has no extension, once the learner has seen enough redirects to generalize.
    """

    element: ClassVar[str] = "addSlash"
    path: str | None = None
    support: int | None = None
    fp_rate: float | None = None
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_stats(self.support, self.fp_rate)
        _check_path(self.path, "addSlash")
        if self.path is not None and self.path.endswith("/"):
            raise ScriptError(f"addSlash path {self.path!r} ends with '/'; expected /dir")

    def apply(self, url: str) -> str:
        parts = _absolute(url)
        if parts is None or not parts.path or parts.path.endswith("/"):
            return url
        if self.path is not None:
            if parts.path != self.path:
                return url
        elif "." in parts.path.rpartition("/")[2]:
            return url
        path = parts.path + "/"
        return LenientParts(
            parts.scheme, parts.authority, path, parts.query, parts.fragment
        ).unsplit()

    def describe(self) -> str:
        return f"add trailing slash to {self.path}" if self.path else "add trailing slash"


@dataclass(frozen=True, slots=True)
class HostRedirect:
    """The server redirected its host to ``to`` (seed 001: bare host → ``www.``)."""

    element: ClassVar[str] = "hostRedirect"
    to: str
    support: int | None = None
    fp_rate: float | None = None
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_stats(self.support, self.fp_rate)
        object.__setattr__(self, "to", self.to.lower())
        if not self.to or any(c in self.to for c in "/?#@: \t\r\n"):
            raise ScriptError(f"hostRedirect to {self.to!r} is not a host name; expected www.host")

    def apply(self, url: str) -> str:
        parts = _absolute(url)
        if parts is None or parts.authority is None or parts.host == self.to:
            return url
        authority = replace_host(parts.authority, self.to)
        return LenientParts(
            parts.scheme, authority, parts.path, parts.query, parts.fragment
        ).unsplit()

    def describe(self) -> str:
        return f"host → {self.to}"


@dataclass(frozen=True, slots=True)
class StripPrefix:
    """A template variant under a path prefix: ``/amp/{rest}`` → ``/{rest}``.

    Sites serve their printer and AMP pages as the same document under a leading path
    segment (``/print/guide/x.html``, ``/amp/guide/x.html``). Unlike ``substitute "/amp/"
    → "/"``, only the path's *first* segments are matched: ``/guide/amp/x.html`` is left
    alone. ``prefix`` is whole segments, ``/`` on both ends.
    """

    element: ClassVar[str] = "stripPrefix"
    prefix: str
    support: int | None = None
    fp_rate: float | None = None
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_stats(self.support, self.fp_rate)
        p = self.prefix
        if len(p) < 3 or not p.startswith("/") or not p.endswith("/") or "//" in p:
            raise ScriptError(
                f"stripPrefix prefix {p!r} is not whole path segments; expected e.g. /amp/"
            )
        if any(c in p for c in "?#;"):
            raise ScriptError(f"stripPrefix prefix {p!r} holds '?', '#' or ';'; expected a path")

    def apply(self, url: str) -> str:
        if self.prefix not in url:
            return url
        parts = _absolute(url)
        if parts is None or not parts.path.startswith(self.prefix):
            return url
        path = parts.path[len(self.prefix) - 1 :]
        return LenientParts(
            parts.scheme, parts.authority, path, parts.query, parts.fragment
        ).unsplit()

    def describe(self) -> str:
        return f"strip prefix {self.prefix}{{rest}} → /{{rest}}"


@dataclass(frozen=True, slots=True)
class QueryToPath:
    """A query form of a path: ``/index.php?page={x}`` → ``/{x}``, other parameters kept.

    PHP front controllers serve each page at ``/index.php?page=SECTION/SLUG.html`` as well as
    at its own path. ``to`` is a path template holding ``{x}`` once (``/{x}``, ``/doc/{x}``);
    the parameter's value replaces it as written (a value that would leave the path — one
    holding ``?``, ``#``, a ``..`` segment or a leading ``/`` — is left alone, and so is
    the URL).
    """

    element: ClassVar[str] = "queryToPath"
    path: str
    param: str
    to: str
    support: int | None = None
    fp_rate: float | None = None
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_stats(self.support, self.fp_rate)
        _check_path(self.path, "queryToPath")
        if not self.param.strip() or any(c in self.param for c in "&=#"):
            raise ScriptError(f"queryToPath param {self.param!r}: expected a parameter name")
        if not self.to.startswith("/") or self.to.count("{x}") != 1 or "?" in self.to:
            raise ScriptError(
                f"queryToPath to {self.to!r}: expected a path holding {{x}} once, e.g. /{{x}}"
            )

    def apply(self, url: str) -> str:
        if "?" not in url or self.param not in url:
            return url
        parts = _absolute(url)
        if parts is None or parts.path != self.path or parts.query is None:
            return url
        value: str | None = None
        kept: list[str] = []
        for piece in parts.query.split("&"):
            name, eq, v = piece.partition("=")
            if name == self.param and value is None and eq:
                value = v
            else:
                kept.append(piece)
        if not value or value.startswith("/") or "#" in value or "?" in value:
            return url
        if ".." in value.split("/"):
            return url
        path = self.to.replace("{x}", value)
        query = "&".join(kept) if any(kept) else None
        return LenientParts(parts.scheme, parts.authority, path, query, parts.fragment).unsplit()

    def describe(self) -> str:
        return f"query form {self.path}?{self.param}={{x}} → {self.to}"


#: The normalizer steps a site rule may run on its own site's URLs: the unsafe ones whose
#: rightness differs per server (seed 000 §4; the site policy ``evaluate --rules-out`` writes).
NORMALIZE_STEPS = frozenset(
    {
        "lowercase-path",
        "add-trailing-slash",
        "remove-trailing-slash",
        "remove-default-document",
        "sort-query",
        "collapse-slashes",
        "remove-query-params",
        "remove-empty-query",
    }
)


@dataclass(frozen=True, slots=True)
class NormalizeStep:
    """One normalizer step, on this site's URLs only (``lowercase-path`` on an IIS host).

    ``documents``: the default documents ``remove-default-document`` removes (comma
    separated; the step's own default when absent).
    """

    element: ClassVar[str] = "normalize"
    step: str
    documents: str | None = None
    support: int | None = None
    fp_rate: float | None = None
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_stats(self.support, self.fp_rate)
        if self.step not in NORMALIZE_STEPS:
            raise ScriptError(
                f"normalize step {self.step!r} is not one of {', '.join(sorted(NORMALIZE_STEPS))}"
            )
        if self.documents is not None and (not self.documents.strip() or "/" in self.documents):
            raise ScriptError(f"normalize documents {self.documents!r}: expected file names")

    def apply(self, url: str) -> str:
        try:
            return _step_normalizer(self.step, self.documents)(url)
        except ValueError:  # InvalidURL: a URL the step cannot read is left alone
            return url

    def describe(self) -> str:
        where = f" ({self.documents})" if self.documents else ""
        return f"normalize {self.step}{where}"


@functools.lru_cache(maxsize=64)
def _step_normalizer(step: str, documents: str | None) -> Callable[[str], str]:
    from dustless.url import Normalizer, get_policy

    policy = get_policy("rfc3986")
    if documents:
        policy = policy.with_options(
            default_documents=tuple(d.strip() for d in documents.split(",") if d.strip())
        )
    only = type(policy)(f"site rule {step}", frozenset({step}), policy.options, policy.pipeline)
    return Normalizer(only).normalize


LearnedRule = (
    Substitute
    | DropParam
    | FixParam
    | AddSlash
    | HostRedirect
    | NormalizeStep
    | StripPrefix
    | QueryToPath
)
