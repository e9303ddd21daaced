"""Compiled URL patterns: seed 002 §3.3, the ``<url>`` element of Fig. 6.

A pattern is an ``originalAddr`` (a URL or a javascript call with ``{n}`` placeholders),
a ``targetAddr`` built from the same placeholders, a page type (§3.2: list or detail) and
a category (the ``class`` attribute). Regular expressions are built once, when the pattern
is constructed; matching never raises, whatever the input.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace
from urllib.parse import unquote

from dustless.errors import ScriptError
from dustless.url import replace_host, split_authority, split_lenient

from ._template import Template, parse_template, placeholders_in
from ._urlparts import encode_unsafe, query_pieces

__all__ = ["AddrType", "Match", "PageType", "UrlPattern", "keep_port"]


class PageType(enum.Enum):
    """Seed 002 §3.2: general pages, list pages of one category, detail (content) pages."""

    LIST = "list"
    DETAIL = "detail"
    OTHER = "other"


class AddrType(enum.Enum):
    """``originalAddr type=…``: a URL, or a javascript call turned into a URL (Fig. 8)."""

    URL = "url"
    JAVASCRIPT = "javascript"


@dataclass(frozen=True, slots=True)
class Match:
    """What a pattern says about one link.

    ``category`` is the pattern's ``class`` (e.g. 인물); ``category_id`` identifies the
    category instance the URL belongs to (§3.4.2: "the list page URL's pattern holds the ID
    of the category"): the ``categoryKey`` template, or ``{0}`` of a list pattern, else "".
    ``values`` are the placeholder values as ``(n, value)`` pairs, sorted by ``n``.
    """

    page_type: PageType
    category: str
    category_id: str
    values: tuple[tuple[int, str], ...]
    target: str

    def value(self, n: int) -> str:
        """The value of placeholder ``{n}``; ``KeyError`` if the pattern has none."""
        for k, v in self.values:
            if k == n:
                return v
        raise KeyError(n)


@dataclass(frozen=True, slots=True)
class _Param:
    name: str
    value: re.Pattern[str] | None  # None: a bare key (``?print``) that must be present


@dataclass(frozen=True, slots=True)
class _UrlMatcher:
    scheme: str  # lowercased: RFC 3986 §6.2.2.1, scheme and host are case-insensitive
    authority: str
    path: re.Pattern[str]
    params: tuple[_Param, ...]

    def host_matches(self, authority: str) -> bool:
        # A pattern whose host has no port matches the host on any port (like an identity
        # without a port): a site served on :8080 — or the test web's random port — keeps its
        # script. A pattern with a port matches that port only.
        if authority.lower() == self.authority:
            return True
        host, port = split_authority(self.authority)
        if port is not None or "@" in self.authority:
            return False
        return split_authority(authority)[0] == host

    def values(self, text: str) -> dict[int, str] | None:
        parts = split_lenient(text)
        if not parts.is_absolute or parts.scheme is None or parts.authority is None:
            return None
        if parts.scheme.lower() != self.scheme or not self.host_matches(parts.authority):
            return None
        m = self.path.fullmatch(parts.path or "/")
        if m is None:
            return None
        values = {int(k[1:]): v for k, v in m.groupdict().items()}
        # Fig. 3: parameters the pattern does not name are ignored here and dropped by the
        # rewrite, so ``…&ani=0&tc=2`` matches too; the order of parameters does not matter.
        pieces = query_pieces(parts.query or "")
        for param in self.params:
            present = [v for n, v in pieces if n == param.name]
            if not present:
                return None
            if param.value is None:
                continue
            found = present[0]  # the first occurrence, as most servers read it
            if found is None:
                return None
            pm = param.value.fullmatch(found)
            if pm is None:
                return None
            for k, v in pm.groupdict().items():
                if values.setdefault(int(k[1:]), v) != v:
                    return None  # the same placeholder twice with two values
        return values


@dataclass(frozen=True, slots=True)
class _JsMatcher:
    call: re.Pattern[str]

    def all_values(self, text: str) -> list[dict[int, str]]:
        stripped = text.lstrip()
        if stripped[:11].lower() == "javascript:":
            # A javascript: URL runs its percent-decoded text (WHATWG URL, "javascript: URLs").
            text = unquote(stripped[11:])
        elif split_lenient(text).is_absolute:
            return []  # an http URL is never a script, even if it mentions the call
        out = []
        for m in self.call.finditer(text):
            values = {int(k[1:]): _unquote_js(v) for k, v in m.groupdict().items()}
            if all(values.values()):
                out.append(values)
        return out


def keep_port(m: Match, url: str) -> Match:
    """``m`` with the port of ``url`` put into a target on the same host that names none.

    A pattern without a port matches its host on any port; its ``targetAddr`` then means the
    same server, so ``http://www.web.com:8080/list.aspx?…`` rewrites to
    ``http://www.web.com:8080/…``, not to port 80. ``url`` is the matched URL, or for a
    javascript link the page it was found on (Fig. 8: ``show_detail(15)`` on that page).
    """
    source = split_lenient(url)
    if not source.is_absolute or source.port is None:
        return m
    target = split_lenient(m.target)
    if target.authority is None or target.port is not None or target.host != source.host:
        return m
    authority = replace_host(target.authority, target.host) + ":" + source.port
    new = type(target)(target.scheme, authority, target.path, target.query, target.fragment)
    return replace(m, target=new.unsplit())


def _unquote_js(value: str) -> str:
    # ``show_detail({0})`` also matches ``show_detail('15')``: the quotes belong to JS.
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1].strip()
    return value


def _placeholder_regex(t: Template, i: int, exclude: str, seen: set[int], limit: str = "+") -> str:
    n = t.parts[i]
    assert isinstance(n, int)
    if n in seen:
        return f"(?P=p{n})"
    seen.add(n)
    # "A placeholder matches a value without the delimiter that follows it": the first
    # character of the next literal ends the value (``cate_id={0}&page={1}``).
    nxt = t.parts[i + 1] if i + 1 < len(t.parts) else ""
    assert isinstance(nxt, str)
    chars = set(exclude)
    first = nxt.lstrip()[:1]
    if first in ("'", '"'):
        chars |= {"'", '"'}
    elif first:
        chars.add(first)
    cls = "[^" + "".join(re.escape(c) for c in sorted(chars)) + "]" if chars else r"[\s\S]"
    # Possessive: a shorter value could never be followed by the delimiter, and giving
    # characters back would make a hostile page cost quadratic time.
    return f"(?P<p{n}>{cls}{limit}+)"


def _url_component_regex(t: Template) -> re.Pattern[str]:
    seen: set[int] = set()
    out = [
        re.escape(p) if isinstance(p, str) else _placeholder_regex(t, i, "", seen)
        for i, p in enumerate(t.parts)
    ]
    return re.compile("".join(out))


_JS_PUNCT = "(),;"
_WS = r"\s*+"  # possessive, like the values: no backtracking on long runs of spaces
# A javascript value longer than this is no link argument; the cap bounds the work per call
# on a page full of unclosed calls.
_JS_VALUE = "{1,2048}"


def _js_literal(text: str) -> str:
    # Javascript allows spaces around punctuation and either quote: tolerate both, so the
    # script's ``pBlog('{0}')`` matches ``pBlog( "541293/C/860" );`` (Fig. 8).
    out: list[str] = []
    for ch in text:
        if ch.isspace() or ch in _JS_PUNCT:
            if not out or out[-1] != _WS:
                out.append(_WS)
            if ch in _JS_PUNCT:
                out.extend((re.escape(ch), _WS))
        elif ch in "'\"":
            out.append("['\"]")
        else:
            out.append(re.escape(ch))
    return "".join(out)


def _js_regex(t: Template) -> re.Pattern[str]:
    seen: set[int] = set()
    out: list[str] = []
    first = t.parts[0] if t.parts else ""
    if isinstance(first, str) and first[:1] and (first[0].isalnum() or first[0] in "_$"):
        out.append(r"(?<![\w$])")  # ``show_detail(`` must not match ``reshow_detail(``
    for i, p in enumerate(t.parts):
        out.append(
            _js_literal(p)
            if isinstance(p, str)
            else _placeholder_regex(t, i, "\r\n", seen, _JS_VALUE)
        )
    return re.compile("".join(out))


def _check_absolute(text: str, where: str) -> None:
    probe = parse_template(text, where).render(_Zeros())
    parts = split_lenient(probe)
    if not parts.is_absolute or (parts.scheme or "").lower() not in ("http", "https"):
        raise ScriptError(f"{where} {text!r} is not an absolute URL; expected http://host/…")
    if not parts.authority:
        raise ScriptError(f"{where} {text!r} has no host; expected http://host/…")


class _Zeros(dict[int, str]):
    def __missing__(self, key: int) -> str:
        return "0"


def _compile_url(text: str, where: str) -> tuple[_UrlMatcher, Template]:
    _check_absolute(text, where)
    # Literal text is compared in URI form: Korean written into a script (Fig. 7) matches
    # the percent-encoded URL the normalizer hands us.
    text = "".join(
        encode_unsafe(p) if isinstance(p, str) else f"{{{p}}}"
        for p in parse_template(text, where).parts
    )
    parts = split_lenient(text)
    assert parts.scheme is not None
    assert parts.authority is not None
    if placeholders_in(parts.scheme + parts.authority):
        raise ScriptError(
            f"placeholder in the host of {where} {text!r}; expected placeholders in the path "
            "or query only"
        )
    if parts.fragment is not None:
        raise ScriptError(f"{where} {text!r} has a fragment ('#'); expected none")
    params = []
    for name, value in query_pieces(parts.query or ""):
        if placeholders_in(name):
            raise ScriptError(
                f"placeholder in the parameter name {name!r} of {where}; expected name={{n}}"
            )
        if value is None:
            params.append(_Param(name, None))
        else:
            params.append(_Param(name, _url_component_regex(parse_template(value, where))))
    path_t = parse_template(parts.path or "/", where)
    matcher = _UrlMatcher(
        parts.scheme.lower(),
        parts.authority.lower(),
        _url_component_regex(path_t),
        tuple(params),
    )
    return matcher, parse_template(text, where)


def _compile_js(text: str) -> _JsMatcher:
    where = "originalAddr type='javascript'"
    call = text[11:].strip() if text[:11].lower() == "javascript:" else text
    if not call or split_lenient(call).is_absolute:
        raise ScriptError(
            f"{where} {text!r} is not a javascript call; "
            "expected e.g. javascript:show_detail({0})"
        )
    return _JsMatcher(_js_regex(parse_template(call, where)))


@dataclass(frozen=True, slots=True)
class UrlPattern:
    """One ``<url>`` element of a pattern script (seed 002 Fig. 6).

    ``original``: the ``originalAddr`` text (surrounding whitespace removed); for
    ``AddrType.JAVASCRIPT`` the leading ``javascript:`` is optional. ``target``: the
    ``targetAddr`` text; each of its placeholders must occur in ``original``.
    ``category_key`` (an extension, a template such as ``{2}``) says which values name the
    category instance; by default ``{0}`` of a list pattern (Fig. 6: ``cate_id={0}``).
    Raises ``ScriptError`` (without a line: the loader adds it) when the pattern is unusable.
    """

    page_type: PageType
    original: str
    target: str
    original_type: AddrType = AddrType.URL
    category: str = ""
    category_key: str | None = None
    line: int | None = field(default=None, compare=False)
    _url: _UrlMatcher | None = field(init=False, repr=False, compare=False, default=None)
    _js: _JsMatcher | None = field(init=False, repr=False, compare=False, default=None)
    _target: Template = field(init=False, repr=False, compare=False, default=Template(()))
    _target_url: _UrlMatcher | None = field(init=False, repr=False, compare=False, default=None)
    _key: Template | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if self.page_type is PageType.OTHER:
            raise ScriptError("a <url> pattern has type 'list' or 'detail'; 'other' is no pattern")
        original, target = self.original.strip(), self.target.strip()
        object.__setattr__(self, "original", original)
        object.__setattr__(self, "target", target)
        if self.original_type is AddrType.URL:
            matcher, original_t = _compile_url(original, "originalAddr type='url'")
            object.__setattr__(self, "_url", matcher)
            have = original_t.placeholders
        else:
            object.__setattr__(self, "_js", _compile_js(original))
            have = placeholders_in(original)
        target_t = parse_template(target, "targetAddr")
        _check_absolute(target, "targetAddr")
        if missing := target_t.placeholders - have:
            raise ScriptError(_missing("targetAddr", missing, have))
        object.__setattr__(self, "_target", target_t)
        # The target is itself a URL of this page type: the crawler fetches it, classifies
        # it, and may find it linked directly; so the target form matches too.
        object.__setattr__(self, "_target_url", _compile_url(target, "targetAddr")[0])
        if self.category_key is not None:
            if not self.category_key.strip():
                raise ScriptError("categoryKey is empty; expected placeholders such as {0}")
            key_t = parse_template(self.category_key, "categoryKey")
            if missing := key_t.placeholders - have:
                raise ScriptError(_missing("categoryKey", missing, have))
            object.__setattr__(self, "_key", key_t)

    def match(self, text: str) -> Match | None:
        """The match for a URL (or, for javascript patterns, the first call in ``text``).

        A URL in the ``targetAddr`` form matches as well (and rewrites to itself).
        """
        values: dict[int, str] | None = None
        from_url = self._url is not None
        if self._url is not None:
            values = self._url.values(text)
        elif self._js is not None:
            found = self._js.all_values(text)
            values = found[0] if found else None
        if values is None and self._target_url is not None:
            values = self._target_url.values(text)
            from_url = True
        if values is None:
            return None
        m = self._result(values)
        # A URL matched on some port rewrites to that port (docs: "Ports").
        return keep_port(m, text) if from_url else m

    def search(self, text: str) -> tuple[Match, ...]:
        """Every call of a javascript pattern in ``text`` (an onclick or a script, Fig. 8)."""
        if self._js is None:
            m = self.match(text)
            return () if m is None else (m,)
        return tuple(self._result(v) for v in self._js.all_values(text))

    def rewrite(self, text: str) -> str | None:
        """``targetAddr`` with the values of ``text`` put in, or ``None`` if no match."""
        m = self.match(text)
        return None if m is None else m.target

    def _result(self, values: dict[int, str]) -> Match:
        # Values captured from javascript are raw text; the URL built from them must be a URI.
        target = encode_unsafe(self._target.render(values))
        if self._key is not None:
            # A URL in target form may lack some of the key's values: then no id.
            category_id = (
                self._key.render(values) if self._key.placeholders <= values.keys() else ""
            )
        elif self.page_type is PageType.LIST and 0 in values:
            category_id = values[0]
        else:
            category_id = ""
        return Match(
            self.page_type, self.category, category_id, tuple(sorted(values.items())), target
        )


def _missing(where: str, missing: frozenset[int], have: frozenset[int]) -> str:
    names = ", ".join(f"{{{n}}}" for n in sorted(missing))
    known = ", ".join(f"{{{n}}}" for n in sorted(have)) or "none"
    return (
        f"{where} uses {names}, not in originalAddr; "
        f"expected only placeholders of originalAddr ({known})"
    )
