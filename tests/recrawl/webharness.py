"""The test web's truth for the "Must hold" experiments: each page's canonical URL and true
change period (``TRUTH.rates``), and a plain fetch of every page to measure freshness."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from dustless.testweb import read_rates, read_truth
from testweb_fixture import LoopbackClient, TestWeb


@dataclass(frozen=True)
class TruePage:
    url: str
    rid: str
    period: int  # days between changes; 0 = never

    @property
    def rate(self) -> float:
        return 1.0 / self.period if self.period else 0.0


def true_pages(web: TestWeb) -> list[TruePage]:
    """One canonical URL per content resource, with its true change period."""
    rates = read_rates(web.truth_path)
    out: dict[str, TruePage] = {}
    for row in read_truth(web.truth_path):
        if row.status == 200 and row.rid in rates and row.rid not in out:
            out[row.rid] = TruePage(row.url, row.rid, rates[row.rid][0])
    return sorted(out.values(), key=lambda p: p.url)


@dataclass(frozen=True)
class Got:
    status: int
    sha1: str | None
    etag: str | None


async def _fetch(urls: Sequence[str], etags: dict[str, str]) -> dict[str, Got]:
    out: dict[str, Got] = {}
    async with LoopbackClient() as client:
        sem = asyncio.Semaphore(16)

        async def one(url: str) -> None:
            headers = {"If-None-Match": etags[url]} if url in etags else {}
            async with sem:
                r = await client.get(url, headers=headers)
            sha = hashlib.sha1(r.body).hexdigest() if r.status == 200 else None
            out[url] = Got(r.status, sha, r.headers.get("ETag"))

        await asyncio.gather(*(one(u) for u in urls))
    return out


def fetch(urls: Sequence[str], etags: dict[str, str] | None = None) -> dict[str, Got]:
    return asyncio.run(_fetch(urls, etags or {}))
