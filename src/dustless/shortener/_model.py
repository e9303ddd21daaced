"""Values that cross the shortener's module boundaries (immutable, typed)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple

from dustless.errors import UsageError

__all__ = [
    "ANONYMOUS",
    "AliasTaken",
    "ApiKey",
    "ClickKey",
    "CreateResult",
    "Ended",
    "ImportCounts",
    "Link",
    "LinkPage",
    "LinkRecord",
    "LinkStats",
    "NewLink",
    "Redirect",
    "StoredKey",
]

# The owner of links made without an API key (public mode, the CLI, imports).
ANONYMOUS = 0


class Redirect(enum.IntEnum):
    """Seed 003 ch. 8 (URL 리디렉션): 301 lets browsers cache the answer, so fewer requests
    reach us; 302 sends every click through us, so every click is counted."""

    MOVED_PERMANENTLY = 301
    FOUND = 302


class Ended(enum.Enum):
    """Whether a link still redirects; an ended link answers 410 Gone."""

    ACTIVE = "active"
    NOT_YET_VALID = "not-yet-valid"  # before its validSince: answered as an unknown code
    EXPIRED = "expired"  # its validUntil has passed
    VISIT_LIMIT = "visit-limit"  # its maxVisits redirects were all served


@dataclass(frozen=True, slots=True)
class Link:
    """One stored short link. ``code`` is the generated code or the custom slug."""

    id: int
    code: str
    long_url: str  # the URL as stored: its rfc3986 form, what ``Location`` carries
    redirect: Redirect
    created_at: float  # seconds since the epoch
    expires_at: float | None = None  # the API's validUntil
    is_alias: bool = False
    owner: int = ANONYMOUS  # the id of the API key that made it
    max_visits: int | None = None
    visits: int = 0  # redirects served, counted only for links with max_visits
    valid_since: float | None = None  # the API's validSince: not found before it (Shlink)
    title: str | None = None

    def pending(self, now: float) -> bool:
        """Before its validSince: the link behaves as not found (Shlink's "disabled")."""
        return self.valid_since is not None and now < self.valid_since

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def ended(self, now: float) -> Ended:
        if self.pending(now):
            return Ended.NOT_YET_VALID
        if self.expired(now):
            return Ended.EXPIRED
        if self.max_visits is not None and self.visits >= self.max_visits:
            return Ended.VISIT_LIMIT
        return Ended.ACTIVE


@dataclass(frozen=True, slots=True)
class NewLink:
    """A validated request to create a link."""

    long_url: str  # rfc3986 form, stored and redirected to
    key: str  # the long URL under the configured policy: what "same long URL" compares
    redirect: Redirect
    created_at: float
    alias: str | None = None
    expires_at: float | None = None
    owner: int = ANONYMOUS
    max_visits: int | None = None
    tags: tuple[str, ...] = ()
    valid_since: float | None = None
    title: str | None = None

    @property
    def dedup(self) -> bool:
        """Only plain requests share a code: a slug, a start, an end or a limit asks for a
        link of its own. Sharing is per owner, so a request never learns another owner's
        link. (Tags and a title do not: the existing link is returned unchanged.)"""
        return (
            self.alias is None
            and self.expires_at is None
            and self.max_visits is None
            and self.valid_since is None
        )


@dataclass(frozen=True, slots=True)
class CreateResult:
    link: Link
    created: bool  # False: an equal long URL already had this link (HTTP 200, not 201)


class AliasTaken(UsageError):
    """The requested slug already names a link to another URL (HTTP 409)."""


class ClickKey(NamedTuple):
    """The unit clicks are aggregated by before they are written (one row per key and day).

    A named tuple rather than a dataclass: thousands are made per second under cold traffic
    and a tuple is built several times faster (it is just as immutable)."""

    link_id: int
    day: str  # YYYY-MM-DD, UTC
    referrer_host: str  # "" when there was no Referer
    ua_family: str
    os_family: str = "(unknown)"


@dataclass(frozen=True, slots=True)
class LinkStats:
    link: Link
    total: int  # every click, people and potential bots
    by_day: tuple[tuple[str, int], ...]
    referrers: tuple[tuple[str, int], ...]
    user_agents: tuple[tuple[str, int], ...]
    bots: int = 0  # clicks whose User-Agent family is a bot, preview fetcher or script
    operating_systems: tuple[tuple[str, int], ...] = ()

    @property
    def human(self) -> int:
        return self.total - self.bots


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An API key as stored: only its SHA-256 is kept, never the key itself."""

    id: int
    name: str
    admin: bool  # sees and manages every link; an author key only its own
    created_at: float
    revoked_at: float | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class LinkPage:
    """One page of a link list, with the counts the page shows."""

    total: int  # links matching the search
    links: tuple[Link, ...]
    # link id -> ((day, human clicks, bot clicks), ...) over the last days, oldest first
    daily: dict[int, tuple[tuple[str, int, int], ...]]
    clicks: dict[int, tuple[int, int]]  # link id -> (all clicks, bot clicks)
    tags: dict[int, tuple[str, ...]] = field(default_factory=dict)  # link id -> its tags


@dataclass(frozen=True, slots=True)
class StoredKey:
    """An API key with its stored SHA-256: what an export carries so that a moved
    deployment's keys keep working (never the key itself, which nobody has kept)."""

    name: str
    key_hash: str
    admin: bool
    created_at: float
    revoked_at: float | None = None


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """A link as an import writes it: its owner named by key name (ids differ between
    databases), its ``url_key`` under the importing policy, and its aggregated clicks."""

    link: Link  # id and owner are ignored: the target database assigns them
    url_key: str
    owner_name: str | None  # None: no key made it
    # (day, referrer host, UA family, OS family, n)
    clicks: tuple[tuple[str, str, str, str, int], ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ImportCounts:
    keys_added: int
    keys_present: int
    links_added: int
    links_present: int
    clicks_added: int  # clicks of the links added (a link already present keeps its own)
