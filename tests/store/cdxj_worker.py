"""A crawler-shaped writer for the CDXJ crash test, killed with SIGKILL at a random moment.

Usage: python cdxj_worker.py OUTDIR. Loops for ever: write a few response records, record
their fetches, durable_commit (WARC fsync, DB commit), then sync the CDXJ index, as the
crawl's Recorder does; prints ``committed N`` after each commit.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from dustless.store import (
    CdxjIndex,
    FetchRecord,
    NewURL,
    SQLiteStore,
    WarcWriter,
    durable_commit,
)

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"


def main(outdir: Path) -> None:
    store = SQLiteStore(outdir)
    batch = store.resume_batch() or store.start_batch("{}", now=1.0)
    warc = WarcWriter(outdir / "warc", max_size=400_000, committed_ends=store.warc_ends())
    index = CdxjIndex.beside(outdir / "warc")
    n = store.query("SELECT count(*) FROM urls")[0][0]
    while True:
        urls = [f"http://a.test/{n + i}" for i in range(5)]
        n += 5
        store.add_urls([NewURL(u, u, "a.test", 0, "s") for u in urls])
        ids = {r.url: r.id for r in store.claim_queued(5)}
        for u in urls:
            seed = hashlib.sha256(u.encode()).digest()
            body = b"".join(hashlib.sha256(seed + bytes([i % 256])).digest() for i in range(900))
            refs = warc.write_response(u, HEAD, body, fetched_at=2.0 + n)
            store.record_fetches(
                [
                    FetchRecord(
                        ids[u], 2.0, "OK", 200, "text/html", content_sha1=refs.payload_sha1,
                        warc=refs.response, batch=batch.number,
                    )
                ]
            )  # fmt: skip
        durable_commit(store, warc)
        print("committed", store.query("SELECT count(*) FROM fetches")[0][0], flush=True)
        index.sync(wait=False)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
