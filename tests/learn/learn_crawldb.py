"""Small crawl directories built through the store's public API (no crawler needed).

``build_crawl(outdir, pages)`` writes ``crawl.db`` and ``warc/``: each page is
``(url, status, body, location)``; equal bodies share a payload SHA-1, and a repeat is
stored as a WARC revisit record, as the crawler does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from dustless.store import (
    FetchRecord,
    NewSeed,
    NewURL,
    SQLiteStore,
    WarcWriter,
    durable_commit,
)

Page = tuple[str, int, bytes | None, str | None]

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"


def _host(url: str) -> str:
    return url.split("/")[2].lower()


def build_crawl(outdir: Path, pages: Sequence[Page], *, seed_url: str | None = None) -> Path:
    outdir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(outdir)
    batch = store.start_batch('{"policy": "standard"}', now=1_700_000_000.0)
    warc = WarcWriter(outdir / "warc")
    seed = seed_url or pages[0][0]
    [(seed_id, _)] = store.add_seeds([NewSeed(seed, seed, _host(seed))])
    store.add_urls(
        [NewURL(url, url, _host(url), 1, "a", seed_id) for url, *_ in dict.fromkeys(pages)]
    )
    ids = {row[1]: row[0] for row in store.query("SELECT id, url FROM urls")}
    first: dict[str, tuple[int, str, float]] = {}  # sha1 -> fetch id, url, time
    t = 1_700_000_100.0
    for url, status, body, location in pages:
        t += 1.0
        record: FetchRecord
        if body is None:
            head = f"HTTP/1.1 {status} X\r\nLocation: {location or ''}\r\n\r\n".encode()
            refs = warc.write_response(url, head, b"", fetched_at=t)
            record = FetchRecord(
                ids[url], t, "code", status, None, location=location, warc=refs.response,
                batch=batch.number,
            )  # fmt: skip
        else:
            sha1 = hashlib.sha1(body).hexdigest()
            state = "OK" if status == 200 else "code"
            if sha1 in first:
                fid, ref_url, ref_t = first[sha1]
                refs = warc.write_revisit(
                    url, HEAD, sha1, fetched_at=t, refers_to_uri=ref_url, refers_to_date=ref_t
                )
                record = FetchRecord(
                    ids[url], t, state, status, "text/html", size_raw=len(body),
                    content_sha1=sha1, revisit_of=fid, warc=refs.response, batch=batch.number,
                )  # fmt: skip
            else:
                refs = warc.write_response(url, HEAD, body, fetched_at=t)
                record = FetchRecord(
                    ids[url], t, state, status, "text/html", size_raw=len(body),
                    content_sha1=sha1, warc=refs.response, batch=batch.number,
                )  # fmt: skip
        [fid] = store.record_fetches([record])
        if body is not None and record.revisit_of is None:
            first.setdefault(record.content_sha1 or "", (fid, url, t))
    durable_commit(store, warc)
    store.end_batch(batch.number, t + 1)
    warc.close()
    store.close()
    return outdir
