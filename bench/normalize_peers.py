"""dustless normalize vs its peers, same process, same run, same 200,000 URLs.

Run by hand (``make bench`` or ``.venv/bin/python bench/normalize_peers.py``). Prints URLs/s
for each normalizer and the ratios, next to their targets:

* dustless ``rfc3986`` ≥ 3x ``w3lib.url.canonicalize_url`` and ≥ 0.5x ``ada_url.normalize_url``;
* the ``dustless normalize`` command over a 200,000-line file ≥ 2x a Python process looping
  ``w3lib.url.canonicalize_url`` over the same file (start-up and I/O included).

The URLs are generated deterministically (fixed seed) with what real link lists contain:
mixed case, explicit ports, percent-escapes (unreserved and reserved, either hex case), dot
segments, doubled slashes, default documents, www flips, shuffled and tracking parameters,
fragments, IDN hosts and IP hosts.
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

N_URLS = 200_000
SEED = 20051126  # fixed: every run times the same URLs

_WORDS = [
    "news",
    "sports",
    "article",
    "story",
    "pubs",
    "journals",
    "membership",
    "benefits",
    "products",
    "catalog",
    "search",
    "list",
    "view",
    "board",
    "bbs",
    "cafe",
    "blog",
    "wiki",
    "docs",
    "api",
    "v1",
    "v2",
    "images",
    "photo",
    "gallery",
    "shop",
    "item",
    "cart",
    "login",
    "members",
    "archive",
    "2003",
    "2004",
    "2005",
    "korea",
    "seoul",
    "data",
    "report",
]
_TLDS = ("com", "org", "net", "co.kr", "or.kr", "ac.kr", "go.kr", "kr", "de", "jp", "io")
_IDN = ("bücher", "münchen", "한국", "서울대학교", "日本語", "пример", "café", "straße")
_EXTS = ("", "", "", ".html", ".htm", ".php", ".asp", ".jsp", ".pdf", ".aspx")
_DEFAULT_DOCS = ("index.html", "index.htm", "default.htm", "default.asp", "index.php")
_TRACKERS = (
    "utm_source=news",
    "utm_medium=email",
    "utm_campaign=spring",
    "fbclid=IwAR3x",
    "gclid=Cj0KCQ",
)
_PARAMS = ("id", "page", "sort", "q", "lang", "cat", "no", "mode", "board", "article")


def _host(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.04:
        return ".".join(str(rng.randint(1, 223)) for _ in range(4))
    if r < 0.05:
        return f"[2001:DB8:{rng.randint(0, 0xFFFF):X}::{rng.randint(1, 0xFFFF):x}]"
    if r < 0.09:
        name = rng.choice(_IDN)
    else:
        name = rng.choice(_WORDS) + rng.choice(
            ("", "", str(rng.randint(1, 999)), "-" + rng.choice(_WORDS))
        )
    host = f"{name}.{rng.choice(_TLDS)}"
    if rng.random() < 0.5:
        host = "www." + host
    elif rng.random() < 0.15:
        host = rng.choice(_WORDS) + "." + host
    return host


def _segment(rng: random.Random) -> str:
    word = rng.choice(_WORDS)
    r = rng.random()
    if r < 0.06:
        return "%7E" + word if rng.random() < 0.5 else "%7e" + word
    if r < 0.09:
        return word + rng.choice(("%2F", "%2f", "%20", "%3D", "%41", "%C3%A9"))
    if r < 0.15:
        return word.capitalize()
    if r < 0.17:
        return word + " x"  # a space: must be encoded
    return word


def _site(rng: random.Random) -> tuple[str, str, str]:
    scheme = rng.choice(("http", "http", "http", "https", "https"))
    port = ""
    r = rng.random()
    if r < 0.08:
        port = ":80" if scheme == "http" else ":443"
    elif r < 0.11:
        port = f":{rng.choice((8080, 8000, 8443, 3000))}"
    return scheme, _host(rng), port


def _flip(rng: random.Random, scheme: str, host: str) -> tuple[str, str]:
    """How the same site gets spelled in links: scheme case, host case, www added/dropped."""
    r = rng.random()
    if r < 0.03:
        scheme = scheme.upper() if rng.random() < 0.5 else scheme.capitalize()
    elif r < 0.06 and not host.startswith("["):
        host = "".join(c.upper() if rng.random() < 0.5 else c for c in host)
    elif r < 0.09 and not host[0].isdigit() and not host.startswith("["):
        host = host[4:] if host.startswith("www.") else "www." + host
    return scheme, host


def make_url(rng: random.Random, site: tuple[str, str, str]) -> str:
    scheme, host = _flip(rng, site[0], site[1])
    port = site[2]
    segments = [_segment(rng) for _ in range(rng.randint(0, 4))]
    r = rng.random()
    if r < 0.06 and segments:
        segments.insert(rng.randrange(len(segments)), ".")
    elif r < 0.12 and segments:
        segments.insert(rng.randrange(len(segments)), rng.choice(_WORDS) + "/..")
    elif r < 0.16 and segments:
        segments.insert(rng.randrange(len(segments)), "")  # a "//"
    path = "/" + "/".join(segments)
    r = rng.random()
    if r < 0.1:
        path = path.rstrip("/") + "/" + rng.choice(_DEFAULT_DOCS)
    elif r < 0.35 and segments:
        path += rng.choice(_EXTS)
    elif r < 0.55 and segments:
        path += "/"
    if not segments and rng.random() < 0.3:
        path = ""
    query = ""
    if rng.random() < 0.45:
        params = [f"{rng.choice(_PARAMS)}={rng.randint(0, 9999)}" for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            params.append(rng.choice(_TRACKERS))
        if rng.random() < 0.1:
            params.append(rng.choice(_PARAMS) + "=")
        if rng.random() < 0.05:
            params.append("q=a%2Bb%26c")
        rng.shuffle(params)
        query = "?" + "&".join(params)
    fragment = ""
    if rng.random() < 0.12:
        fragment = "#" + rng.choice(("top", "section1", "chap1", "comments", ""))
    return f"{scheme}://{host}{port}{path}{query}{fragment}"


N_SITES = 5_000


def make_urls(n: int = N_URLS, seed: int = SEED) -> list[str]:
    """``n`` URLs over ``N_SITES`` sites; a few sites get most links (Zipf-like weights), as
    in a crawl's link lists, and every spelling variation is applied per link."""
    rng = random.Random(seed)
    sites = [_site(rng) for _ in range(N_SITES)]
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(N_SITES)]
    picks = rng.choices(sites, weights=weights, k=n)
    return [make_url(rng, site) for site in picks]


def _time(fn: Callable[[str], object], urls: list[str]) -> tuple[float, int]:
    """CPU seconds spent normalizing ``urls`` (process time, not wall time: the machine may
    be shared, and other processes' load must not count against whoever runs last)."""
    errors = 0
    gc.collect()
    start = time.process_time()
    for url in urls:
        try:
            fn(url)
        except Exception:
            errors += 1
    return time.process_time() - start, errors


def _peers() -> dict[str, Callable[[], Callable[[str], object]]]:
    """name -> factory. dustless gets a fresh Normalizer for every timed run, so its
    per-host cache starts cold each time, as it would in a new process."""
    from dustless.url import Normalizer

    peers: dict[str, Callable[[], Callable[[str], object]]] = {
        "dustless rfc3986": lambda: Normalizer("rfc3986").normalize,
        "dustless paper": lambda: Normalizer("paper").normalize,
    }
    try:
        import ada_url

        peers["ada_url.normalize_url"] = lambda: ada_url.normalize_url
    except ImportError:
        pass
    try:
        from w3lib.url import canonicalize_url

        peers["w3lib canonicalize_url"] = lambda: canonicalize_url
    except ImportError:
        pass
    try:
        from url_normalize import url_normalize

        peers["url_normalize"] = lambda: url_normalize
    except ImportError:
        pass
    try:
        from courlan import normalize_url

        peers["courlan.normalize_url"] = lambda: normalize_url
    except ImportError:
        pass
    return peers


def bench_in_process(urls: list[str], repeats: int = 2, chunks: int = 10) -> dict[str, float]:
    """Each normalizer over the same URLs, interleaved chunk by chunk (so that a change in
    the machine's load hits every peer alike); per chunk the best of ``repeats`` passes."""
    peers = _peers()
    size = -(-len(urls) // chunks)
    parts = [urls[i : i + size] for i in range(0, len(urls), size)]
    best: dict[str, list[float]] = {name: [float("inf")] * len(parts) for name in peers}
    errors: dict[str, int] = dict.fromkeys(peers, 0)
    for rep in range(repeats):
        fns = {name: factory() for name, factory in peers.items()}  # cold caches each pass
        names = list(peers)
        for i, part in enumerate(parts):
            names = names[1:] + names[:1]  # rotate who goes first
            for name in names:
                seconds, errs = _time(fns[name], part)
                best[name][i] = min(best[name][i], seconds)
                if rep == 0:
                    errors[name] += errs
    rates = {name: len(urls) / sum(times) for name, times in best.items()}
    print(f"in-process, {len(urls):,} URLs, CPU time, best of {repeats} cold passes per chunk")
    for name, rate in rates.items():
        note = f"  ({errors[name]:,} errors)" if errors[name] else ""
        print(f"  {name:26s} {rate:>12,.0f} URLs/s{note}")
    return rates


_W3LIB_LOOP = """
import sys
from w3lib.url import canonicalize_url
out = sys.stdout
for line in sys.stdin:
    out.write(canonicalize_url(line.rstrip("\\n")) + "\\n")
"""


def bench_process(urls: list[str], repeats: int = 3) -> tuple[float, float, float, float]:
    """Whole processes over a file: (ours, w3lib) as best wall seconds and best CPU seconds
    (user + system of the child, which the machine's other load does not inflate)."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp, "urls.txt")
        data.write_text("\n".join(urls) + "\n", encoding="utf-8")
        python = sys.executable

        def run(cmd: list[str]) -> tuple[float, float]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            with data.open("rb") as stdin:
                proc = subprocess.run(cmd, stdin=stdin, stdout=subprocess.DEVNULL, check=False)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"{cmd} exited {proc.returncode}")
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            return wall, cpu

        ours_cmd = [python, "-m", "dustless", "normalize"]
        w3_cmd = [python, "-c", _W3LIB_LOOP]
        ours: list[tuple[float, float]] = []
        w3: list[tuple[float, float]] = []
        for _ in range(repeats):  # interleaved, as in bench_in_process
            ours.append(run(ours_cmd))
            w3.append(run(w3_cmd))
    return (
        min(w for w, _c in ours),
        min(w for w, _c in w3),
        min(c for _w, c in ours),
        min(c for _w, c in w3),
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=N_URLS, help="number of URLs (default 200,000)")
    parser.add_argument(
        "--no-process", action="store_true", help="skip the whole-process comparison"
    )
    args = parser.parse_args()
    urls = make_urls(args.n)
    rates = bench_in_process(urls)
    ours = rates["dustless rfc3986"]
    print("ratios (target):")
    if "w3lib canonicalize_url" in rates:
        print(f"  rfc3986 / w3lib          {ours / rates['w3lib canonicalize_url']:6.2f}x  (>= 3)")
    if "ada_url.normalize_url" in rates:
        print(f"  rfc3986 / ada_url        {ours / rates['ada_url.normalize_url']:6.2f}x  (>= 0.5)")
    for name in ("url_normalize", "courlan.normalize_url"):
        if name in rates:
            print(f"  rfc3986 / {name:22s} {ours / rates[name]:6.2f}x")
    if "dustless paper" in rates and "w3lib canonicalize_url" in rates:
        ratio = rates["dustless paper"] / rates["w3lib canonicalize_url"]
        print(f"  paper / w3lib            {ratio:6.2f}x")
    if not args.no_process:
        ours_wall, w3_wall, ours_cpu, w3_cpu = bench_process(urls)
        print(f"whole process over {len(urls):,} lines (best of 3):   wall      CPU")
        print(f"  dustless normalize              {ours_wall:7.2f} s {ours_cpu:7.2f} s")
        print(f"  python + w3lib loop             {w3_wall:7.2f} s {w3_cpu:7.2f} s")
        print(
            f"  speed-up                        {w3_wall / ours_wall:7.2f}x "
            f"{w3_cpu / ours_cpu:7.2f}x  (>= 2)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
