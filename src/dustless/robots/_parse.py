"""robots.txt bytes → groups of rules (RFC 9309 §2.1–§2.2, Google's reference parser).

The line grammar follows google/robotstxt ``robots.cc`` byte for byte where the RFC leaves
room, because Google's suite is our conformance test and Google's parser is the de-facto
reading of messy real files:

* lines end at LF, CR or CRLF (RFC 9309 §2.2: ``EOL = %x0A / %x0D / %x0D.0A``);
* a UTF-8 byte order mark (or a prefix of one) at the start is skipped;
* a line is cut at 16,663 bytes (Google: ``2083 * 8`` minus the NUL), so a hostile line
  costs bounded work;
* ``#`` starts a comment (§2.2); keys are case-insensitive (§2.2.1); a missing colon is
  accepted when the line is exactly ``key value`` (Google), and frequent typos of the keys
  (``useragent``, ``dissallow``, …) are accepted as Google does;
* allow/disallow values are percent-encoded where they hold non-ASCII octets and their
  escapes are upper-cased (§2.2.2: "Octets … outside the range of the US-ASCII coded
  character set … MUST be percent-encoded … prior to comparison").

Group boundaries are Google's and RFC 9309 §2.1's: consecutive ``user-agent`` lines open one
group, which ends at the next ``user-agent`` line that follows a rule. Lines that are not
rules (sitemap, crawl-delay, unknown keys) do not end a group.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field

__all__ = ["MAX_LINE_BYTES", "Group", "Key", "ParsedFile", "escape_pattern", "parse_lines"]

# Google: "Certain browsers limit the URL length to 2083 bytes … any valid line isn't going to be
# more than many times that". The buffer holds 2083*8 bytes including the terminating NUL.
MAX_LINE_BYTES = 2083 * 8 - 1

_BOM = b"\xef\xbb\xbf"
# Google accepts whitespace in place of the colon only when exactly two tokens remain.
_WHITESPACE_SEPARATED = re.compile(rb"([^ \t]+)[ \t]+([^ \t]+)")
# RFC 9309 §2.2.1: product tokens are [a-zA-Z_-]; Google compares that prefix of the value.
_PRODUCT_TOKEN = re.compile(rb"[A-Za-z_-]*")
_ESCAPE_NEEDED = re.compile(rb"[\x80-\xff]|%[0-9a-fA-F]{2}")


class Key(enum.Enum):
    USER_AGENT = "user-agent"
    ALLOW = "allow"
    DISALLOW = "disallow"
    SITEMAP = "sitemap"
    CRAWL_DELAY = "crawl-delay"
    UNKNOWN = "unknown"


# Prefixes as Google matches them (``StartsWithIgnoreCase``), typos included
# (robots.cc ``kAllowFrequentTypos``). Order matters: user-agent, allow, disallow, sitemap.
_KEY_PREFIXES: tuple[tuple[bytes, Key], ...] = (
    (b"user-agent", Key.USER_AGENT),
    (b"useragent", Key.USER_AGENT),
    (b"user agent", Key.USER_AGENT),
    (b"allow", Key.ALLOW),
    (b"disallow", Key.DISALLOW),
    (b"dissallow", Key.DISALLOW),
    (b"dissalow", Key.DISALLOW),
    (b"disalow", Key.DISALLOW),
    (b"diasllow", Key.DISALLOW),
    (b"disallaw", Key.DISALLOW),
    (b"sitemap", Key.SITEMAP),
    (b"site-map", Key.SITEMAP),
    (b"crawl-delay", Key.CRAWL_DELAY),
)


def _classify(key: bytes) -> Key:
    lowered = key.lower()
    for prefix, kind in _KEY_PREFIXES:
        if lowered.startswith(prefix):
            return kind
    return Key.UNKNOWN


@dataclass(slots=True)
class Group:
    """One group: its user-agent lines and its rules, in file order (RFC 9309 §2.1)."""

    agents: set[str] = field(default_factory=set)  # lower-cased product tokens
    is_global: bool = False  # a ``*`` line was among its user-agent lines
    rules: list[tuple[bool, str, int]] = field(default_factory=list)  # (allow, pattern, line)
    crawl_delay: float | None = None


@dataclass(slots=True)
class ParsedFile:
    groups: list[Group]
    sitemaps: list[str]


def _escape_match(match: re.Match[bytes]) -> bytes:
    text = match.group()
    if len(text) == 1:
        return b"%%%02X" % text[0]
    return text.upper()


def escape_pattern(value: bytes) -> str:
    """Percent-encode non-ASCII octets, upper-case existing escapes (Google ``MaybeEscapePattern``).

    The result is pure ASCII, so comparing it with a URL path never depends on how the file
    was encoded.
    """
    if _ESCAPE_NEEDED.search(value) is not None:
        value = _ESCAPE_NEEDED.sub(_escape_match, value)
    return value.decode("ascii")


def _user_agent(value: bytes) -> tuple[bool, str]:
    """(is the global agent, lower-cased product token) of a user-agent value."""
    # Google: "a '*' followed by space and more characters … is still regarded a global rule".
    if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
        return True, ""
    token = _PRODUCT_TOKEN.match(value)
    return False, token.group().decode("ascii").lower() if token else ""


def _crawl_delay(value: bytes) -> float | None:
    try:
        delay = float(value.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    if math.isnan(delay) or math.isinf(delay) or delay < 0:
        return None
    return delay


def _strip_bom(body: bytes) -> bytes:
    skip = 0
    while skip < 3 and skip < len(body) and body[skip] == _BOM[skip]:
        skip += 1
    return body[skip:]


def parse_lines(body: bytes) -> ParsedFile:
    """Split ``body`` into groups and sitemaps; never raises, whatever the bytes."""
    groups: list[Group] = []
    sitemaps: list[str] = []
    current: Group | None = None
    seen_rule = False  # a rule was seen since the current group's user-agent lines
    classified: dict[bytes, Key] = {}
    for number, raw in enumerate(_strip_bom(body).splitlines(), start=1):
        line = raw[:MAX_LINE_BYTES]
        hash_at = line.find(b"#")
        if hash_at >= 0:
            line = line[:hash_at]
        line = line.strip()
        if not line:
            continue
        colon = line.find(b":")
        if colon >= 0:
            key = line[:colon].strip()
            value = line[colon + 1 :].strip()
        else:
            pair = _WHITESPACE_SEPARATED.fullmatch(line)
            if pair is None:
                continue
            key, value = pair.group(1), pair.group(2)
        if not key:
            continue
        kind = classified.get(key)
        if kind is None:
            kind = classified[key] = _classify(key)
        if kind is Key.USER_AGENT:
            if current is None or seen_rule:
                current = Group()
                groups.append(current)
                seen_rule = False
            is_global, token = _user_agent(value)
            if is_global:
                current.is_global = True
            else:
                current.agents.add(token)
        elif kind is Key.ALLOW or kind is Key.DISALLOW:
            # Rules before any user-agent line belong to no group (RFC 9309 §2.1).
            if current is not None:
                seen_rule = True
                current.rules.append((kind is Key.ALLOW, escape_pattern(value), number))
        elif kind is Key.SITEMAP:
            # §2.3.5: sitemaps are not tied to any group.
            if value:
                sitemaps.append(value.decode("utf-8", "replace"))
        elif kind is Key.CRAWL_DELAY and current is not None and current.crawl_delay is None:
            current.crawl_delay = _crawl_delay(value)
    return ParsedFile(groups, sitemaps)
