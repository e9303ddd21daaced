"""Time the seed 000 metrics core on 1,000,000 synthetic URLs, for every factor and method.

`evaluate` must get through 1,000,000 fetches in under 60 s. This measures the pure core
(`dustless.analysis.evaluate`) with cheap string methods standing in for the normalizer, and
prints it next to its peer measured in the same run: the bare cost of calling every factor's
key once per URL (the floor any implementation pays). Run by hand: `make bench` or
`.venv/bin/python bench/analysis_bench.py [N]`.
"""

from __future__ import annotations

import random
import re
import resource
import sys
import time

from dustless.analysis import (
    FACTOR_METHODS,
    CrawlIndex,
    Factor,
    MethodSpec,
    evaluate,
    recommend,
)

_SLASHES = re.compile(r"(?<!:)//+")


def _cut(url: str) -> int:
    i = url.find("/", 8)
    return len(url) if i < 0 else i


def _path_end(url: str) -> int:
    for c in "?#":
        j = url.find(c)
        if j >= 0:
            return j
    return len(url)


def lower_path(url: str) -> str:
    i = _cut(url)
    return url[:i] + url[i:].lower()


def upper_path(url: str) -> str:
    i = _cut(url)
    return url[:i] + url[i:].upper()


def add_slash(url: str) -> str:
    j = _path_end(url)
    return url if url[j - 1] == "/" else url[:j] + "/" + url[j:]


def remove_slash(url: str) -> str:
    j = _path_end(url)
    return url[: j - 1] + url[j:] if url[j - 1] == "/" and j - 1 > _cut(url) else url


def add_www(url: str) -> str:
    return url if url.startswith("http://www.") else "http://www." + url[7:]


def remove_www(url: str) -> str:
    return "http://" + url[11:] if url.startswith("http://www.") else url


_DEFAULTS = ("index.htm", "index.html", "default.htm")


def remove_default(url: str) -> str:
    j = _path_end(url)
    path = url[:j]
    for d in _DEFAULTS:
        if path.endswith("/" + d):
            return path[: -len(d)] + url[j:]
    return url


def sort_query(url: str) -> str:
    base, q, query = url.partition("?")
    if not q:
        return url
    query, h, frag = query.partition("#")
    return base + "?" + "&".join(sorted(query.split("&"))) + h + frag


def remove_fragment(url: str) -> str:
    return url.partition("#")[0]


def collapse_slashes(url: str) -> str:
    return _SLASHES.sub("/", url) if "//" in url[8:] else url


def remove_tracking(url: str) -> str:
    base, q, query = url.partition("?")
    if not q or "utm_" not in query:
        return url
    kept = [p for p in query.split("&") if not p.startswith("utm_")]
    return base + ("?" + "&".join(kept) if kept else "")


APPLY = {
    ("path-case", "lowercase"): lower_path,
    ("path-case", "uppercase"): upper_path,
    ("trailing-slash", "add"): add_slash,
    ("trailing-slash", "remove"): remove_slash,
    ("www", "add"): add_www,
    ("www", "remove"): remove_www,
    ("default-document", "remove"): remove_default,
    ("sort-query", "sort"): sort_query,
    ("fragment", "remove"): remove_fragment,
    ("collapse-slashes", "collapse"): collapse_slashes,
    ("tracking-params", "remove"): remove_tracking,
}


def factors() -> list[Factor]:
    out = []
    for name, methods in FACTOR_METHODS.items():
        specs = tuple(MethodSpec(m, APPLY.get((name, m)), steps) for m, steps in methods.items())
        out.append(Factor(name, specs))
    return out


def _variant(rnd: random.Random, url: str) -> str:
    """Another spelling of ``url`` that one of the factors may merge."""
    k = rnd.randrange(8)
    if k == 0:
        return lower_path(url) if rnd.random() < 0.5 else upper_path(url)
    if k == 1:
        return remove_slash(url) if url.endswith("/") else add_slash(url)
    if k == 2:
        return remove_www(url) if url.startswith("http://www.") else add_www(url)
    if k == 3:
        return url + rnd.choice(_DEFAULTS) if url.endswith("/") else url + "#top"
    if k == 4 and "?" in url:
        base, _, query = url.partition("?")
        parts = query.split("&")
        rnd.shuffle(parts)
        return base + "?" + "&".join(parts)
    if k == 5:
        return url.partition("#")[0] + "#sec" + str(rnd.randrange(3))
    if k == 6:
        i = _cut(url)
        return url[:i] + "/" + url[i:]
    return url + ("&" if "?" in url else "?") + "utm_source=feed"


def synthetic_rows(n: int, seed: int = 1) -> list[tuple[str, bool, bool, str | None]]:
    """n distinct URLs on n/50 hosts; ~30 % are other spellings of an earlier page."""
    rnd = random.Random(seed)
    rows: dict[str, tuple[str, bool, bool, str | None]] = {}
    hosts = [f"site{i}.test" for i in range(max(n // 50, 1))]
    bases: list[tuple[str, str]] = []
    while len(rows) < n:
        if bases and rnd.random() < 0.3:
            base, page = rnd.choice(bases)
            url = _variant(rnd, base)
            # 5 % of spellings are in truth another page (a false positive to catch).
            page = page if rnd.random() < 0.95 else url
        else:
            host = rnd.choice(hosts)
            if rnd.random() < 0.3:
                host = "www." + host
            kind = rnd.randrange(3)
            path = f"/Dir{rnd.randrange(30)}/Page{rnd.randrange(1000)}"
            if kind == 0:
                path += "/"
            elif kind == 1:
                path += f"?a={rnd.randrange(9)}&b={rnd.randrange(9)}"
            url = page = f"http://{host}{path}"
            bases.append((url, page))
        if url in rows:
            continue
        requested = rnd.random() < 0.9
        success = requested and rnd.random() < 0.85
        rows[url] = (url, requested, success, page if success else None)
    return list(rows.values())


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rows = synthetic_rows(n)
    fs = factors()

    c0, t0 = time.process_time(), time.perf_counter()
    index = CrawlIndex.from_rows(rows)
    t1 = time.perf_counter()
    result = evaluate(index, fs)
    t2 = time.perf_counter()
    rec = recommend(result, 0.01)
    c3, t3 = time.process_time(), time.perf_counter()

    # Peer: calling each factor's key once per URL, and nothing else.
    keys = [f.candidate_key() for f in fs]
    urls = list(index.urls)
    pc0, p0 = time.process_time(), time.perf_counter()
    for key in keys:
        list(map(key, urls))
    pc1, p1 = time.process_time(), time.perf_counter()

    core, core_cpu = t3 - t0, c3 - c0
    peer, peer_cpu = p1 - p0, pc1 - pc0
    print(f"{n:,} URLs, {len(fs)} factors, {len(result)} methods")
    print(f"  index {t1 - t0:6.2f} s   evaluate {t2 - t1:6.2f} s   recommend {t3 - t2:6.3f} s")
    print(f"  core  {core:6.2f} s wall {core_cpu:6.2f} s CPU")
    print(f"  peer  {peer:6.2f} s wall {peer_cpu:6.2f} s CPU (keys only)")
    print(f"  ratio core/peer (CPU) {core_cpu / peer_cpu:4.2f}")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS {peak_mib:,.0f} MiB (generator included)")
    for r in result:
        print(
            f"  {r.factor:17} {r.method:10} sets {r.sets:7,} requests {r.requests:8,}"
            f" redundancy {r.redundancy_rate:5.3f} loss {r.coverage_loss_rate:5.3f}"
            f"{'' if r.coverage_loss_measured else ' (estimate)'}"
        )
    print(f"  recommended at 1 % loss: {sorted(rec.steps)}")


if __name__ == "__main__":
    main()
