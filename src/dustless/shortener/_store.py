"""The shortener's store interface and how a ``--db`` URL picks a backend.

Seed 003 ch. 8 (데이터 모델) keeps the ``<short URL, long URL>`` pairs in a relational
database rather than an in-memory hash table (memory is finite and costly). Two backends
implement :class:`Store`: SQLite in WAL mode (the default, one machine) and PostgreSQL
(``postgresql://…``, many web servers — seed 003's stateless web tier).

Schema (version 4), shared by both (types differ a little):

* ``links(id, code UNIQUE, long_url, url_key, redirect, created_at, expires_at, is_alias,
  shared, owner, max_visits, visits, valid_since, title)`` — ``code`` is
  ``Codec.encode(id)`` for generated links or the custom slug; lookups go through the unique
  index on ``code``. ``owner`` is the id of the API key that made the link (0: none).
  ``shared`` marks the links a later request of the same owner for the same long URL may
  reuse; a partial unique index on ``(owner, url_key, redirect) WHERE shared`` makes
  "concurrent creates of the same long URL yield one code" a database guarantee, and keeps
  one owner from learning another's code. ``expires_at`` is the API's ``validUntil``,
  ``valid_since`` its ``validSince`` (version 4, as is ``title``); ``visits`` counts the
  redirects of links with ``max_visits``.
* ``clicks(link_id, day, referrer_host, ua_family, os_family, n)`` — aggregated counts,
  upserted in batches (seed 003 ch. 8 마무리: 데이터 분석 솔루션). Bots are told apart by
  ``ua_family``; ``os_family`` (version 4) is ``(unknown)`` for clicks counted before it.
* ``api_keys(id, name UNIQUE, key_hash UNIQUE, admin, created_at, revoked_at)`` — SHA-256 of
  each key, never the key.
* ``link_tags(link_id, tag)`` — a link's tags (version 3), indexed by tag for the list filter.
* ``meta(name, value)`` — the code key (random, made once per database) and schema version.
* PostgreSQL only: ``rate_buckets(name, tokens, updated)`` — the token buckets every instance
  shares (an UNLOGGED table: losing them in a crash only refills them).

Version 1 databases (no owners, keys or visit limits), version 2 (no tags) and version 3 (no
validSince or title) are migrated when opened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias, runtime_checkable

from dustless.errors import UsageError

from ._bots import is_bot_family
from ._codes import Codec
from ._model import (
    ApiKey,
    ClickKey,
    CreateResult,
    ImportCounts,
    Link,
    LinkPage,
    LinkRecord,
    LinkStats,
    NewLink,
    Redirect,
    StoredKey,
)

__all__ = [
    "DEFAULT_DB",
    "ClickGroups",
    "GroupedClickStore",
    "RawDump",
    "SharedBuckets",
    "Store",
    "link_values",
    "order_clause",
    "row_to_key",
    "row_to_link",
]

DEFAULT_DB = "sqlite:///./shortener.db"
SCHEMA_VERSION = 4
# The columns every "give me a link" query selects, in row_to_link's order.
LINK_COLUMNS = (
    "id, code, long_url, redirect, created_at, expires_at, is_alias, owner, max_visits, visits,"
    " valid_since, title"
)
# An export's key rows: the stored hash too (never the key, which is not stored).
STORED_KEY_COLUMNS = "id, name, key_hash, admin, created_at, revoked_at"
CLICK_COLUMNS = "link_id, day, referrer_host, ua_family, os_family, n"
# How many days of clicks a link list shows per link (its small chart).
CHART_DAYS = 30


class Store(Protocol):
    """What the service needs from a database. Every method may raise ``StoreError``."""

    codec: Codec

    async def get(self, code: str) -> Link | None:
        """The link named ``code`` (ended or not), or None."""
        ...

    async def create(self, new: NewLink) -> CreateResult:
        """Store ``new`` — or return the same owner's existing link for the same long URL or
        slug. Returns only once the row is durably committed. Raises ``AliasTaken``."""
        ...

    async def take_visit(self, link_id: int) -> Link | None:
        """Count one redirect of a link with ``max_visits``, atomically across every process
        and instance; the link as counted, or None when its visits are used up."""
        ...

    async def update_link(
        self,
        link_id: int,
        expires_at: float | None,
        max_visits: int | None,
        valid_since: float | None,
        title: str | None,
    ) -> Link | None:
        """Set a link's end (validUntil), visit limit, start (validSince) and title; the
        updated link, or None."""
        ...

    async def add_clicks(self, counts: Mapping[ClickKey, int]) -> None:
        """Add a batch of aggregated click counts."""
        ...

    async def stats(self, link: Link, top: int = 10) -> LinkStats: ...

    async def list_links(
        self,
        owner: int | None,
        search: str,
        offset: int,
        limit: int,
        since_day: str,
        tag: str | None = None,
        order: tuple[str, bool] | None = None,
    ) -> LinkPage:
        """Links of ``owner`` (None: every link), newest first or in ``order`` (an orderBy
        field, descending), whose code or long URL contains ``search`` (and tagged ``tag``);
        with their clicks, daily clicks from ``since_day`` on and tags."""
        ...

    async def set_tags(self, link_id: int, tags: Sequence[str]) -> None:
        """Replace a link's tags."""
        ...

    async def tags_of(self, link_ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """The tags of each link (sorted); links without tags are left out."""
        ...

    async def list_tags(self, owner: int | None) -> list[tuple[str, int]]:
        """Every tag of ``owner``'s links (None: every link) with how many links carry it."""
        ...

    async def export_rows(self) -> list[tuple[object, ...]]:
        """Every link as a raw ``LINK_COLUMNS`` row (converted by the caller, row by row, so
        that one bad value never stops a backup)."""
        ...

    async def import_links(self, links: Sequence[tuple[Link, str]]) -> int:
        """Insert ``(link, url_key)`` pairs keeping their codes; returns how many were new."""
        ...

    async def export_dump(self) -> RawDump:
        """Every key (with its hash), link and click row, raw (see ``dump.py``)."""
        ...

    async def import_dump(
        self, keys: Sequence[StoredKey], links: Sequence[LinkRecord]
    ) -> ImportCounts:
        """Insert keys (matched by name) and links (matched by code) with their owners and
        clicks, in one transaction. What is already there with the same name and hash, or the
        same code and URL, is kept as it is (importing twice adds nothing); a key name with
        another hash, or a code naming another URL, raises ``UsageError`` and writes nothing."""
        ...

    async def count(self) -> int: ...

    async def ping(self) -> None:
        """Ask the database something; raises ``StoreError`` when it cannot answer."""
        ...

    async def add_key(self, name: str, key_hash: str, admin: bool, now: float) -> ApiKey:
        """Store a new API key's hash; ``UsageError`` if the name is taken."""
        ...

    async def key_for_hash(self, key_hash: str) -> ApiKey | None: ...

    async def list_keys(self) -> list[ApiKey]: ...

    async def revoke_key(self, name: str, now: float) -> ApiKey | None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class RawDump:
    """A whole database as rows, converted by ``dump.write_dump`` one by one."""

    keys: list[tuple[object, ...]]  # STORED_KEY_COLUMNS
    links: list[tuple[object, ...]]  # LINK_COLUMNS
    clicks: list[tuple[object, ...]]  # CLICK_COLUMNS, ordered by link_id
    tags: list[tuple[object, ...]]  # (link_id, tag)


@runtime_checkable
class SharedBuckets(Protocol):
    """A store that keeps token buckets every instance shares (PostgreSQL)."""

    async def take_token(self, bucket: str, rate: float, burst: int) -> float:
        """Take a token from ``bucket``: 0.0 when granted, else seconds until one is."""
        ...


# (day YYYY-MM-DD, referrer host, UA family, OS family) -> {link id: clicks}: a click batch as
# the recorder keeps it, with no object per link (see clicks.py).
ClickGroups: TypeAlias = Mapping[tuple[str, str, str, str], Mapping[int, int]]


@runtime_checkable
class GroupedClickStore(Protocol):
    """A store that takes click batches grouped as the recorder keeps them (optional)."""

    async def add_click_groups(self, groups: ClickGroups) -> None:
        """Add ``groups``' counts; the same as ``add_clicks`` of the flattened batch."""
        ...


def row_to_link(row: Sequence[object]) -> Link:
    """A ``LINK_COLUMNS`` row as a Link; ``ValueError``/``TypeError`` for a value that is
    not one (a corrupt or hand-edited row)."""
    link_id, code, long_url, redirect, created_at, expires_at, is_alias, owner, limit, visits = row[
        :10
    ]
    since, title = row[10:12]
    return Link(
        id=int(link_id),  # type: ignore[call-overload]
        code=str(code),
        long_url=str(long_url),
        redirect=Redirect(int(redirect)),  # type: ignore[call-overload]
        created_at=float(created_at),  # type: ignore[arg-type]
        expires_at=None if expires_at is None else float(expires_at),  # type: ignore[arg-type]
        is_alias=bool(is_alias),
        owner=int(owner),  # type: ignore[call-overload]
        max_visits=None if limit is None else int(limit),  # type: ignore[call-overload]
        visits=int(visits),  # type: ignore[call-overload]
        valid_since=None if since is None else float(since),  # type: ignore[arg-type]
        title=None if title is None else str(title),
    )


def link_values(link: Link, url_key: str, share: bool, owner: int) -> tuple[object, ...]:
    """A link's column values in the order both backends' INSERT statements name them
    (``LINK_COLUMNS`` without ``id``): one place, so that the two cannot disagree."""
    return (
        link.code,
        link.long_url,
        url_key,
        int(link.redirect),
        link.created_at,
        link.expires_at,
        link.is_alias,
        share,
        owner,
        link.max_visits,
        link.visits,
        link.valid_since,
        link.title,
    )


def row_to_key(row: Sequence[object]) -> ApiKey:
    key_id, name, admin, created_at, revoked_at = row
    return ApiKey(
        int(key_id),  # type: ignore[call-overload]
        str(name),
        bool(admin),
        float(created_at),  # type: ignore[arg-type]
        None if revoked_at is None else float(revoked_at),  # type: ignore[arg-type]
    )


KEY_COLUMNS = "id, name, admin, created_at, revoked_at"


def like_pattern(search: str) -> str:
    """``search`` as a LIKE pattern matching it anywhere, its wildcards escaped with ``\\``."""
    escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def sqlite_path(db: str) -> str | None:
    """The file path of a ``sqlite:///PATH`` URL, or None for another scheme."""
    if db.startswith("sqlite:///"):
        path = db[len("sqlite:///") :]
        if not path:
            raise UsageError("--db sqlite:/// needs a file path, e.g. sqlite:///./shortener.db")
        return path
    if db.startswith("sqlite:"):
        raise UsageError(f"bad --db {db!r}: write sqlite:///RELATIVE or sqlite:////ABSOLUTE")
    return None


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


def link_page(
    total: int,
    links: Sequence[Link],
    rows: Sequence[Sequence[object]],
    since_day: str,
    tag_rows: Sequence[Sequence[object]] = (),
) -> LinkPage:
    """A LinkPage from the links and their ``(link_id, day, ua_family, clicks)`` rows of every
    day (the totals); the daily series keep the days from ``since_day`` on."""
    per_day: dict[int, dict[str, list[int]]] = {}
    clicks: dict[int, tuple[int, int]] = {link.id: (0, 0) for link in links}
    for link_id, day, family, n in rows:
        lid, count = int(link_id), int(n)  # type: ignore[call-overload]
        bot = is_bot_family(str(family))
        everything, bots = clicks.get(lid, (0, 0))
        clicks[lid] = (everything + count, bots + (count if bot else 0))
        if str(day) >= since_day:
            cell = per_day.setdefault(lid, {}).setdefault(str(day), [0, 0])
            cell[1 if bot else 0] += count
    daily = {
        lid: tuple((day, h, b) for day, (h, b) in sorted(days.items()))
        for lid, days in per_day.items()
    }
    return LinkPage(total, tuple(links), daily, clicks, tags_by_link(tag_rows))


# The allow-list of orderBy fields (validate.ORDER_FIELDS) and the SQL each sorts by; nothing
# from the request reaches the statement but one of these.
_ORDER_SQL = {
    "dateCreated": ("created_at",),
    "shortCode": ("code{collate}",),
    "longUrl": ("long_url{collate}",),
    "title": ("title{collate}",),
    "visits": ("(SELECT COALESCE(SUM(n), 0) FROM clicks WHERE clicks.link_id = links.id)",),
}


def order_clause(order: tuple[str, bool] | None, collate: str = "") -> str:
    """``ORDER BY`` for a link list: newest first by default; ties in id order, so pages
    never overlap. ``collate`` makes text compare byte by byte on PostgreSQL as on SQLite.
    Links without a title come last whichever the direction (the two databases disagree on
    where NULL sorts, so it is said explicitly)."""
    if order is None:
        return " ORDER BY id DESC"
    field, descending = order
    direction = " DESC" if descending else " ASC"
    keys = [k.format(collate=collate) + direction for k in _ORDER_SQL[field]]
    if field == "title":
        keys.insert(0, "(title IS NULL)")
    return " ORDER BY " + ", ".join(keys) + ", id" + direction


def tags_by_link(rows: Sequence[Sequence[object]]) -> dict[int, tuple[str, ...]]:
    """``(link_id, tag)`` rows as each link's sorted tags."""
    tags: dict[int, list[str]] = {}
    for link_id, tag in rows:
        tags.setdefault(int(link_id), []).append(str(tag))  # type: ignore[call-overload]
    return {lid: tuple(sorted(ts)) for lid, ts in tags.items()}


def make_stats(
    link: Link,
    by_day: Sequence[tuple[str, int]],
    referrers: Sequence[tuple[str, int]],
    families: Sequence[tuple[str, int]],
    top: int,
    systems: Sequence[tuple[str, int]] = (),
) -> LinkStats:
    """LinkStats from every day, referrer and family count (sorted by count); the referrers
    and families cut to ``top``. Bots are counted over every family, not only the top ones."""
    total = sum(n for _, n in by_day)
    bots = sum(n for family, n in families if is_bot_family(family))
    return LinkStats(
        link,
        total,
        tuple(by_day),
        tuple(referrers[:top]),
        tuple(families[:top]),
        bots,
        tuple(systems),
    )


def new_link(link_id: int, code: str, new: NewLink) -> Link:
    """The Link that storing ``new`` as ``link_id`` with ``code`` made."""
    return Link(
        link_id,
        code,
        new.long_url,
        new.redirect,
        new.created_at,
        new.expires_at,
        new.alias is not None,
        new.owner,
        new.max_visits,
        valid_since=new.valid_since,
        title=new.title,
    )


def same_slug_request(link: Link, new: NewLink) -> bool:
    """A slug asked for again by its owner for the same URL gets its link back (200); anyone
    else gets 409 and learns nothing about the link."""
    return link.is_alias and link.owner == new.owner and link.long_url == new.long_url


def key_conflict(name: str, found: tuple[object, ...] | None, key: StoredKey) -> str | None:
    """Why the target's key row ``found`` (name, key_hash) for ``key.name`` forbids importing
    ``key``, or None when it is the same key (or there is none)."""
    if found is None or str(found[1]) == key.key_hash:
        return None
    return (
        f"a key named {name!r} exists in the target database with another hash: "
        "rename or revoke one of them first (nothing was imported)"
    )


def link_conflict(found: Sequence[object] | None, record: LinkRecord) -> str | None:
    """Why an existing row (long_url) with the record's code forbids importing it."""
    if found is None or str(found[0]) == record.link.long_url:
        return None
    return (
        f"code {record.link.code!r} already links to {found[0]!r} in the target database, "
        f"not to {record.link.long_url!r} (nothing was imported)"
    )


def shares(link: Link) -> bool:
    """Whether an imported link may be the one a plain request for its URL gets back."""
    return (
        not link.is_alias
        and link.expires_at is None
        and link.max_visits is None
        and link.valid_since is None
    )
