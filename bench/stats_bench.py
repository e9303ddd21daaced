"""Benchmark: ``dustless evaluate`` + ``dustless stats`` on a synthetic crawl of 1,000,000 fetches.

At the paper's scale both must stay interactive — under 60 s together on
this machine — parsing each URL once and grouping in SQL. This script

1. generates a crawl DB through the store's public API (``SQLiteStore.add_urls`` /
   ``record_fetches``, so it follows the schema): ``--fetches`` fetches over ~2,000 hosts,
   with the spellings seed 000 measures (path case on case-insensitive and case-sensitive
   hosts, trailing-slash redirects, ``www`` aliases, default documents) and seed 001's
   (parameter order, tracking parameters, doubled slashes), every network state, sizes,
   depths and link kinds;
2. runs ``stats`` and ``evaluate`` (the same functions as the CLI, with their defaults:
   near-duplicate content from the stored fingerprints, the crawler's reading of coverage
   loss, every row per host) in a fresh child process and prints the wall time of each and
   the child's peak RSS.

    .venv/bin/python bench/stats_bench.py                 # 1,000,000 fetches
    .venv/bin/python bench/stats_bench.py --fetches 100000 --keep /tmp/crawl100k
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

T0 = 1_700_000_000.0
STATES = (  # (state, status, weight): roughly seed 004 Table 2's mix
    ("code", 404, 5),
    ("code", 500, 1),
    ("cErr", None, 1),
    ("dTim", 200, 1),
    ("hTim", None, 1),
    ("robots", None, 1),
)


def _sha(doc: str) -> str:
    return hashlib.sha1(doc.encode()).hexdigest()


def _fingerprint(doc: str) -> bytes:
    """A stand-in for ``content_fingerprint``: 129 bytes, the same for the same text.

    A document written ``text|twin`` is the page ``text`` served with other bytes (a www
    twin whose links name its own host): another SHA-1, and the fingerprint of ``text``
    with 4 of its 128 values changed — a near duplicate, as the real ones are.
    """
    text, twin, _ = doc.partition("|")
    fp = bytearray(b"\x01" + hashlib.blake2b(text.encode(), digest_size=64).digest() * 2)
    if twin:
        for i in (3, 40, 77, 101):
            fp[i] ^= 0x5A
    return bytes(fp)


def _variants(rng: random.Random, host: str, i: int, iis: bool, www: bool) -> list[tuple]:
    """The URLs of one page with the spellings a real crawl meets: (url, doc|None, status)."""
    base = f"/dir{i % 97}/Page{i}"
    doc = f"{host}{base}"
    out = [(f"http://{host}{base}.html", doc, 200)]
    r = rng.random()
    if r < 0.08:  # path case: IIS serves both, Apache 404s the other spelling (000 §4.1)
        out.append((f"http://{host}{base.upper()}.html", doc if iis else None, 200 if iis else 404))
    elif r < 0.14:  # trailing slash: /dir → 301 → /dir/ (000 §4.2)
        out = [(f"http://{host}/d{i}", None, 301), (f"http://{host}/d{i}/", doc, 200)]
    elif r < 0.18 and www:  # www alias (000 §4.3), its links naming its own host: near twins
        twin = doc + "|twin" if rng.random() < 0.9 else doc + "x"
        out.append((f"http://{host[4:]}{base}.html", twin, 200))
    elif r < 0.22:  # default document (000 §4.4)
        out = [(f"http://{host}/s{i}/", doc, 200), (f"http://{host}/s{i}/index.html", doc, 200)]
    elif r < 0.26:  # parameter order (001)
        out = [
            (f"http://{host}/list?a={i}&b=2", doc, 200),
            (f"http://{host}/list?b=2&a={i}", doc, 200),
        ]
    elif r < 0.29:  # tracking parameters (001)
        out.append((f"http://{host}{base}.html?utm_source=x{i % 7}", doc, 200))
    elif r < 0.30:  # doubled slashes (001)
        out.append((f"http://{host}/dir{i % 97}//Page{i}.html", doc, 200))
    return out


def generate(out: Path, fetches: int, seed: int = 5) -> int:
    from dustless.store import FetchRecord, NewSeed, NewURL, SQLiteStore, URLState

    rng = random.Random(seed)
    store = SQLiteStore(out)
    batch = store.start_batch(json.dumps({"policy": "rfc3986", "bench": True}), T0)
    n_hosts = max(1, fetches // 500)
    seeds = store.add_seeds(
        [
            NewSeed(f"http://www.site{h}.test/", f"http://www.site{h}.test/", f"www.site{h}.test")
            for h in range(n_hosts)
        ]
    )
    seed_ids = [s for s, _ in seeds]
    made = 0
    page = 0
    next_id = 1
    while made < fetches:
        urls: list = []
        pending: list = []
        while len(urls) < 20_000 and made + len(urls) < fetches:
            h = page % n_hosts
            host = f"www.site{h}.test"
            iis = h % 3 == 0
            variants = _variants(rng, host, page, iis, www=True)
            if page < n_hosts:  # the seed document itself
                variants = [(f"http://{host}/", f"{host}/", 200)]
            depth = 0 if page < n_hosts else 1 + min(int(rng.expovariate(0.5)), 8)
            for url, doc, status in variants:
                state, st = ("OK", status) if doc is not None else ("code", status)
                if doc is not None and rng.random() < 0.08:
                    state, st, _w = rng.choices(STATES, [w for *_, w in STATES])[0]
                    doc = None
                u_host = url.split("/")[2]
                urls.append(
                    NewURL(
                        url,
                        url,
                        u_host,
                        depth,
                        "s" if depth == 0 else "a",
                        seed_ids[h],
                        state=URLState.QUEUED,
                    )
                )
                size = int(rng.lognormvariate(9.5, 1.1)) if doc is not None else None
                kind = rng.random()
                pending.append(
                    (
                        state,
                        st,
                        None if doc is None else _sha(doc),
                        None if doc is None else _fingerprint(doc),
                        size,
                        (int(kind < 0.3), int(kind < 0.95), int(kind > 0.97)),
                        f"http://{host}/d{page}/" if st == 301 else None,
                        T0 + (made + len(urls)) / 400.0,
                    )
                )
            page += 1
        inserted = store.add_urls(urls)
        ids = []
        for ok in inserted:
            ids.append(next_id if ok else None)
            next_id += 1 if ok else 0
        records = []
        for url_id, (state, st, sha, fp, size, (lh, la, lf), loc, at) in zip(
            ids, pending, strict=True
        ):
            if url_id is None:
                continue
            records.append(
                FetchRecord(
                    url_id,
                    at,
                    state,
                    status=st,
                    mime="text/html" if st else None,
                    size_raw=size,
                    size_stored=None if size is None else size // 3,
                    elapsed=0.05,
                    content_sha1=sha,
                    content_fp=fp,
                    links_h=lh * 3,
                    links_a=la * 12,
                    links_f=lf * 2,
                    links_internal=(la * 8) if state == "OK" else 0,
                    location=loc,
                    batch=batch.number,
                )
            )
        store.record_fetches(records)
        store.commit()
        made += len(records)
        if made >= fetches or not records:
            break
    store.end_batch(batch.number, T0 + made / 400.0)
    store.commit()
    store.close()
    return made


def measure(directory: str) -> dict[str, float]:
    from dustless.analysis._evaluate import evaluate_crawl
    from dustless.analysis._stats import crawl_stats
    from dustless.store import open_crawl

    out: dict[str, float] = {}
    with open_crawl(directory) as db:
        t, c = time.perf_counter(), time.process_time()
        crawl_stats(db)
        out["stats_s"] = time.perf_counter() - t
        out["stats_cpu_s"] = time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        ev = evaluate_crawl(db)  # near content, the crawler's reading, per-host rows
        out["evaluate_s"] = time.perf_counter() - t
        out["evaluate_cpu_s"] = time.process_time() - c
    out["urls"] = ev.urls
    out["host_rows"] = len(ev.host_rows)
    out["hosts"] = len({r.host for r in ev.host_rows})
    out["candidate_urls"] = sum(r.candidate_urls for r in ev.rows if r.method == "none")
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--fetches", type=int, default=1_000_000)
    ap.add_argument("--keep", metavar="DIR", help="write the crawl here and keep it")
    ap.add_argument("--reuse", action="store_true", help="reuse --keep DIR if it holds a crawl")
    ap.add_argument("--measure", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    with tempfile.TemporaryDirectory(prefix="dustless-bench-") as tmp:
        out = Path(args.keep or Path(tmp) / "crawl")
        if not (args.reuse and (out / "crawl.db").exists()):
            t = time.perf_counter()
            made = generate(out, args.fetches)
            print(f"generated {made:,} fetches in {time.perf_counter() - t:.1f} s -> {out}")
        t = time.perf_counter()
        child = subprocess.run(
            [sys.executable, __file__, "--measure", str(out)],
            check=True,
            capture_output=True,
            text=True,
        )
        total = time.perf_counter() - t
        r = json.loads(child.stdout)
        print(
            f"stats {r['stats_s']:.1f} s + evaluate {r['evaluate_s']:.1f} s = "
            f"{r['stats_s'] + r['evaluate_s']:.1f} s (child process {total:.1f} s with start-up; "
            f"target < 60 s); CPU {r['stats_cpu_s']:.1f} s + {r['evaluate_cpu_s']:.1f} s; "
            f"peak RSS {r['peak_rss_mb']:.0f} MB; "
            f"|U| = {int(r['urls']):,} URLs, {int(r['candidate_urls']):,} in candidate sets; "
            f"{int(r['host_rows']):,} per-host rows over {int(r['hosts']):,} hosts"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
