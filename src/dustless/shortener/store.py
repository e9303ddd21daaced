"""The shortener's store interface and how a ``--db`` URL picks a backend.

Seed 003 ch. 8 (데이터 모델) keeps the ``<short URL, long URL>`` pairs in a relational
database rather than an in-memory hash table (memory is finite and costly). Two backends
implement :class:`Store`: SQLite in WAL mode (the default, one machine) and PostgreSQL
(``postgresql://…``, many web servers — seed 003's stateless web tier).

Schema, shared by both (types differ a little):

* ``links(id, code UNIQUE, long_url, url_key, redirect, created_at, expires_at, is_alias,
  shared)`` — ``code`` is ``Codec.encode(id)`` for generated links or the alias; lookups go
  through the unique index on ``code``. ``shared`` marks the links a later request for the
  same long URL may reuse; a partial unique index on ``(url_key, redirect) WHERE shared``
  makes "concurrent creates of the same long URL yield one code" a database guarantee.
* ``clicks(link_id, day, referrer_host, ua_family, n)`` — aggregated counts, upserted in
  batches (seed 003 ch. 8 마무리: 데이터 분석 솔루션).
* ``meta(name, value)`` — the code key (random, made once per database) and schema version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeAlias, runtime_checkable

from dustless.errors import UsageError

from .codes import Codec
from .model import ClickKey, CreateResult, Link, LinkStats, NewLink, Redirect

__all__ = [
    "DEFAULT_DB",
    "ClickGroups",
    "GroupedClickStore",
    "Store",
    "open_store",
    "row_to_link",
]

DEFAULT_DB = "sqlite:///./shortener.db"
SCHEMA_VERSION = 1
# The columns every "give me a link" query selects, in LinkRow order.
LINK_COLUMNS = "id, code, long_url, redirect, created_at, expires_at, is_alias"


class Store(Protocol):
    """What the service needs from a database. Every method may raise ``StoreError``."""

    codec: Codec

    async def get(self, code: str) -> Link | None:
        """The link named ``code`` (expired or not), or None."""
        ...

    async def create(self, new: NewLink) -> CreateResult:
        """Store ``new`` — or return the existing link for the same long URL or alias.

        Returns only once the row is durably committed. Raises ``AliasTaken``.
        """
        ...

    async def add_clicks(self, counts: Mapping[ClickKey, int]) -> None:
        """Add a batch of aggregated click counts."""
        ...

    async def stats(self, link: Link, top: int = 10) -> LinkStats: ...

    async def export_links(self) -> list[Link]: ...

    async def import_links(self, links: Sequence[tuple[Link, str]]) -> int:
        """Insert ``(link, url_key)`` pairs keeping their codes; returns how many were new."""
        ...

    async def count(self) -> int: ...

    async def close(self) -> None: ...


# (day YYYY-MM-DD, referrer host, UA family) -> {link id: clicks}: a click batch as the
# recorder keeps it, with no object per link (see clicks.py).
ClickGroups: TypeAlias = Mapping[tuple[str, str, str], Mapping[int, int]]


@runtime_checkable
class GroupedClickStore(Protocol):
    """A store that takes click batches grouped as the recorder keeps them (optional)."""

    async def add_click_groups(self, groups: ClickGroups) -> None:
        """Add ``groups``' counts; the same as ``add_clicks`` of the flattened batch."""
        ...


def row_to_link(row: Sequence[object]) -> Link:
    link_id, code, long_url, redirect, created_at, expires_at, is_alias = row
    return Link(
        id=int(link_id),  # type: ignore[call-overload]
        code=str(code),
        long_url=str(long_url),
        redirect=Redirect(int(redirect)),  # type: ignore[call-overload]
        created_at=float(created_at),  # type: ignore[arg-type]
        expires_at=None if expires_at is None else float(expires_at),  # type: ignore[arg-type]
        is_alias=bool(is_alias),
    )


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


async def open_store(db: str = DEFAULT_DB, *, durable: bool = True) -> Store:
    """Open (and create or migrate) the store a ``--db`` URL names.

    ``durable=False`` relaxes SQLite's fsync per commit (``synchronous=NORMAL``): a process
    crash still loses nothing committed, a power cut may lose the last commits.
    """
    path = sqlite_path(db)
    if path is not None:
        from .sqlite_store import SqliteStore

        return await SqliteStore.open(path, durable=durable)
    if is_postgres(db):
        from .pg_store import PostgresStore

        return await PostgresStore.open(db)
    raise UsageError(f"bad --db {db!r}: expected sqlite:///PATH or postgresql://…")
