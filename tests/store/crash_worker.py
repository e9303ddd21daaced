"""A crawler-shaped writer for the crash test: run as a subprocess, killed with SIGKILL.

Usage: python crash_worker.py OUTDIR. It resumes whatever OUTDIR holds, then loops: claim a
window of URLs, write a response record per URL, record the fetches, add discovered URLs,
and every few pages fsync the WARC and commit the DB, printing ``committed N`` (N = fetches
in the DB) after each commit. It never stops by itself.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from dustless.store import (
    FetchRecord,
    NewURL,
    SQLiteStore,
    WarcWriter,
    durable_commit,
)

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"


def body_for(url: str) -> bytes:
    # Big and poorly compressible, so the kill often lands in the middle of a write.
    seed = hashlib.sha256(url.encode()).digest()
    return b"".join(hashlib.sha256(seed + bytes([i % 256, i // 256])).digest() for i in range(3000))


def main(outdir: Path) -> None:
    store = SQLiteStore(outdir)
    batch = store.resume_batch() or store.start_batch("{}", now=1.0)
    store.requeue_in_flight()
    warc = WarcWriter(outdir / "warc", max_size=2_000_000, committed_ends=store.warc_ends())
    # The store's unique index is URL-seen, as in the crawl: on resume the root is known.
    store.add_urls([NewURL("http://a.test/0", "http://a.test/0", "a.test", 0, "s")])
    durable_commit(store, warc)
    pages = 0
    while True:
        window = store.claim_queued(4)
        for u in window:
            body = body_for(u.url)
            refs = warc.write_response(
                u.url, HEAD, body, fetched_at=2.0, request=b"GET / HTTP/1.1\r\n\r\n"
            )
            store.record_fetches(
                [
                    FetchRecord(
                        u.id, 2.0, "OK", 200, "text/html", size_raw=len(body),
                        content_sha1=refs.payload_sha1, warc=refs.response,
                        warc_request=refs.request, batch=batch.number,
                    )
                ]
            )  # fmt: skip
            n = int(u.url.rsplit("/", 1)[1])
            children = [f"http://a.test/{c}" for c in (2 * n + 1, 2 * n + 2)]
            store.add_urls([NewURL(c, c, "a.test", u.depth + 1, parent_id=u.id) for c in children])
            pages += 1
            if pages % 3 == 0:
                durable_commit(store, warc)
                (count,) = store.query("SELECT count(*) FROM fetches")[0]
                print(f"committed {count}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
