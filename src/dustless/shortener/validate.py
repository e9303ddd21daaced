"""What a long URL, an alias and an expiry must satisfy before they are stored (pure).

Every rejection is a :class:`Rejected` with the HTTP status and a message naming the problem,
so the API answers ``400 {"error": ..., "problem": ...}`` and the CLI prints one line.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dustless.errors import InvalidURL, UsageError
from dustless.url import (
    Normalizer,
    safebrowsing_canonicalize,
    safebrowsing_expressions,
    split_url,
)

__all__ = [
    "MAX_URL_LENGTH",
    "RESERVED_ALIASES",
    "Blocklist",
    "Rejected",
    "UrlChecker",
    "check_alias",
    "parse_expiry",
]

MAX_URL_LENGTH = 2048
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# Paths the service itself answers under; an alias may not shadow them.
RESERVED_ALIASES = frozenset(
    {
        "api",
        "static",
        "openapi.json",
        "docs",
        "favicon.ico",
        "favicon.svg",
        "robots.txt",
        "healthz",
        "index.html",
    }
)
_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{2,63}")


class Rejected(UsageError):
    """A request the service refuses: ``status`` is the HTTP status, ``problem`` a short tag."""

    def __init__(self, message: str, problem: str, status: int = 400) -> None:
        super().__init__(message)
        self.problem = problem
        self.status = status


@dataclass(frozen=True, slots=True)
class CheckedURL:
    stored: str  # rfc3986 form: equivalent to the input by RFC 3986 §6.2.2, ASCII only
    key: str  # the configured policy's form: what "the same long URL" compares


class Blocklist:
    """Google Safe Browsing style host-suffix / path-prefix expressions.

    A URL is blocked when one of its lookup expressions (Safe Browsing's canonicalization,
    then up to 5 host suffixes × 6 path prefixes) is in the list, as the Safe Browsing and
    Web Risk lookup APIs do. File format: one expression per line (``evil.example/``,
    ``example.com/phish/``) or a full URL (canonicalized the same way); ``#`` starts a comment.
    """

    __slots__ = ("_expressions",)

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self._expressions = frozenset(self._expression(e) for e in entries)

    @staticmethod
    def _expression(entry: str) -> str:
        entry = entry.strip()
        if "://" in entry:
            canonical = safebrowsing_canonicalize(entry)
            return canonical.split("://", 1)[1]
        if "/" not in entry:
            entry += "/"  # a bare host means the whole host, as "host/" does
        # Canonicalize the expression as if it were a URL, so "EVIL.example/a/../b" matches.
        canonical = safebrowsing_canonicalize("http://" + entry)
        return canonical.split("://", 1)[1]

    @classmethod
    def from_file(cls, path: str | Path) -> Blocklist:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read blocklist {path}: {exc.strerror or exc}") from exc
        entries = []
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if line:
                entries.append(line)
        try:
            return cls(entries)
        except InvalidURL as exc:
            raise UsageError(f"blocklist {path}: bad entry: {exc}") from exc

    def __len__(self) -> int:
        return len(self._expressions)

    def match(self, url: str) -> str | None:
        """The first blocklist expression ``url`` falls under, or None."""
        if not self._expressions:
            return None
        try:
            expressions = safebrowsing_expressions(url)
        except InvalidURL:
            return None
        for expression in expressions:
            if expression in self._expressions:
                return expression
        return None


class UrlChecker:
    """Validates and normalizes long URLs for one service configuration."""

    def __init__(
        self,
        policy: str = "rfc3986",
        own_hosts: Iterable[str] = (),
        blocklist: Blocklist | None = None,
    ) -> None:
        self._stored = Normalizer("rfc3986")
        self._key = self._stored if policy == "rfc3986" else Normalizer(policy)
        self._own_hosts = frozenset(h.lower().rstrip(".") for h in own_hosts if h)
        self._blocklist = blocklist or Blocklist()

    def check(self, value: object) -> CheckedURL:
        if not isinstance(value, str):
            raise Rejected("longUrl must be a string", "type")
        url = value.strip()
        if not url:
            raise Rejected("longUrl is empty", "empty")
        if len(url) > MAX_URL_LENGTH:
            raise Rejected(
                f"longUrl has {len(url)} characters; at most {MAX_URL_LENGTH} are allowed",
                "too-long",
            )
        scheme = _SCHEME.match(url)
        if scheme is None:
            raise Rejected("longUrl is not an absolute URL (no scheme)", "malformed")
        name = scheme.group(1).lower()
        if name not in ("http", "https"):
            # javascript: and data: would run in the browser of whoever follows the link.
            raise Rejected(f"scheme '{name}' is not allowed; only http and https", "scheme")
        try:
            parts = split_url(url)
            stored = self._stored.normalize(url)
            key = stored if self._key is self._stored else self._key.normalize(url)
        except InvalidURL as exc:
            raise Rejected(f"malformed URL: {exc}", "malformed") from exc
        if parts.userinfo is not None:
            raise Rejected("credentials (user:password@) in the URL are not allowed", "credentials")
        if not parts.host:
            raise Rejected("malformed URL: missing host", "malformed")
        if not stored.isascii():  # it becomes a Location header, which must be ASCII
            raise Rejected("malformed URL: cannot be written in ASCII", "malformed")
        if len(stored) > MAX_URL_LENGTH:
            raise Rejected(
                f"longUrl has {len(stored)} characters once percent-encoded; "
                f"at most {MAX_URL_LENGTH} are allowed",
                "too-long",
            )
        host = split_url(stored).host.lower().rstrip(".")
        if host in self._own_hosts:
            raise Rejected("longUrl points to this shortener (a redirect loop)", "own-domain")
        blocked = self._blocklist.match(stored)
        if blocked is not None:
            raise Rejected(f"longUrl is on the blocklist ({blocked})", "blocked", status=403)
        return CheckedURL(stored=stored, key=key)


def check_alias(value: object) -> str:
    """A custom alias: 3–64 of ``A-Z a-z 0-9 _ -``, starting with a letter or digit."""
    if not isinstance(value, str):
        raise Rejected("alias must be a string", "alias")
    if not _ALIAS.fullmatch(value):
        raise Rejected(
            "alias must be 3 to 64 characters of A-Z, a-z, 0-9, '_' and '-', "
            "starting with a letter or digit",
            "alias",
        )
    if value.lower() in RESERVED_ALIASES:
        raise Rejected(f"alias '{value}' is reserved", "alias-reserved")
    return value


def parse_expiry(value: object, now: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise Rejected("expiresAt must be an RFC 3339 date-time or Unix seconds", "expires")
    if isinstance(value, int | float):
        ts = float(value)
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise Rejected(f"expiresAt is not a date-time: {value[:40]!r}", "expires") from None
        if parsed.tzinfo is None:
            raise Rejected("expiresAt needs a time zone (e.g. ...Z)", "expires")
        ts = parsed.timestamp()
    else:
        raise Rejected("expiresAt must be an RFC 3339 date-time or Unix seconds", "expires")
    if ts <= now:
        raise Rejected("expiresAt is in the past", "expires")
    return ts
