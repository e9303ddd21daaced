"""Values that cross the shortener's module boundaries (immutable, typed)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

from dustless.errors import UsageError

__all__ = [
    "AliasTaken",
    "ClickKey",
    "CreateResult",
    "Link",
    "LinkStats",
    "NewLink",
    "Redirect",
]


class Redirect(enum.IntEnum):
    """Seed 003 ch. 8 (URL 리디렉션): 301 lets browsers cache the answer, so fewer requests
    reach us; 302 sends every click through us, so every click is counted."""

    MOVED_PERMANENTLY = 301
    FOUND = 302


@dataclass(frozen=True, slots=True)
class Link:
    """One stored short link. ``code`` is the generated code or the custom alias."""

    id: int
    code: str
    long_url: str  # the URL as stored: its rfc3986 form, what ``Location`` carries
    redirect: Redirect
    created_at: float  # seconds since the epoch
    expires_at: float | None = None
    is_alias: bool = False

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at


@dataclass(frozen=True, slots=True)
class NewLink:
    """A validated request to create a link."""

    long_url: str  # rfc3986 form, stored and redirected to
    key: str  # the long URL under the configured policy: what "same long URL" compares
    redirect: Redirect
    created_at: float
    alias: str | None = None
    expires_at: float | None = None

    @property
    def dedup(self) -> bool:
        """Only plain requests share a code: an alias or an expiry asks for a link of its own."""
        return self.alias is None and self.expires_at is None


@dataclass(frozen=True, slots=True)
class CreateResult:
    link: Link
    created: bool  # False: an equal long URL already had this link (HTTP 200, not 201)


class AliasTaken(UsageError):
    """The requested alias already names a link to another URL (HTTP 409)."""


class ClickKey(NamedTuple):
    """The unit clicks are aggregated by before they are written (one row per key and day).

    A named tuple rather than a dataclass: thousands are made per second under cold traffic
    and a tuple is built several times faster (it is just as immutable)."""

    link_id: int
    day: str  # YYYY-MM-DD, UTC
    referrer_host: str  # "" when there was no Referer
    ua_family: str


@dataclass(frozen=True, slots=True)
class LinkStats:
    link: Link
    total: int
    by_day: tuple[tuple[str, int], ...]
    referrers: tuple[tuple[str, int], ...]
    user_agents: tuple[tuple[str, int], ...]
