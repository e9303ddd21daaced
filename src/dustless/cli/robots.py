"""``dustless robots``: answer allowed/disallowed for URLs against a robots.txt file.

Exactly one line per URL argument, in order, whatever the file holds: the decisions are the
crawler's own (``dustless.robots``), so an empty file or garbage allows everything, as
RFC 9309 says it must. Only a file that cannot be read at all is an error.
"""

from __future__ import annotations

import argparse
import sys

from dustless.errors import InvalidOption
from dustless.robots import ROBOTS_MAX_BYTES, Robots, product_token

HELP = "answer allowed/disallowed for URLs against a robots.txt file"

_EPILOG = """\
Prints "allowed URL" or "disallowed URL" for every URL, in the order given. A URL may be
absolute (http://example.com/a?b) or a path (/a?b); an empty URL means "/". Decisions follow
RFC 9309 as Google's reference parser reads it; like the crawler, only the first 500 KiB of
the file are read. Use "-" to read the robots.txt from standard input.

examples:
  dustless robots robots.txt https://example.com/ https://example.com/private/x
  dustless robots --agent Googlebot robots.txt /search?q=1 /about
  curl -s https://example.com/robots.txt | dustless robots - /some/page"""

DEFAULT_AGENT = "dustless"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    parser.add_argument(
        "--agent",
        "-a",
        default=DEFAULT_AGENT,
        metavar="UA",
        help=f"user agent whose group applies (product token or full User-Agent; "
        f"default: {DEFAULT_AGENT})",
    )
    parser.add_argument("robots_file", metavar="ROBOTS_FILE", help="robots.txt file, or -")
    parser.add_argument("urls", metavar="URL", nargs="+", help="URLs or paths to check")


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as handle:
            return handle.read(ROBOTS_MAX_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise InvalidOption(f"cannot read robots.txt file {path!r}: {reason}") from None


def _check_url(url: str) -> None:
    """An absolute URL must parse: robots.txt cuts only its path, so 'http://[bad' answered
    "allowed" for a URL no crawler can fetch. A path (``/a?b``) is taken as it is."""
    from dustless.errors import InvalidURL
    from dustless.url import normalize

    if "://" not in url or url.startswith(("/", "?")):
        return
    try:
        normalize(url, "rfc3986")
    except InvalidURL as exc:
        raise InvalidOption(f"URL {url!r}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    agent: str = args.agent
    if not product_token(agent).strip():
        print(
            f"dustless robots: warning: agent {agent!r} has no product token; "
            "only '*' groups apply",
            file=sys.stderr,
        )
    body = _read(args.robots_file)
    if len(body) > ROBOTS_MAX_BYTES:
        # RFC 9309 §2.5: a crawler reads at least 500 KiB and may ignore the rest; we do.
        print(
            f"dustless robots: warning: {args.robots_file} is larger than "
            f"{ROBOTS_MAX_BYTES // 1024} KiB; the rest is ignored, as the crawler does",
            file=sys.stderr,
        )
        body = body[:ROBOTS_MAX_BYTES]
    for url in args.urls:
        _check_url(url)
    robots = Robots.parse(body)
    out = sys.stdout
    for url in args.urls:
        verdict = "allowed" if robots.allowed(agent, url) else "disallowed"
        out.write(f"{verdict} {url}\n")
    out.flush()
    return 0
