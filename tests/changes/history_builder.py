"""Build multi-batch crawl directories through the store's public API (no raw SQL inserts).

from changes.history_builder import Fetch, build_batches
out = build_batches(tmp_path / "c", [
    (0.0, [Fetch("http://a.kr/", depth=0, doc="v1")]),
    (2.0, [Fetch("http://a.kr/", depth=0, doc="v2")]),     # batch 2, two days later
])
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dustless.store import FetchRecord, NewSeed, NewURL, SQLiteStore, URLState

T0 = 1_700_000_000.0
DAY = 86_400.0


@dataclass(frozen=True)
class Fetch:
    """One URL's last fetch in a batch; ``doc`` names the content (same doc, same SHA-1)."""

    url: str
    depth: int = 1
    state: str = "OK"
    status: int | None = 200
    doc: str = "x"
    links: tuple[int, int, int] = (0, 1, 0)  # h, a, f
    retries: int = 0  # failed fetches in the same batch before this one
    revisit: bool = False  # same payload as an earlier capture: links not extracted


def _host(url: str) -> str:
    # As the engine stores it: the authority, with a port other than the scheme's default.
    return url.split("://", 1)[1].split("/", 1)[0]


def sha1(doc: str) -> str:
    return hashlib.sha1(f"<html>{doc}</html>".encode()).hexdigest()


def build_batches(
    out: Path, batches: Sequence[tuple[float, Sequence[Fetch]]], *, probe_after: int | None = None
) -> Path:
    """One batch per ``(day, fetches)``, its batch time T0 + day·86,400 s."""
    st = SQLiteStore(out)
    try:
        for k, (day, fetches) in enumerate(batches, start=1):
            t = T0 + day * DAY
            b = st.start_batch(json.dumps({"policy": "standard"}), t + 5, batch_time=t)
            seeds = [f for f in fetches if f.depth == 0]
            st.add_seeds([NewSeed(f.url, f.url, _host(f.url)) for f in seeds])
            st.add_urls(
                [
                    NewURL(f.url, f.url, _host(f.url), f.depth, "s" if f.depth == 0 else "a")
                    for f in fetches
                ]
            )
            ids = dict(st.query("SELECT identity, id FROM urls"))
            records = []
            for f in fetches:
                for r in range(f.retries):
                    records.append(
                        FetchRecord(ids[f.url], t + r, "cTim", url_state=URLState.QUEUED)
                    )
                ok_body = f.state == "OK" or f.status == 304
                records.append(
                    FetchRecord(
                        ids[f.url],
                        t + 10,
                        f.state,
                        status=f.status,
                        mime="text/html",
                        content_sha1=sha1(f.doc) if ok_body else None,
                        links_h=f.links[0],
                        links_a=f.links[1],
                        links_f=f.links[2],
                        revisit_of=1 if f.revisit else None,
                        batch=b.number,
                    )
                )
            st.record_fetches(records)
            st.end_batch(b.number, t + 100)
            if probe_after == k:
                p = st.start_batch(json.dumps({"kind": "evaluate-fetch"}), t + 200)
                st.add_urls([NewURL(fetches[0].url + "probe", "probe", _host(fetches[0].url), 1)])
                (pid,) = st.query("SELECT id FROM urls WHERE identity = 'probe'")[0]
                st.record_fetches([FetchRecord(pid, t + 201, "OK", content_sha1=sha1("p"))])
                st.end_batch(p.number, t + 202)
            st.commit()
    finally:
        st.close()
    return out
