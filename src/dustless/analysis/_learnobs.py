"""What ``rules learn`` reads: a crawl directory's fetches as the learner's ``Observation``
values.

A thin read-only reader over the crawl DB (opened ``mode=ro``). It lives here, beside the
other readers of a finished crawl, so that the learner in ``dustless.rules`` stays pure and
``rules`` never imports ``analysis`` (``analysis`` reads rules, not the reverse). A
document's content identity is its near-duplicate class by default (``content="near"``:
pages whose visible text is the same are the same document, as a ``www`` twin whose links
name its own host is), or its payload SHA-1 (``"exact"``); a truncated or failed fetch has
none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dustless.analysis._content import CONTENT_MODES, document_classes
from dustless.errors import InvalidOption
from dustless.rules import Observation
from dustless.store import DB_NAME, observation_rows, open_crawl

__all__ = ["read_observations"]


def read_observations(
    crawl_dir: str | Path | None, content: str = "near", *, db: str | None = None
) -> Iterator[Observation]:
    """Every fetch of the crawl in ``crawl_dir`` (every batch), in fetch order; with ``db``
    (``postgresql://…``), of the crawl workers share there.

    ``InvalidOption`` when the directory holds no crawl; the store's errors otherwise.
    """
    if content not in CONTENT_MODES:
        raise InvalidOption(f"content must be one of {', '.join(CONTENT_MODES)}, not {content!r}")
    if db is None and (crawl_dir is None or not (Path(crawl_dir) / DB_NAME).is_file()):
        raise InvalidOption(f"{crawl_dir} holds no crawl (no {DB_NAME})")
    with open_crawl(crawl_dir, db=db) as reader:
        classes = document_classes(reader, content)
        for url, status, sha, location in observation_rows(reader):
            yield Observation(url, status, classes.get(sha, sha) if sha else None, location)
