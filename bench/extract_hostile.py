"""Extraction's CPU on hostile markup: time in proportion to size, against lexbor's parse.

Pages of N repetitions of markup whose tree costs an HTML parser time in the square of N
(nested blocks, unclosed lists, options in one select, attributes on one tag) are timed
through ``extract_links`` (which measures and flattens them, ``extract._guard``) and through
a bare ``selectolax`` Lexbor parse (the peer, measured in the same run), for two sizes: the
ratio of the two sizes' times shows linear (about 4 for 4 times the markup) or square (16).
An ordinary page of the same size is timed too. Run by hand:
``.venv/bin/python bench/extract_hostile.py [N]`` (default 10,000; lexbor at 4N can take
minutes on the square cases).
"""

from __future__ import annotations

import sys
import time

from selectolax.lexbor import LexborHTMLParser

from dustless.extract import extract_links

CASES = {
    "nested <div>": lambda n: "<div>" * n + "</div>" * n,
    "unclosed <div><span><b>": lambda n: "<div><span><b>" * n,
    "unclosed <ul><li>": lambda n: "<ul><li>" * n,
    "<option> in a select": lambda n: "<select>" + "<option>x</option>" * n,
    "attributes on a tag": lambda n: "<div " + " ".join(f"a{i}=1" for i in range(n)) + ">",
    "ordinary <p><a>": lambda n: "".join(f"<p>text <a href='/p{i}'>{i}</a></p>" for i in range(n)),
}


def cpu(fn: object) -> float:
    start = time.process_time()
    fn()  # type: ignore[operator]
    return time.process_time() - start


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    print(f"CPU seconds, {n:,} and {4 * n:,} repetitions; ×: time at 4N / time at N")
    head = f"{'dustless':>9} {'at 4N':>8} {'×':>5}   {'lexbor':>8} {'at 4N':>8} {'×':>5}"
    print(f"  {'markup':<26} {head}")
    for name, make in CASES.items():
        row = []
        for reps in (n, 4 * n):
            html = "<html><body>" + make(reps) + "<a href='/end'>end</a>"
            body = html.encode()
            ours = cpu(lambda body=body: extract_links(body, "http://h.test/", max_tags=None))
            peer = cpu(lambda html=html: LexborHTMLParser(html))
            row.append((ours, peer))
        (o1, p1), (o4, p4) = row
        print(
            f"  {name:<26} {o1:>9.3f} {o4:>8.3f} {o4 / max(o1, 1e-6):>5.1f}"
            f"   {p1:>8.3f} {p4:>8.3f} {p4 / max(p1, 1e-6):>5.1f}"
        )


if __name__ == "__main__":
    main()
