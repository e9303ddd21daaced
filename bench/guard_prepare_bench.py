"""CPU of the extraction guard's ``prepare`` on real documentation pages (issue 28).

Debian's PostgreSQL 15 and git HTML manuals (``dustless.testweb``'s corpus loader finds
them installed or in its cache, as ``bench/realdocs_peers.py`` does), every page measured
in-process, rounds interleaved: ``prepare`` as it is (``extract/_prepare.py``: the cheap
bound first, the full measure where it cannot clear the page) against ``prepare`` of
``extract/_guard.py`` as it was at ``--before`` (read from git: by default ab850c2, round 7,
before the cheap bound; 2c70ba2 is before the pairs, when every tag was its own token). Both
give the same measure (checked here on every page, and by the tests); this prints the CPU
of each per page measured (pages of at least ``SHAPE_MIN_CHARS`` characters or more than
``CLONE_FREE_TAGS`` tags), their ratio, and how many pages the cheap bound cleared.

Run: ``.venv/bin/python bench/guard_prepare_bench.py`` (``--rounds 5``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from dataclasses import astuple
from pathlib import Path

from dustless.extract import _guard, _prepare
from dustless.testweb._corpus import PACKAGES, load_corpus

REPO = Path(__file__).resolve().parent.parent


def _before(rev: str) -> types.ModuleType:
    """``extract/_guard.py`` as it was at ``rev``, as a module of its own."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:src/dustless/extract/_guard.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("dustless.extract._guard_before")
    sys.modules[module.__name__] = module  # for its dataclass
    exec(compile(source, f"{rev}:_guard.py", "exec"), module.__dict__)
    return module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", default="postgresql-doc-15,git-doc")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--before", default="ab850c2", help="the revision compared with")
    args = ap.parse_args()
    wanted = tuple(p for p in PACKAGES if p.name in args.packages.split(","))
    corpus = load_corpus(wanted)
    if corpus.missing:
        raise SystemExit(f"documentation packages missing: {' '.join(corpus.missing)}")
    pages = [
        path.read_bytes().decode("utf-8", "replace")
        for root in corpus.roots.values()
        for path in sorted(Path(root).rglob("*.htm*"))
    ]
    measured = sum(
        len(p) >= _guard.SHAPE_MIN_CHARS or p.count("<") > _guard.CLONE_FREE_TAGS for p in pages
    )
    before = _before(args.before)
    cleared = sum(
        (len(p) >= _guard.SHAPE_MIN_CHARS or p.count("<") > _guard.CLONE_FREE_TAGS)
        and p.count("<") <= _prepare.BOUND_MAX_TAGS
        and _prepare.safe(p, p.count("<"))
        for p in pages
    )
    differ = sum(astuple(_guard.shape(p)) != astuple(before.shape(p)) for p in pages)
    prepares = {"now": _prepare.prepare, args.before: before.prepare}
    cpu = dict.fromkeys(prepares, 0.0)
    for _ in range(args.rounds):
        for name, prepare in prepares.items():
            t = time.process_time()
            for page in pages:
                prepare(page, _guard.DEFAULT_MAX_TAGS)
            cpu[name] += time.process_time() - t
    print(
        f"guard_prepare_bench: {len(pages)} pages of {args.packages} ({measured} measured), "
        f"{args.rounds} rounds interleaved, CPU of prepare(); measures differing: {differ}; "
        f"measured pages the cheap bound cleared: {cleared}"
    )
    for name, total in cpu.items():
        per_page = 1000 * total / args.rounds / measured
        print(f"  {name:10} {per_page:7.3f} ms per measured page")
    print(f"  {args.before} / now: {cpu[args.before] / cpu['now']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
