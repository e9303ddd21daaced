"""Where a crawl's CPU goes, stage by stage (issue 28's CPU budget per stage).

One dustless crawl of crawl_peers.py's benchmark web (the ``clean`` test web, 20,000 pages
over 50 hosts, no delay, the same options), run in this process on the crawler's core, the
test web in its own process on the other core. A sampling profiler of our own, on the
process's CPU clock: ``setitimer(ITIMER_PROF)`` fires every ``--interval`` of CPU the
process spends, in any thread; at each tick every thread's CPU since the last tick (its
``pthread_getcpuclockid`` clock) is charged to the stage its current stack is in. So the
commits run in a worker thread (``asyncio.to_thread``) are counted where they are, and the
time spent in C (selectolax, httptools, sqlite3, hashing, zlib) goes to the Python frame that
called it. Unlike cProfile it costs no time per call, so call-heavy stages are not inflated;
the profiler's own time is measured and left out.

A stack's stage is the first frame, from the innermost out, whose module (and for
crawl/record.py, function) a rule below names; an asyncio, selectors or threading frame met
first makes it the event loop's (its transports' socket calls included), and a module's body
(an import) start-up's. The rules are the table ``STAGES``: what each stage holds is said
there, and ``--top N`` prints the N frames that cost each stage most.

Run: ``.venv/bin/python bench/crawl_stages.py`` (``--pages``/``--hosts`` to scale down;
``--store none`` profiles that mode where ``dustless crawl --help`` lists it;
``--realdocs postgresql-doc-15,git-doc`` profiles bench/realdocs_peers.py's crawl of real
documentation pages from nginx instead).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from types import CodeType, FrameType

from crawl_peers import CRAWLER_CPU, Server, pin, store_none

#: (stage, what it holds, path fragments of its modules). Matched from the innermost frame out;
#: a fragment ending in ":" names functions of crawl/record.py (see _RECORD_WARC).
STAGES: list[tuple[str, str, tuple[str, ...]]] = [
    ("fetch (HTTP/1.1 client)", "dustless.fetch (httptools, DNS cache, limits), crawl/net.py",
     ("/dustless/fetch/", "/dustless/crawl/net.py", "/httptools/")),
    ("robots.txt", "dustless.robots: parse and decide", ("/dustless/robots/",)),
    ("link extraction (HTML parse)", "extract/_links, _charset, _guard, _prepare, _canonical: "
     "selectolax's parse and the walk for links",
     ("/dustless/extract/_links.py", "/dustless/extract/_charset.py",
      "/dustless/extract/_guard.py", "/dustless/extract/_prepare.py",
      "/dustless/extract/_canonical.py",
      "/dustless/extract/_formatting.py", "/selectolax/")),
    ("fingerprint", "extract/_fingerprint, _maincontent (visible text, shingles)",
     ("/dustless/extract/_fingerprint.py", "/dustless/extract/_maincontent.py")),
    ("page outcome", "crawl/page.py, soft404.py, redirect.py: what a fetched page means",
     ("/dustless/crawl/page.py", "/dustless/crawl/soft404.py", "/dustless/crawl/redirect.py")),
    ("resolution + normalization", "dustless.url: resolve each link, normalize, split",
     ("/dustless/url/", "/ada_url/")),
    ("filter + scope per link", "crawl/discover, filter, scope: which links are candidates",
     ("/dustless/crawl/discover.py", "/dustless/crawl/filter.py", "/dustless/crawl/scope.py")),
    ("admission + URL-seen", "crawl/admission, store/_admit, _sqlite_work (URL-seen, batches)",
     ("/dustless/crawl/admission.py", "/dustless/store/_admit.py",
      "/dustless/store/_sqlite_work.py", "/dustless/crawl/_orders.py",
      "/dustless/crawl/spellings.py")),
    ("WARC encoding", "store/_warc, _cdxj, _index; record.py's response (digests, content-seen)",
     ("/dustless/store/_warc.py", "/dustless/store/_cdxj.py", "/dustless/store/_index.py",
      "record.py:")),
    ("DB writes + commits", "store/_sqlite*, _rows; record.py's rows and commits (fsync)",
     ("/dustless/store/", "/dustless/crawl/record.py", "/sqlite3/")),
    ("progress", "crawl/progress.py: counters and the progress line",
     ("/dustless/crawl/progress.py",)),
    ("frontier + hosts", "dustless.frontier, crawl/hosts.py: queues, politeness clock",
     ("/dustless/frontier/", "/dustless/crawl/hosts.py")),
    ("engine loop", "crawl/engine.py, _batching: the loop's own decisions",
     ("/dustless/crawl/engine.py", "/dustless/crawl/_batching.py")),
    ("event loop + sockets", "asyncio, selectors, threading: scheduling and socket calls",
     ("/asyncio/", "/selectors.py", "/threading.py", "/concurrent/")),
    ("start-up + other", "imports, opening the directory, anything not named above",
     ("<frozen importlib", "/dustless/")),
]  # fmt: skip
#: crawl/record.py functions that build WARC records (the rest write rows and commit)
_RECORD_WARC = {"response", "_stores_as_sent", "prefetch", "_first_capture"}
OTHER = STAGES[-1][0]


class Sampler:
    """Charges every thread's CPU, tick by tick, to the stage of its current stack."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.cpu: dict[str, float] = defaultdict(float)
        self.where: Counter[tuple[str, str]] = Counter()  # (stage, frame) -> CPU seconds
        self.own = 0.0  # the handler's own CPU, left out
        self._pending_own = 0.0
        self._last: dict[int, float] = {}
        self._code: dict[CodeType, tuple[str, str] | None] = {}
        self._main = threading.main_thread().ident

    def start(self) -> None:
        for ident in sys._current_frames():
            self._last[ident] = self._clock(ident) or 0.0
        signal.signal(signal.SIGPROF, self._tick)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL)

    @staticmethod
    def _clock(ident: int) -> float | None:
        try:
            return time.clock_gettime(time.pthread_getcpuclockid(ident))
        except (OSError, ProcessLookupError):
            return None  # the thread ended between the listing and the read

    def _tick(self, _signum: int, frame: FrameType | None) -> None:
        began = time.thread_time()
        for ident, current in sys._current_frames().items():
            now = self._clock(ident)
            if now is None:
                continue
            delta = now - self._last.get(ident, 0.0)  # a new thread: all its CPU so far
            self._last[ident] = now
            if ident == self._main:
                current = frame  # not this handler's own frame
                delta -= self._pending_own
            if delta <= 0 or current is None:
                continue
            stage, where = self._stage(current)
            self.cpu[stage] += delta
            self.where[(stage, where)] += delta
        spent = time.thread_time() - began
        self.own += spent
        self._pending_own = spent

    def _stage(self, frame: FrameType) -> tuple[str, str]:
        f: FrameType | None = frame
        while f is not None:
            code = f.f_code
            if code not in self._code:
                self._code[code] = _classify(code)
            hit = self._code[code]
            if hit is not None:
                return hit
            f = f.f_back
        return OTHER, "(no frame named)"


def _classify(code: CodeType) -> tuple[str, str] | None:
    path = code.co_filename
    where = f"{_short(path)}:{code.co_name}"
    if code.co_name == "<module>":  # a module's body runs once: an import, at start-up
        return OTHER, where
    if path.endswith("/dustless/crawl/record.py") and code.co_name in _RECORD_WARC:
        return "WARC encoding", where
    for stage, _, fragments in STAGES:
        if any(frag in path for frag in fragments if not frag.endswith(":")):
            return stage, where
    return None


def _short(path: str) -> str:
    for marker in ("/dustless/", "/site-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    if "/lib/python3" in path:  # the standard library: from its package on
        return path.split("/lib/python3", 1)[1].split("/", 1)[-1]
    return path


def crawl_args(server: Server, out: Path, depth: int, store: str | None) -> list[str]:
    """crawl_peers.py's dustless crawl, option for option."""
    extra = ["--store", store] if store else []
    return [
        "crawl", *server.seeds, "--out", str(out), *server.resolve, "--delay", "0",
        "--delay-factor", "0", "--concurrency", "64", "--quiet", "--max-depth", str(depth),
        "--policy", "standard", *extra,
    ]  # fmt: skip


def budget(sampler: Sampler, pages: int, cpu: float, top: int) -> list[str]:
    total = sum(sampler.cpu.values())
    out = [
        f"  {'stage':30} {'ms/page':>8} {'share':>6}  what it holds",
        "  " + "-" * 100,
    ]
    for stage, what, _ in STAGES:
        spent = sampler.cpu.get(stage, 0.0)
        out.append(f"  {stage:30} {1000 * spent / pages:8.3f} {spent / total:6.1%}  {what}")
        if top:
            rows = sorted(
                ((s, w) for (st, w), s in sampler.where.items() if st == stage), reverse=True
            )
            out += [f"  {'':30} {1000 * s / pages:8.3f}          {w}" for s, w in rows[:top]]
    out.append("  " + "-" * 100)
    out.append(
        f"  {'sampled total':30} {1000 * total / pages:8.3f} {1:6.1%}  "
        f"(rusage: {1000 * cpu / pages:.3f} ms/page, of which the profiler "
        f"{1000 * sampler.own / pages:.3f})"
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--interval", type=float, default=0.001, help="CPU seconds between samples")
    ap.add_argument("--store", choices=("none",), help="profile `crawl --store none`")
    ap.add_argument("--top", type=int, default=0, help="the N costliest frames of each stage")
    ap.add_argument(
        "--realdocs",
        metavar="PACKAGES",
        help="crawl realdocs_peers.py's web instead: these Debian documentation packages "
        "(comma-separated, e.g. postgresql-doc-15,git-doc) from one nginx",
    )
    args = ap.parse_args()
    if args.store and not store_none():
        print("this dustless has no crawl --store none (issue 28): that budget is missing")
        return 1
    from dustless.cli.main import main as dustless_main

    pin(0, CRAWLER_CPU)
    sampler = Sampler(args.interval)

    def profiled(argv: list[str]) -> tuple[int, float]:
        before = resource.getrusage(resource.RUSAGE_SELF)
        sampler.start()
        try:
            status = dustless_main(argv)
        finally:
            sampler.stop()
        after = resource.getrusage(resource.RUSAGE_SELF)
        return status, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    extra = ["--store", args.store] if args.store else []
    with tempfile.TemporaryDirectory(prefix="crawl-stages-") as t:
        tmp = Path(t)
        if args.realdocs:
            import realdocs_peers as rd

            tmp.chmod(0o755)
            (tmp / "srv").mkdir()
            packages = [p for p in args.realdocs.split(",") if p]
            nginx = rd.Nginx(tmp / "srv", rd.docroot(tmp / "srv", packages))
            try:
                mark = nginx.mark()
                seed = f"http://{rd.HOST}:{nginx.port}/"
                argv = ["crawl", seed, "--out", str(tmp / "crawl"), *rd.crawl_options(), *extra]
                status, cpu = profiled(argv)
                time.sleep(0.2)  # nginx's access log line follows its response
                pages = max(1, nginx.served(mark)["pages"])
            finally:
                nginx.stop()
            what = f"{', '.join(packages)} from one nginx, HTML pages"
        else:
            per_site = max(1, args.pages // args.hosts)
            server = Server(tmp, profile="clean", sites=args.hosts, pages=per_site, extra=[])
            try:
                status, cpu = profiled(crawl_args(server, tmp / "crawl", args.depth, args.store))
                pages = max(1, server.get("stats")["resources_fetched"])
            finally:
                server.stop()
            what = f"{args.hosts} hosts, clean, depth {args.depth}"
    if status != 0:
        print(f"the crawl failed ({status})")
        return 1
    mode = "--store none" if args.store else "WARC + CDXJ + SQLite"
    print(
        f"crawl_stages: {pages:,} pages ({what}, {mode}) on CPU {CRAWLER_CPU}, one sample "
        f"per {1000 * args.interval:g} ms of CPU, PID {os.getpid()}"
    )
    print("\n".join(budget(sampler, pages, cpu, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
