"""``dustless normalize``: normalize URLs from the arguments or stdin; list steps and policies.

Imports stay lazy (only ``dustless.url`` inside ``run``) so that the command starts fast:
it must keep up with files of millions of lines, and start-up counts in a pipeline.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, BinaryIO, TextIO

if TYPE_CHECKING:
    from dustless.url import Normalizer

__all__ = ["HELP", "configure", "run"]

HELP = "normalize URLs; list steps and policies"

_EPILOG = """\
With no URL arguments, URLs are read from stdin, one per line, and written to stdout in the
same order, one per line: a line that is not a valid URL gives an empty output line and
'error: line N: reason' on stderr, and the exit status is 1. URLs are bytes: a byte that is
not part of valid UTF-8, in an argument or on stdin, is kept as %XX (\x80 → %80).

A policy is a name or an expression: 'paper + remove-www - add-trailing-slash'.

examples:
  dustless normalize 'HTTP://Example.COM:80/a/./b/../c?b=2&a=1#top'
      http://example.com/a/c?b=2&a=1#top
  dustless normalize --policy paper 'http://www.acm.org/PUBS'
      http://www.acm.org/pubs/
  dustless normalize --policy aggressive --disable sort-query < urls.txt > normalized.txt
  dustless normalize --policy 'paper + remove-www' --explain 'http://WWW.acm.org/Pubs'
  dustless normalize --policy google-safebrowsing 'http://3279880203/blah'
  dustless normalize --list-steps
  dustless normalize --list-policies
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    parser.add_argument("urls", nargs="*", metavar="URL", help="URLs to normalize (default: stdin)")
    parser.add_argument(
        "--policy",
        default="rfc3986",
        metavar="NAME",
        help="policy name or expression (default: rfc3986; see --list-policies)",
    )
    parser.add_argument(
        "--enable", action="append", default=[], metavar="STEP", help="add a step to the policy"
    )
    parser.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="STEP",
        help="remove a step from the policy",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="show each step that changed each URL, with the URL before and after",
    )
    parser.add_argument(
        "--list-steps", action="store_true", help="list the steps in their fixed order"
    )
    parser.add_argument(
        "--list-policies", action="store_true", help="list the named policies and their steps"
    )


def run(args: argparse.Namespace) -> int:
    from dustless.url import ORDER, POLICIES, STEPS, Normalizer, get_policy

    out = sys.stdout
    if args.list_steps:
        width = max(len(s) for s in ORDER)
        for name in ORDER:
            info = STEPS[name]
            out.write(f"{name:<{width}}  {info.safety.value:<7}  {info.description}\n")
        return 0
    if args.list_policies:
        for name, policy in POLICIES.items():
            steps = " ".join(policy.ordered_steps()) or "(its own pipeline: Google's rules)"
            out.write(f"{name}: {steps}\n")
        return 0

    policy = get_policy(args.policy).with_steps(args.enable, args.disable)
    normalizer = Normalizer(policy)
    # Output is UTF-8 bytes whatever the locale says: a URL read as bytes comes back as the
    # same bytes (percent-encoded where they are not UTF-8), and a locale that cannot
    # encode "→" must not turn --explain into a traceback.
    stdout = sys.stdout.buffer
    if args.explain:
        if args.urls:
            return _explain(normalizer, args.urls, "argument", stdout)
        return _explain(normalizer, _stdin_lines(sys.stdin.buffer), "line", stdout)
    if args.urls:
        return _normalize_args(normalizer, args.urls, stdout)
    return _stream(normalizer, sys.stdin.buffer, stdout, sys.stderr)


def _stdin_lines(stdin: BinaryIO) -> list[str]:
    # Bytes that are not UTF-8 stay bytes (surrogate escapes): the normalizer writes them %XX.
    text = stdin.read().decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _normalize_args(normalizer: Normalizer, urls: list[str], stdout: BinaryIO) -> int:
    # sys.argv holds bytes that are not UTF-8 as surrogate escapes (PEP 383): the
    # normalizer reads them as those bytes.
    from dustless.errors import InvalidURL

    status = 0
    out: list[str] = []
    for i, url in enumerate(urls, 1):
        try:
            out.append(normalizer.normalize(url))
        except InvalidURL as exc:
            out.append("")
            stdout.write(_encode(out))
            stdout.flush()
            out.clear()
            print(f"error: argument {i}: {exc}", file=sys.stderr)
            status = 1
    stdout.write(_encode(out))
    stdout.flush()
    return status


def _encode(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")


def _explain(normalizer: Normalizer, urls: list[str], where: str, stdout: BinaryIO) -> int:
    from dustless.errors import InvalidURL
    from dustless.url import as_text

    status = 0
    for i, url in enumerate(urls, 1):
        try:
            text = as_text(url)
            changes = normalizer.explain(text)
            result = normalizer.normalize(text)
        except InvalidURL as exc:
            stdout.flush()
            print(f"error: {where} {i}: {exc}", file=sys.stderr)
            status = 1
            continue
        lines = [text]
        width = max((len(c.step) for c in changes), default=0)
        for change in changes:
            lines.append(f"  {change.step:<{width}}  {change.before}")
            lines.append(f"  {'':<{width}}  → {change.after}")
        if not changes:
            lines.append("  (unchanged)")
        lines.append(f"= {result}")
        stdout.write(_encode(lines))
    stdout.flush()
    return status


def _stream(normalizer: Normalizer, stdin: BinaryIO, stdout: BinaryIO, stderr: TextIO) -> int:
    """Line-aligned streaming: read batches of about 1 MiB of lines, write each batch with one
    call, so that millions of lines cost little beyond the normalizing itself."""
    from dustless.errors import InvalidURL

    normalize = normalizer.normalize
    errors: list[str] = []
    failed = False
    lineno = 0
    while True:
        lines = stdin.readlines(1 << 20)
        if not lines:
            break
        # Bytes that are not UTF-8 become surrogate escapes, which the normalizer writes %XX:
        # a crawl log's bytes come back as the same bytes, percent-encoded.
        text = b"".join(lines).decode("utf-8", "surrogateescape")
        if lineno == 0 and text.startswith("\ufeff"):
            # A byte-order mark (a list saved by Notepad) is no part of the first URL, as
            # crawl --seeds reads it (cli/_input.py).
            text = text[1:]
        batch = text.split("\n")
        if batch[-1] == "":
            batch.pop()
        out: list[str] = []
        append = out.append
        for line in batch:
            lineno += 1
            try:
                append(normalize(line))
            except InvalidURL as exc:
                append("")
                errors.append(f"error: line {lineno}: {exc}\n")
        out.append("")
        stdout.write("\n".join(out).encode("utf-8"))
        if errors:
            failed = True
            stdout.flush()
            stderr.write("".join(errors))
            stderr.flush()
            errors.clear()
    stdout.flush()
    return 1 if failed else 0
