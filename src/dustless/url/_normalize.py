"""Applying a policy: :class:`Normalizer` (fast), :func:`normalize`, :func:`explain` (step by step).

Speed comes from three things, measured with ``bench/normalize_peers.py``:

* ``scheme://authority`` is normalized once per distinct spelling and cached: a crawl sees
  the same few thousand hosts millions of times, and IDNA and IPv6 parsing are slow.
* A path, query or fragment with no "%", nothing to encode and no dot segment skips the
  percent and dot-segment steps, which would leave it unchanged (most URLs are clean).
* One regular expression splits the URL; no object is built per URL on the fast path.

:func:`explain` runs the same step functions one at a time on the whole URL; the test suite
checks with hypothesis that both ways give the same string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dustless.errors import InvalidURL
from dustless.url._parse import BAD_ESCAPE_RE, PREFIX_RE, STRIP, as_text, parse
from dustless.url._percent import clean_path, clean_query, clean_tail
from dustless.url._policy import SAFEBROWSING, Policy, get_policy
from dustless.url._steps import (
    EMPTY_PATH_IS_SLASH,
    IMPLS,
    SKIPPABLE,
    OptFn,
    PathFn,
    StepOptions,
)

__all__ = ["Change", "Normalizer", "explain", "normalize"]

_CACHE_LIMIT = 200_000
# http(s)://host with a lower-case ASCII host name (RFC 3986 §3.2.2 reg-name letters, digits,
# "-" and "."), nothing else in the authority.
_PLAIN_PREFIX = re.compile(
    r"https?://[a-z0-9\-.]+"
).fullmatch  # distinct scheme://authority spellings kept per Normalizer


@dataclass(frozen=True, slots=True)
class Change:
    """One step that changed the URL, with the URL before and after it."""

    step: str
    before: str
    after: str


def _component(
    value: str, clean: bool, rest: list[OptFn], every: list[OptFn], url: str, options: StepOptions
) -> str | None:
    """A query or fragment through its steps; ``None`` when a step removed it."""
    if clean or clean_query(value) is not None:
        fns = rest  # nothing to encode or decode: the percent steps are skipped
    else:
        if "%" in value and BAD_ESCAPE_RE.search(value):
            parse(url)  # raises with the position in the URL as given
        fns = every
    for fn in fns:
        result = fn(value, options)
        if result is None:
            return None
        value = result
    return value


class Normalizer:
    """A policy compiled once, with its caches: what a crawler keeps for its whole run."""

    __slots__ = (
        "_authority",
        "_fixpoint",
        "_frag_all",
        "_frag_rest",
        "_options",
        "_path_all",
        "_path_rest",
        "_plain_is_final",
        "_prefixes",
        "_prescan",
        "_query_all",
        "_query_rest",
        "_safebrowsing",
        "_simple",
        "_slash",
        "_url",
        "policy",
    )

    def __init__(self, policy: str | Policy = "rfc3986") -> None:
        self.policy: Policy = get_policy(policy)
        self._options: StepOptions = self.policy.options
        self._safebrowsing = self.policy.pipeline == SAFEBROWSING
        # Without encode-unsafe no encoder meets a surrogate escape (and none raises): such a
        # policy reads bytes as %XX before anything else, the others when an encoder fails.
        self._prescan = self._safebrowsing or "encode-unsafe" not in self.policy.steps
        steps = [IMPLS[name] for name in self.policy.ordered_steps()]
        self._authority = [s.authority for s in steps if s.authority is not None]
        self._path_all: list[PathFn] = [s.path for s in steps if s.path is not None]
        self._path_rest: list[PathFn] = [
            s.path for s in steps if s.path is not None and s.info.name not in SKIPPABLE
        ]
        self._query_all: list[OptFn] = [s.query for s in steps if s.query is not None]
        self._query_rest: list[OptFn] = [
            s.query for s in steps if s.query is not None and s.info.name not in SKIPPABLE
        ]
        self._frag_all: list[OptFn] = [s.fragment for s in steps if s.fragment is not None]
        self._frag_rest: list[OptFn] = [
            s.fragment for s in steps if s.fragment is not None and s.info.name not in SKIPPABLE
        ]
        self._url = [s.url for s in steps if s.url is not None]
        # remove-trailing-slash can uncover a default document ("/a/index.html/" →
        # "/a/index.html" → "/a/" → "/a"): only that pair needs the path steps repeated
        # until nothing changes, so that normalizing twice equals normalizing once.
        self._fixpoint = {"remove-trailing-slash", "remove-default-document"} <= self.policy.steps
        self._prefixes: dict[str, str] = {}
        authority_steps = {s.info.name for s in steps if s.authority is not None}
        self._plain_is_final = not (authority_steps & {"https-to-http", "add-www", "remove-www"})
        # Policies whose steps do nothing to a clean tail but turn an empty path into "/"
        # (rfc3986 and anything with only safe steps) take a shortcut on clean URLs.
        rest = {s.info.name for s in steps if s.info.name not in SKIPPABLE}
        rest -= {s.info.name for s in steps if s.authority is not None}
        self._slash = "empty-path-to-slash" in rest
        self._simple = not (rest - {"empty-path-to-slash"})

    def __repr__(self) -> str:
        return f"Normalizer({self.policy.name!r})"

    def normalize(self, url: str | bytes) -> str:
        """The URL in the policy's form; raises :class:`InvalidURL`.

        ``url`` may be bytes: a byte that is not part of valid UTF-8 is kept as ``%XX``
        (see :func:`~dustless.url._parse.as_text`), as is a surrogate escape in a ``str``."""
        if url.__class__ is not str or (self._prescan and not url.isascii()):
            url = as_text(url)
        try:
            if self._safebrowsing:
                from dustless.url.safebrowsing import safebrowsing_canonicalize

                return safebrowsing_canonicalize(url)
            text = url
            if text[:1] <= " " or text[-1:] <= " ":
                text = text.strip(STRIP)
            m = PREFIX_RE.match(text)
            if m is None:
                parse(url)  # raises with the reason and position
                raise InvalidURL("invalid URL", url)  # pragma: no cover - parse raised already
            end = m.end()
            raw_prefix = text[:end]
            prefix = self._prefixes.get(raw_prefix)
            if prefix is None:
                prefix = self._prefix(raw_prefix, url)
                if len(self._prefixes) >= _CACHE_LIMIT:
                    self._prefixes.clear()
                self._prefixes[raw_prefix] = prefix
            tail = text[end:]
            # A clean tail (nothing to encode, decode or resolve) skips the percent and
            # dot-segment steps; for the RFC-only policies nothing else is left to do but turn
            # an empty path into "/".
            clean = clean_tail(tail) is not None and "/." not in tail
            if clean and self._simple:
                if self._slash and tail[:1] != "/" and _empty_path_is_slash(prefix):
                    return f"{prefix}/{tail}"
                return prefix + tail
            fragment: str | None = None
            query: str | None = None
            cut = tail.find("#")
            if cut >= 0:
                fragment = tail[cut + 1 :]
                tail = tail[:cut]
            cut = tail.find("?")
            if cut >= 0:
                query = tail[cut + 1 :]
                path = tail[:cut]
            else:
                path = tail
            options = self._options
            if clean or (clean_path(path) is not None and "/." not in path):
                for fn in self._path_rest:
                    path = fn(path, options)
            else:
                if "%" in path and BAD_ESCAPE_RE.search(path):
                    parse(url)
                for fn in self._path_all:
                    path = fn(path, options)
            if query is not None:
                query = _component(query, clean, self._query_rest, self._query_all, url, options)
            if fragment is not None:
                fragment = _component(
                    fragment, clean, self._frag_rest, self._frag_all, url, options
                )
            if self._fixpoint:
                path = self._run_path(path, self._path_rest)
            if not path and self._slash and _empty_path_is_slash(prefix):
                # empty-path-to-slash: no other path step turns "" or "/" into anything else, so
                # it may run after them (explain runs it in its place in the order).
                path = "/"
            out = prefix + path
            if query is not None:
                out = f"{out}?{query}"
            if fragment is not None:
                out = f"{out}#{fragment}"
            for ufn in self._url:
                out = ufn(out, options)
            if out[-1] <= " ":
                out = _strip_end(out)
            return out
        except UnicodeEncodeError:
            # A lone surrogate reached an encoder (encode-unsafe, IDNA): read it as the byte
            # it stands for, or refuse it (as_text). Scanning only on failure keeps the
            # surrogate check off the way of every URL that has none.
            fixed = as_text(url)
            if fixed == url:
                raise InvalidURL("cannot encode the URL", url) from None
            return self.normalize(fixed)

    __call__ = normalize

    def _run_path(self, path: str, fns: list[PathFn]) -> str:
        options = self._options
        for _ in range(8 if self._fixpoint else 1):
            before = path
            for fn in fns:
                path = fn(path, options)
            if path == before:
                break
        return path

    def _prefix(self, raw_prefix: str, url: str) -> str:
        if self._plain_is_final and _PLAIN_PREFIX(raw_prefix) is not None:
            # Lower-case scheme and host name, no port, no userinfo, no escape: already
            # valid, and the safe authority steps would leave it as it is.
            return raw_prefix
        try:
            parts = parse(raw_prefix, strip=False)  # scheme://authority; the rest is lazy
        except InvalidURL:
            parse(url)  # the same error, positioned in the URL as given
            raise
        for fn in self._authority:
            fn(parts, self._options, url)
        return parts.prefix()

    def explain(self, url: str | bytes) -> list[Change]:
        """Each step that changed the URL, in the order the steps ran. The first ``before`` is
        the URL as read (bytes and surrogate escapes written ``%XX``)."""
        url = as_text(url)
        if self._safebrowsing:
            from dustless.url.safebrowsing import safebrowsing_canonicalize

            after = safebrowsing_canonicalize(url)
            return [Change(SAFEBROWSING, url, after)] if after != url else []
        parts = parse(url)
        changes: list[Change] = []
        current = parts.unsplit()
        options = self._options
        names = self.policy.ordered_steps()
        rounds = 8 if self._fixpoint else 1
        for round_ in range(rounds):
            start = current
            for name in names:
                impl = IMPLS[name]
                if impl.url is not None:
                    continue
                if round_ and impl.path is None and impl.scheme_path is None:
                    continue  # later rounds only repeat the path steps (see _fixpoint)
                if impl.authority is not None:
                    impl.authority(parts, options, url)
                if impl.path is not None:
                    parts.path = impl.path(parts.path, options)
                if impl.scheme_path is not None:
                    parts.path = impl.scheme_path(parts.scheme, parts.path, options)
                if impl.query is not None and parts.query is not None:
                    parts.query = impl.query(parts.query, options)
                if impl.fragment is not None and parts.fragment is not None:
                    parts.fragment = impl.fragment(parts.fragment, options)
                after = parts.unsplit()
                if after != current:
                    changes.append(Change(name, current, after))
                    current = after
            if current == start:
                break
        for name in names:
            impl = IMPLS[name]
            if impl.url is not None:
                after = impl.url(current, options)
                if after != current:
                    changes.append(Change(name, current, after))
                    current = after
        if changes and current[-1] <= " ":
            last = changes.pop()
            changes.append(Change(last.step, last.before, _strip_end(current)))
        return changes


def _empty_path_is_slash(prefix: str) -> bool:
    """Whether the scheme of ``scheme://authority`` defines an empty path as "/"."""
    return prefix[: prefix.find(":")].lower() in EMPTY_PATH_IS_SLASH


def _strip_end(url: str) -> str:
    # Only without encode-unsafe can a raw space survive; when a later step removes what
    # followed it ("/a #f" without its fragment), the URL would end in whitespace, which
    # parsing drops (RFC 3986 Appendix C): drop it now, so that normalizing stays idempotent.
    return url.rstrip(STRIP)


_NORMALIZERS: dict[str | Policy, Normalizer] = {}


def _normalizer(policy: str | Policy) -> Normalizer:
    try:
        n = _NORMALIZERS.get(policy)
    except TypeError:  # a Policy holding unhashable site rules: not cached
        return Normalizer(policy)
    if n is None:
        n = Normalizer(policy)
        if len(_NORMALIZERS) >= 64:
            _NORMALIZERS.clear()
        _NORMALIZERS[policy] = n
    return n


def normalize(url: str | bytes, policy: str | Policy = "rfc3986") -> str:
    """``url`` in the form of ``policy`` (a name, an expression or a :class:`Policy`)."""
    return _normalizer(policy).normalize(url)


def explain(url: str | bytes, policy: str | Policy = "rfc3986") -> list[Change]:
    """The steps of ``policy`` that changed ``url``, each with the URL before and after —
    for users who want to know *why* two URLs were merged."""
    return _normalizer(policy).explain(url)
