"""The ``dustless`` command: one entry point, one module per sub-command.

Sub-command modules are imported only when their command runs, so ``dustless normalize``
starts in the time it takes to import the normalizer, not the crawler and rich.
Each module in ``COMMANDS`` provides::

    HELP: str                                   # one line for ``dustless --help``
    def configure(parser: argparse.ArgumentParser) -> None
    def run(args: argparse.Namespace) -> int    # the exit status

Errors: a ``UsageError`` prints ``dustless: error: …`` and exits 2, any other
``DustlessError`` prints one line and exits 1, and so does an ``OSError`` (a path that cannot
be made or written). Never a traceback for bad input. A command line argparse refuses is one
line too, exit 2. ``dustless`` alone, or a command made of sub-commands alone
(``dustless rules``, ``dustless shortener``), prints its help on stderr and exits 2: there
was nothing to do.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn, Protocol, cast

from dustless.errors import DustlessError, UsageError

__all__ = ["COMMANDS", "build_parser", "main"]

# name -> (module, one-line help). Keep the help here too, so that `dustless --help`
# lists every command without importing any of them.
COMMANDS: dict[str, tuple[str, str]] = {
    "normalize": ("dustless.cli.normalize", "normalize URLs; list steps and policies"),
    "testweb": ("dustless.cli.testweb", "serve the synthetic test web on loopback"),
    "crawl": (
        "dustless.cli.crawl",
        "crawl from seeds into a directory (crawl.db + warc/), resumable",
    ),
    "robots": (
        "dustless.cli.robots",
        "answer allowed/disallowed for URLs against a robots.txt file",
    ),
    "shortener": ("dustless.shortener.cli", "the URL shortener service and its admin commands"),
    "stats": ("dustless.cli.stats", "crawl statistics (seed 004 §3)"),
    "evaluate": (
        "dustless.cli.evaluate",
        "redundancy and coverage loss of each normalization step",
    ),
    "report": ("dustless.cli.report", "self-contained HTML report with charts"),
    "rules": ("dustless.cli.rules", "learn and show URL rules (pattern scripts, DustBuster)"),
    "export": (
        "dustless.cli.export",
        "export a crawl as files with crawl-info XML, or as one WACZ archive",
    ),
    "recrawl": (
        "dustless.cli.recrawl",
        "refresh a crawled collection: one more batch, full or under a budget",
    ),
    "changes": (
        "dustless.cli.changes",
        "change statistics of a recrawled collection (seed 004 §4)",
    ),
}

_EPILOG = """examples:
  dustless normalize 'HTTP://Example.COM:80/a/./b/../c?b=2&a=1#top'
  dustless normalize --policy paper < urls.txt > normalized.txt
  dustless crawl crawl1 https://example.org/ && dustless report crawl1 -o report.html

Run 'dustless COMMAND --help' for a command's options and examples."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its refusals on one line (its default adds the usage line above)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


class _TopFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse measures sub-command names 2 columns less deep than it draws them, so the
    longest ones ("normalize", "shortener") sat alone on their lines: make room for them."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):
            longest = max((len(name) for name in action.choices), default=0)
            self._action_max_length = max(
                self._action_max_length, self._current_indent + 2 + longest
            )


class _CommandModule(Protocol):
    HELP: str

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _top_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dustless",
        description="A polite web crawler that never fetches the same page twice.",
        epilog=_EPILOG,
        formatter_class=_TopFormatter,
    )
    parser.add_argument("--version", action="version", version=f"dustless {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dustless")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def _load(name: str) -> _CommandModule:
    module_name, _help = COMMANDS[name]
    return cast(_CommandModule, importlib.import_module(module_name))


def build_parser(name: str) -> tuple[argparse.ArgumentParser, _CommandModule]:
    """The parser of ``dustless NAME`` (its module imported), as ``main`` uses it."""
    module = _load(name)
    parser = _Parser(
        prog=f"dustless {name}",
        description=module.HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    module.configure(parser)
    return parser, module


def _has_subcommands(parser: argparse.ArgumentParser) -> bool:
    return any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if not args_in:
        _top_parser().print_help(sys.stderr)
        return 2
    if args_in[0] not in COMMANDS:
        # --help, --version, or an unknown command: argparse says the right thing.
        _top_parser().parse_args(args_in)
        return 2
    name = args_in[0]
    parser, module = build_parser(name)
    grouped = _has_subcommands(parser)
    if len(args_in) == 1 and grouped:
        parser.print_help(sys.stderr)
        return 2
    # Options may come between positional arguments (`crawl DIR --delay 0 URL`); argparse
    # allows that only outside sub-commands.
    args = parser.parse_args(args_in[1:]) if grouped else parser.parse_intermixed_args(args_in[1:])
    # "dustless rules learn: error: …", as argparse names it in its own refusals.
    action = getattr(args, "action", None) if grouped else None
    if isinstance(action, str):
        name = f"{name} {action}"
    try:
        return module.run(args)
    except UsageError as exc:
        print(f"dustless {name}: error: {exc}", file=sys.stderr)
        return 2
    except DustlessError as exc:
        print(f"dustless {name}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"dustless {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `dustless normalize < big | head`: the reader left; that is not an error of ours.
        _silence_stdout()
        return 0
    except OSError as exc:
        # A path the user gave that cannot be made or written (`--out /proc/x`, a file where
        # a directory should be, a full disk): the system's own words, on one line.
        print(f"dustless {name}: {_os_error(exc)}", file=sys.stderr)
        return 1


def _os_error(exc: OSError) -> str:
    if exc.strerror is None:
        return str(exc)
    paths = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    return f"{paths}: {exc.strerror}" if paths else exc.strerror


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
