"""The learner's only I/O: a crawl directory's fetches as ``Observation`` values.

A thin reader over the store's public API (``SQLiteStore.iter_fetches``); everything else
in the learner is pure.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dustless.errors import InvalidOption

from ._learn_evidence import Observation

__all__ = ["read_observations"]


def read_observations(crawl_dir: str | Path) -> Iterator[Observation]:
    """Every fetch of the crawl in ``crawl_dir`` (every batch), in fetch order.

    ``InvalidOption`` when the directory holds no crawl; the store's errors otherwise.
    """
    from dustless.store import DB_NAME, SQLiteStore

    directory = Path(crawl_dir)
    if not (directory / DB_NAME).is_file():
        raise InvalidOption(f"{directory} holds no crawl (no {DB_NAME})")
    store = SQLiteStore(directory)
    try:
        for row in store.iter_fetches():
            yield Observation(row.url, row.status, row.content_sha1, row.location)
    finally:
        store.close()
