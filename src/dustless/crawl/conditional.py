"""Conditional requests for a recrawl: validators of the copy the crawl DB holds.

RFC 9110 §13.1: a client that holds a representation sends its validators —
``If-None-Match`` with the entity tag, ``If-Modified-Since`` with the ``Last-Modified``
date — and a server whose resource has not changed answers ``304 Not Modified`` without a
body (§15.4.5). The recrawl thus learns "unchanged" without a download; the fetch is kept
with the previous copy's content hash, so ``dustless changes`` counts it as a download of
unchanged content (seed 004 §4 compares contents between batches).

Here, in the crawl package, because the engine sends them; ``dustless.recrawl`` plans the
batches that use them (and re-exports these names).

Batch-shaped (ARCHITECTURE): validators are looked up for a window of claimed URLs at a
time with one ``last_fetches`` query, never held for the whole collection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dustless.store import CrawlStore

__all__ = [
    "RECRAWL_KEY",
    "Validator",
    "batch_settings",
    "conditional_batch",
    "entity_tags",
    "kept_validators",
    "recrawl_info",
    "validators_for",
]

RECRAWL_KEY = "recrawl"  # the batch config's object that makes a batch a recrawl


def batch_settings(config: str) -> dict[str, Any]:
    """A batch's config JSON as an object; ``{}`` when it is not one."""
    try:
        data = json.loads(config)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def recrawl_info(config: str) -> dict[str, Any] | None:
    """The ``"recrawl"`` object of a batch's config JSON; ``None`` for a first crawl."""
    info = batch_settings(config).get(RECRAWL_KEY)
    return info if isinstance(info, dict) else None


@dataclass(frozen=True, slots=True)
class Validator:
    """What a URL's last download left: its fetch, content hash and HTTP validators."""

    fetch_id: int
    sha1: str
    etag: str | None
    last_modified: str | None

    def headers(self) -> dict[str, str]:
        """The conditional request headers (RFC 9110 §13.1.2: If-None-Match wins)."""
        out: dict[str, str] = {}
        if self.etag:
            out["If-None-Match"] = ", ".join(entity_tags(self.etag))
        if self.last_modified:
            out["If-Modified-Since"] = self.last_modified
        return out


# Suffixes a server's compression adds to the entity tag of the encoded representation:
# Apache's mod_deflate "-gzip" (DeflateAlterETag AddSuffix, its default) and mod_brotli
# "-br"; lighttpd's mod_deflate one per encoding.
_ENCODING_SUFFIXES = ("-gzip", "-br", "-deflate", "-zstd")


def entity_tags(etag: str) -> list[str]:
    """The tags to send in If-None-Match for a stored ETag: itself, and for the ETag of a
    compressed response (``"x-gzip"``) the uncompressed one (``"x"``) too.

    Apache hands out ``"x-gzip"`` with the compressed body but compares If-None-Match with
    the file's own ``"x"`` (a known Apache bug, unfixed in 2.4), so a recrawl sending only what
    it got never gets a 304 from Debian's default Apache. RFC 9110 §13.1.2 allows a list;
    a server matching either tag has the representation we hold (the one tag for two
    encodings of one file)."""
    tags = [etag]
    for suffix in _ENCODING_SUFFIXES:
        if etag.endswith(suffix + '"'):
            tags.append(etag[: -len(suffix) - 1] + '"')
            break
    return tags


def kept_validators(
    status: int | None, etag: str | None, last_modified: str | None, held: Validator | None
) -> tuple[str | None, str | None]:
    """The validators to store with a response: its own, and for a ``304`` to a
    conditional request those of the copy held where it repeats none.

    RFC 9110 §15.4.5: a 304 *should* repeat the ETag and may omit the rest; RFC 9111 §4.3.4:
    the held response's header fields are updated with those the 304 carries, and the others
    kept. Storing the 304's bare headers lost the entity tag: the next recrawl sent only
    If-Modified-Since (or nothing), and a server comparing tags answered 200 again."""
    if status != 304 or held is None:
        return etag, last_modified
    return etag or held.etag, last_modified or held.last_modified


def conditional_batch(config: str) -> bool:
    """Whether a batch (its config JSON) is a recrawl that sends conditional requests."""
    info = recrawl_info(config)
    return bool(info and info.get("conditional"))


def validators_for(store: CrawlStore, url_ids: Iterable[int]) -> dict[int, Validator]:
    """Validators of the URLs whose last fetch was a download with an ETag or a date.

    Every kind of document the crawl stores counts (HTML, text, XML, PDF …: any 200 with
    its content hash), not HTML alone: the others would be downloaded again at each
    recrawl. A URL whose last fetch failed, or whose server gave no validator, is fetched
    without condition; its change is then told by the payload hash.
    """
    out: dict[int, Validator] = {}
    for url_id, row in store.last_fetches(url_ids).items():
        downloaded = row.status in (200, 304)
        if downloaded and row.content_sha1 and (row.etag or row.last_modified):
            out[url_id] = Validator(row.id, row.content_sha1, row.etag, row.last_modified)
    return out
