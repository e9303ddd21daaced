"""What a long URL, an alias and an expiry must satisfy before they are stored (pure).

Every rejection is a :class:`Rejected` with the HTTP status and a message naming the problem,
so the API answers ``400 {"error": ..., "problem": ...}`` and the CLI prints one line.
"""

from __future__ import annotations

import datetime as dt
import math
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

from ._codes import is_code_shape
from ._targets import TargetGuard, web_host

__all__ = [
    "MAX_URL_LENGTH",
    "MAX_VISITS",
    "RESERVED_ALIASES",
    "Blocklist",
    "Rejected",
    "UrlChecker",
    "check_alias",
    "parse_expiry",
    "parse_max_visits",
    "parse_order_by",
    "parse_since",
    "parse_tags",
    "parse_title",
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
        # API paths under /api/v1/ that the redirect path must leave alone
        "links",
        "info",
        "keys",
        "tags",
        # names a visitor could take for the service's own pages
        "qr",
        "admin",
        "login",
    }
)
# A custom slug (Shlink's customSlug): base62 and '-', '_', starting with a letter or digit.
_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{2,63}")
# An imported code may be shorter: other shorteners make codes of one or two characters.
_IMPORTED_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
# Control characters (C0 and DEL): CR and LF in a Location header would split the response
# (RFC 9110 §5.5 forbids them in field values), the others never belong in a link.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# The last instant datetime can write (9999-12-31T23:59:59Z): a later validUntil could be
# stored but neither shown nor exported.
MAX_TIMESTAMP = 253_402_300_799.0
_MIN_TIMESTAMP = -62_135_596_800.0  # 0001-01-01T00:00:00Z
MAX_VISITS = 10**12


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
    host: str  # the host as a browser reads it (WHATWG): ``2130706433`` is ``127.0.0.1``


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
            data = Path(path).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read blocklist {path}: {exc.strerror or exc}") from exc
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            # Refused, not decoded leniently: a replaced byte would turn an entry into one
            # that matches nothing, and the list would let through what it was meant to stop.
            number = data.count(b"\n", 0, exc.start) + 1
            raise UsageError(f"{path}:{number}: not UTF-8 text ({exc.reason})") from None
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
        *,
        allow_private: bool = False,
    ) -> None:
        self._stored = Normalizer("rfc3986")
        self._key = self._stored if policy == "rfc3986" else Normalizer(policy)
        self._guard = TargetGuard(own_hosts, allow_private=allow_private)
        self._blocklist = blocklist or Blocklist()

    @property
    def guard(self) -> TargetGuard:
        return self._guard

    def check(self, value: object) -> CheckedURL:
        if not isinstance(value, str):
            raise Rejected("longUrl must be a string", "type")
        url = value.strip()
        if not url:
            raise Rejected("longUrl is empty", "empty")
        try:
            url.encode("utf-8")
        except UnicodeEncodeError as exc:
            # JSON's \\ud800 escapes make lone surrogates: text no URL can be written in.
            raise Rejected(
                f"longUrl has a lone surrogate (U+{ord(url[exc.start]):04X}) at {exc.start}",
                "malformed",
            ) from None
        control = _CONTROL.search(url)
        if control is not None:
            raise Rejected(
                f"longUrl has a control character (U+{ord(control.group()):04X}) at "
                f"{control.start()}",
                "control",
            )
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
        except (InvalidURL, UnicodeError) as exc:
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
        host = web_host(stored)
        if host is None:
            raise Rejected("malformed URL: a browser could not follow it", "malformed")
        refusal = self._guard.refusal(host)
        if refusal is not None:
            raise Rejected(f"longUrl {refusal}", "own-domain")
        blocked = self._blocklist.match(stored)
        if blocked is not None:
            raise Rejected(f"longUrl is on the blocklist ({blocked})", "blocked", status=403)
        return CheckedURL(stored=stored, key=key, host=host)


def check_alias(value: object, *, imported: bool = False) -> str:
    """A custom slug: 3–64 of ``A-Z a-z 0-9 _ -``, starting with a letter or digit, not a
    reserved word, and not shaped like a generated code (7 base62 characters) — so a slug
    can never take the code a future link's id will have. ``imported`` slugs (from an
    export) keep whatever shape they had: new codes skip them."""
    if not isinstance(value, str):
        raise Rejected("customSlug must be a string", "alias")
    if imported and _IMPORTED_CODE.fullmatch(value) and value.lower() not in RESERVED_ALIASES:
        return value  # another shortener's code (YOURLS: "1", "ab"): kept as it was
    if not _ALIAS.fullmatch(value):
        raise Rejected(
            "customSlug must be 3 to 64 characters of A-Z, a-z, 0-9, '_' and '-', "
            "starting with a letter or digit",
            "alias",
        )
    if value.lower() in RESERVED_ALIASES:
        raise Rejected(f"customSlug '{value}' is reserved", "alias-reserved")
    if not imported and is_code_shape(value):
        raise Rejected(
            f"customSlug '{value}' has the shape of a generated code (7 letters and digits); "
            "add a '-' or '_', or use another length",
            "alias-shape",
        )
    return value


def parse_expiry(value: object, now: float, name: str = "validUntil") -> float | None:
    """A link's end: an RFC 3339 date-time with a time zone, or Unix seconds; finite, in the
    future and no later than the year 9999. Anything else is refused before it is stored."""
    ts = _parse_time(value, name, "expires")
    if ts is not None and ts <= now:
        raise Rejected(f"{name} is in the past", "expires")
    return ts


def parse_since(value: object, until: float | None, name: str = "validSince") -> float | None:
    """A link's start (Shlink's ``validSince``): a time as ``validUntil`` is one, but it may
    be in the past (then the link works at once); it must come before the link's end."""
    ts = _parse_time(value, name, "valid-since")
    if ts is not None and until is not None and ts >= until:
        raise Rejected(f"{name} must be before validUntil", "valid-since")
    return ts


def _parse_time(value: object, name: str, problem: str) -> float | None:
    """RFC 3339 with a time zone or Unix seconds, finite, from the year 1 to 9999."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise Rejected(f"{name} must be an RFC 3339 date-time or Unix seconds", problem)
    if isinstance(value, int | float):
        try:
            ts = float(value)
        except OverflowError:  # an integer too large for a float (JSON allows 1e999 digits)
            ts = math.inf
        if not math.isfinite(ts):  # JSON's NaN and Infinity, and 1e999
            raise Rejected(f"{name} must be a finite number of seconds", problem)
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise Rejected(f"{name} is not a date-time: {value[:40]!r}", problem) from None
        if parsed.tzinfo is None:
            raise Rejected(f"{name} needs a time zone (e.g. ...Z)", problem)
        ts = parsed.timestamp()
    else:
        raise Rejected(f"{name} must be an RFC 3339 date-time or Unix seconds", problem)
    if not _MIN_TIMESTAMP <= ts <= MAX_TIMESTAMP:
        raise Rejected(f"{name} is not within the years 1 to 9999", problem)
    return ts


MAX_TAGS = 32
_MAX_TAG = 64


def parse_tags(value: object, name: str = "tags") -> tuple[str, ...]:
    """A link's tags (Shlink's ``tags``): a list of at most 32 strings of 1–64 characters
    without control characters, trimmed; duplicates dropped, sorted."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise Rejected(f"{name} must be a list of strings", "tags")
    tags = {t.strip() for t in value}
    if len(tags) > MAX_TAGS:
        raise Rejected(f"{name}: at most {MAX_TAGS} tags", "tags")
    for tag in tags:
        if not 1 <= len(tag) <= _MAX_TAG or _CONTROL.search(tag):
            raise Rejected(
                f"{name}: a tag is 1-{_MAX_TAG} characters, no control characters: {tag[:20]!r}",
                "tags",
            )
    return tuple(sorted(tags))


_MAX_TITLE = 512


def parse_title(value: object, name: str = "title") -> str | None:
    """A link's title (Shlink's ``title``): up to 512 characters without control characters,
    trimmed; empty or null for none."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Rejected(f"{name} must be a string", "title")
    title = value.strip()
    if len(title) > _MAX_TITLE or _CONTROL.search(title):
        raise Rejected(f"{name}: at most {_MAX_TITLE} characters, no control characters", "title")
    return title or None


# Shlink's orderBy fields for the short URL list; the store maps them to columns.
ORDER_FIELDS = ("dateCreated", "shortCode", "longUrl", "title", "visits")


def parse_order_by(value: str | None) -> tuple[str, bool] | None:
    """Shlink's ``orderBy=FIELD-ASC|DESC`` as ``(field, descending)``; None for no order."""
    if not value:
        return None
    field, _, direction = value.partition("-")
    if field not in ORDER_FIELDS or direction.upper() not in ("ASC", "DESC"):
        raise Rejected(
            f"orderBy must be FIELD-ASC or FIELD-DESC, FIELD one of {', '.join(ORDER_FIELDS)}"
            f" (not {value[:40]!r})",
            "order-by",
        )
    return field, direction.upper() == "DESC"


def parse_max_visits(value: object) -> int | None:
    """A visit limit: a whole number from 1 to 10^12, or null for none."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Rejected("maxVisits must be a whole number", "max-visits")
    if not 1 <= value <= MAX_VISITS:
        raise Rejected(f"maxVisits must be between 1 and {MAX_VISITS}", "max-visits")
    return value
