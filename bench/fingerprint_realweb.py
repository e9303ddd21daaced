"""Near-duplicate judgements of the fingerprint against the truth, on a crawled ``real`` web.

Two steps, so two versions of the fingerprint judge the same bytes (a ``dynamic`` site sends
other bytes for every request):

    .venv/bin/python bench/fingerprint_realweb.py collect PAGES.pickle [--seeds 3] [--sites 5]
        [--pages-per-site 60]
    .venv/bin/python bench/fingerprint_realweb.py score PAGES.pickle [--dump SIMS] [--before SIMS]

``collect`` serves each seed's ``dustless testweb --profile real`` on 127.0.0.1, crawls it
with ``--policy standard`` (which fetches every spelling, template and host of a document)
and keeps every 2xx HTML response the truth calls a document (its ``doc`` rows), with the
truth's resource id. ``score`` fingerprints them with the ``dustless`` on ``sys.path`` (run
it with ``PYTHONPATH=OLD/src`` for the code before a change) and prints, per kind of
resource (a document page, a section listing, the home page), over all pairs of pages of
one site (its hosts together) the share of pairs the truth calls the same that are
near-duplicates (higher is better) and the share of pairs it calls different that are (lower
is better), and the mean resemblance of each.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

DUSTLESS = [sys.executable, "-m", "dustless"]


def _site(host: str) -> str:
    # m.site1.test, print.site1.test, www.site1.test: one site
    parts = host.split(".")
    return ".".join(parts[-2:])


def _collect(args: argparse.Namespace) -> int:
    from dustless.store._recover import iter_records

    pages: list[tuple[int, str, str, bytes, str | None]] = []  # seed, url, rid, body, ctype
    for seed in range(args.first, args.first + args.seeds):
        work = Path(tempfile.mkdtemp(prefix=f"dustless-fpweb-{seed}-"))
        truth = work / "truth.tsv"
        proc = subprocess.Popen(
            [*DUSTLESS, "testweb", "--profile", "real", "--port", "0", "--seed", str(seed),
             "--sites", str(args.sites), "--pages-per-site", str(args.pages_per_site),
             "--truth", str(truth)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        seeds: list[str] = []
        try:
            while len(seeds) < args.sites:
                line = proc.stdout.readline()
                if not line:
                    raise SystemExit(f"seed {seed}: the test web did not start")
                word, _, value = line.strip().partition(" ")
                if word == "seed":
                    seeds.append(value)
            subprocess.run(
                [*DUSTLESS, "crawl", *seeds, "--out", str(work / "crawl"), "--policy",
                 "standard", "--resolve", "*.test:127.0.0.1", "--delay", "0.01",
                 "--delay-factor", "0", "--quiet"],
                check=True,
            )  # fmt: skip
        finally:
            proc.terminate()
            proc.wait()
        rids = {}
        for line in truth.read_text(encoding="utf-8").splitlines():
            fields = line.split("\t")
            if len(fields) >= 4 and fields[3] == "doc":
                rids[fields[0]] = fields[2]
        n = 0
        for path in sorted((work / "crawl" / "warc").glob("*.warc*")):
            for rec in iter_records(path):
                url = rec.target_uri
                if rec.type != "response" or url is None or url not in rids:
                    continue
                ctype = rec.http_header("content-type")
                if rec.http_status != 200 or not (ctype or "").startswith("text/html"):
                    continue
                pages.append((seed, url, rids[url], rec.payload, ctype))
                n += 1
        print(f"seed {seed}: {n} document pages", file=sys.stderr)
    with open(args.pages, "wb") as f:
        pickle.dump(pages, f)
    return 0


def _kind(url: str) -> str:
    path = urlsplit(url).path
    if path in ("/", "/index.html"):
        return "home"
    if path.count("/") == 2 and path.endswith("/"):
        return "listing"
    return "document"


def _score(args: argparse.Namespace) -> int:
    from dustless.extract import NEAR_THRESHOLD, content_fingerprint, similarity

    with open(args.pages, "rb") as f:
        pages = pickle.load(f)
    by_site: dict[tuple[int, str], list[tuple[str, str, bytes]]] = defaultdict(list)
    kind_of: dict[tuple[int, str], str] = {}
    for seed, url, rid, body, ctype in pages:
        fp = content_fingerprint(body, "text/html", ctype)
        if fp is None:
            continue
        site = (seed, _site(urlsplit(url).hostname or ""))
        by_site[site].append((url, rid, fp))
        key = (seed, rid)
        # a listing or home page by any of its URLs (a document may be fetched at a query
        # form, ``/index.php?page=…``, but no document at ``/`` or ``/section/``)
        kind = _kind(url)
        if kind_of.get(key, "document") == "document":
            kind_of[key] = kind
    # kind -> [same pairs, same near, same sum, diff pairs, diff near, diff sum]
    stats: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0, 0, 0, 0.0])
    worst: dict[str, tuple[float, str, str]] = {}
    sims: dict[tuple[str, str], tuple[bool, float]] = {}
    for (seed, _), rows in by_site.items():
        for (ua, ra, fa), (ub, rb, fb) in itertools.combinations(rows, 2):
            s = similarity(fa, fb)
            sims[(ua, ub)] = (ra == rb, s)
            ka, kb = kind_of[(seed, ra)], kind_of[(seed, rb)]
            kind = ka if ka == kb else "mixed"
            st = stats[kind]
            if ra == rb:
                st[0] += 1
                st[1] += s >= NEAR_THRESHOLD
                st[2] += s
            else:
                st[3] += 1
                st[4] += s >= NEAR_THRESHOLD
                st[5] += s
                if s > worst.get(kind, (-1.0, "", ""))[0]:
                    worst[kind] = (s, ua, ub)
    print(f"pages {sum(map(len, by_site.values()))}, threshold {NEAR_THRESHOLD}")
    print("| kind | same pairs | near | mean J | different pairs | near | mean J |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind in ("document", "listing", "home", "mixed"):
        sp, sn, ss, dp, dn, ds = stats[kind]
        print(
            f"| {kind} | {sp:.0f} | {sn / max(sp, 1):.3f} | {ss / max(sp, 1):.3f} "
            f"| {dp:.0f} | {dn / max(dp, 1):.4f} | {ds / max(dp, 1):.3f} |"
        )
    for kind, (s, ua, ub) in sorted(worst.items()):
        print(f"most alike different pair ({kind}): {s:.2f} {ua} {ub}")
    if args.before is not None:
        _moves(sims, args.before)
    if args.dump is not None:
        with open(args.dump, "wb") as f:
            pickle.dump(sims, f)
    return 0


def _moves(sims: dict[tuple[str, str], tuple[bool, float]], before: Path) -> None:
    """How each pair moved from the resemblances ``score --dump`` wrote before."""
    from dustless.extract import NEAR_THRESHOLD

    with open(before, "rb") as f:
        old: dict[tuple[str, str], tuple[bool, float]] = pickle.load(f)
    down = [(o[1], s, p) for p, (same, s) in sims.items() if same and (o := old.get(p))
            and s < o[1] - 0.05]  # fmt: skip
    lost = [x for x in down if x[0] >= NEAR_THRESHOLD > x[1]]
    crossed = [(o[1], s, p) for p, (same, s) in sims.items() if not same and (o := old.get(p))
               and s >= NEAR_THRESHOLD > o[1]]  # fmt: skip
    print(f"same pairs down by > 0.05: {len(down)}, of them no longer near: {len(lost)}")
    print(f"different pairs that crossed the threshold: {len(crossed)}")
    for o, s, (ua, ub) in sorted(down)[:5] + sorted(crossed)[:5]:
        print(f"  {o:.2f} -> {s:.2f} {ua} {ub}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    collect = sub.add_parser("collect", help="crawl real webs, keep their document pages")
    collect.add_argument("pages", type=Path)
    collect.add_argument("--seeds", type=int, default=3)
    collect.add_argument("--first", type=int, default=1)
    collect.add_argument("--sites", type=int, default=5)
    collect.add_argument("--pages-per-site", type=int, default=60)
    score = sub.add_parser("score", help="judge the pages' pairs against the truth")
    score.add_argument("pages", type=Path)
    score.add_argument("--dump", type=Path, help="write every pair's resemblance here")
    score.add_argument("--before", type=Path, help="a --dump of the code before: the moves")
    args = parser.parse_args()
    return _collect(args) if args.step == "collect" else _score(args)


if __name__ == "__main__":
    raise SystemExit(main())
