"""Build small crawl directories through the store's public API (never raw SQL inserts), so the
statistics, evaluation and report tests follow the store's schema as it changes.

    from stats.crawl_builder import Page, build_crawl
    out = build_crawl(tmp_path / "c", [Page("http://a.test/", depth=0), Page("http://a.test/x")])
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dustless.store import (
    WARC_DIR,
    FetchRecord,
    HostInfo,
    NewSeed,
    NewURL,
    SQLiteStore,
    URLState,
    WarcWriter,
)

T0 = 1_700_000_000.0


@dataclass
class Page:
    """One fetched URL. ``doc`` names the content (same doc → same SHA-1); ``size`` pads it."""

    url: str
    state: str = "OK"
    status: int | None = 200
    doc: str | None = None
    depth: int = 1
    size: int = 0
    links: tuple[int, int, int] = (0, 1, 0)  # h, a, f
    internal: int = 1
    location: str | None = None
    at: float = 0.0  # seconds after T0
    mime: str | None = "text/html"
    extra_fetches: Sequence[str] = field(default=())  # earlier failed states (retries)


def _host(url: str) -> str:
    rest = url.split("://", 1)[1]
    return rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].split(":", 1)[0]


def payload(page: Page) -> bytes:
    body = f"<html><body>{page.doc or page.url}</body></html>".encode()
    if page.size > len(body):
        body += b" " * (page.size - len(body))
    return body


def build_crawl(
    out: Path,
    pages: Sequence[Page],
    *,
    config: dict[str, object] | None = None,
    batch_config: str | None = None,
    store: SQLiteStore | None = None,
) -> Path:
    """Write ``pages`` as one batch of a crawl in ``out`` (appending when it exists)."""
    own = store is None
    st = store or SQLiteStore(out)
    batch = st.start_batch(batch_config or json.dumps(config or {"policy": "rfc3986"}), T0)
    seeds = [p for p in pages if p.depth == 0]
    seed_ids = dict(
        zip(
            (p.url for p in seeds),
            (sid for sid, _ in st.add_seeds([NewSeed(p.url, p.url, _host(p.url)) for p in seeds])),
            strict=True,
        )
    )
    first_seed = next(iter(seed_ids.values()), None)
    identities = [p.url if batch_config is None else f"probe {p.url}" for p in pages]
    st.add_urls(
        [
            NewURL(
                p.url,
                ident,
                _host(p.url),
                p.depth,
                "s" if p.depth == 0 else "a",
                seed_ids.get(p.url, first_seed),
                state=URLState.QUEUED,
            )
            for p, ident in zip(pages, identities, strict=True)
        ]
    )
    ids = {
        ident: i
        for i, ident in st.query(
            f"SELECT id, identity FROM urls WHERE identity IN ({','.join('?' * len(identities))})",
            identities,
        )
    }
    warc = WarcWriter(out / WARC_DIR, committed_ends=st.warc_ends())
    records = []
    for p, ident in zip(pages, identities, strict=True):
        url_id = ids[ident]
        for k, state in enumerate(p.extra_fetches):
            records.append(FetchRecord(url_id, T0 + p.at - 1 - k, state, url_state=URLState.QUEUED))
        sha = size = stored = ref = None
        if p.status is not None and p.state in ("OK", "code", "soft404"):
            body = payload(p)
            sha = hashlib.sha1(body).hexdigest()
            head = f"HTTP/1.1 {p.status} X\r\nContent-Type: {p.mime}\r\n\r\n".encode()
            refs = warc.write_response(p.url, head, body, fetched_at=T0 + p.at)
            ref, size, stored = refs.response, len(body), refs.response.length
        h, a, f = p.links
        records.append(
            FetchRecord(
                url_id,
                T0 + p.at,
                p.state,
                status=p.status,
                mime=p.mime,
                size_raw=size,
                size_stored=stored,
                elapsed=0.01,
                content_sha1=sha,
                links_h=h,
                links_a=a,
                links_f=f,
                links_internal=p.internal if p.state == "OK" else 0,
                location=p.location,
                warc=ref,
                batch=batch.number,
            )
        )
    warc.close()
    st.record_fetches(records)
    st.update_hosts([HostInfo(h) for h in sorted({_host(p.url) for p in pages})])
    st.end_batch(batch.number, T0 + max((p.at for p in pages), default=0) + 1)
    st.commit()
    if own:
        st.close()
    return out
