"""The crawl settings both ``dustless crawl`` and ``dustless recrawl`` take, defined once.

``crawl`` shows each setting's default; ``recrawl`` leaves it unset, meaning "the value
stored with the crawl", and lays only what was given over the stored settings. One table
keeps the two commands' names, metavars and help texts the same.

Only the standard library is imported here: a command line is checked before the engine
(the fetcher, the store) is imported, so a bad argument is rejected at once.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dustless.cli._log import LEVELS

__all__ = [
    "CRAWL_SETTINGS",
    "Setting",
    "add_crawl_settings",
    "add_progress_options",
    "given_settings",
    "positive_seconds",
]


def _number(kind: Callable[[str], Any], *, least: float, strict: bool) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(value) or value < least or (strict and value == least):
            bound = f"> {least:g}" if strict else f">= {least:g}"
            raise argparse.ArgumentTypeError(f"must be {bound}, not {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


# Counts and delays are range-checked by CrawlConfig (one message for the CLI and the API);
# the timeouts, which it takes as they come, here.
positive_seconds = _number(float, least=0.0, strict=True)
_seconds = _number(float, least=0.0, strict=False)


def _bodies(text: str) -> str:
    if text not in ("as-sent", "decoded"):
        raise argparse.ArgumentTypeError(f"must be as-sent or decoded, not {text!r}")
    return text


@dataclass(frozen=True, slots=True)
class Setting:
    """One ``CrawlConfig`` field as a command-line option."""

    field: str  # the CrawlConfig field; the option is --field-with-dashes
    help: str
    metavar: str | None = None  # None: a flag
    type: Callable[[str], Any] | None = None
    repeat: bool = False  # append: each use adds one value
    show_default: bool = True  # "(default …)" in crawl's help

    @property
    def option(self) -> str:
        return "--" + self.field.replace("_", "-")


CRAWL_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "resolve",
        "connect to IP for host NAME (like curl; NAME may be *.test); repeatable",
        "NAME:IP",
        repeat=True,
    ),
    Setting("max_depth", "links from a party's seed, breadth-first", "N", int),
    Setting("max_pages", "URLs queued in all", "N", int),
    Setting("max_pages_per_site", "URLs queued per site", "N", int),
    Setting("max_sites", "sites crawled, the seeds' included", "N", int),
    Setting("concurrency", "fetches in flight, across hosts", "N", int),
    Setting(
        "spelling_tries",
        "spellings of one URL identity fetched at most: when the one fetched gives no "
        "document (4xx, 5xx, no answer), the next one linked is tried (1: never)",
        "N",
        int,
    ),
    Setting(
        "no_soft404_probe",
        "do not request one random missing path per host (at most two) to learn its soft "
        "404 page; pages that say 'not found' are still told apart",
    ),
    Setting("delay", "least seconds between two requests to a host", "S", float),
    Setting("delay_factor", "a host also rests F x its last fetch time", "F", float),
    Setting(
        "max_crawl_delay",
        "robots.txt Crawl-delay is honoured up to S seconds (a larger one is capped)",
        "S",
        float,
    ),
    Setting(
        "backoff",
        "after server trouble a host rests S seconds more, doubled at each failure in a row",
        "S",
        float,
    ),
    Setting("max_failures", "failures in a row before a host is given up", "N", int),
    Setting(
        "connect_timeout",
        "give up connecting to a server after S seconds (cTim)",
        "S",
        positive_seconds,
    ),
    Setting(
        "stall_timeout",
        "give up a response that sends nothing for S seconds (hTim, dTim)",
        "S",
        positive_seconds,
    ),
    Setting("total_timeout", "give up a fetch that takes S seconds in all", "S", positive_seconds),
    Setting(
        "user_agent",
        "the User-Agent header sent, and the name robots.txt groups are matched against "
        "(its product token, RFC 9309 §2.2.1)",
        "UA",
    ),
    Setting(
        "allow_ip",
        "connect only to these address ranges (private ones too); repeatable",
        "CIDR",
        repeat=True,
    ),
    Setting("deny_ip", "never connect to these addresses; repeatable", "CIDR", repeat=True),
    Setting("allow_private", "allow loopback, private and link-local addresses"),
    Setting(
        "ca_file",
        "also trust the CA certificates of this PEM file (a private CA), besides the system's",
        "PATH",
        os.path.abspath,  # stored with the crawl: a recrawl may run from elsewhere
        show_default=False,
    ),
    Setting(
        "sitemaps",
        "read each host's sitemaps (robots.txt Sitemap: lines, else /sitemap.xml) and crawl "
        "the pages they list (link kind l); lastmod feeds recrawl and changes",
    ),
    Setting(
        "feeds",
        "read the RSS/Atom feeds pages announce (<link rel=alternate>) and crawl their "
        "entries (link kind e)",
    ),
    Setting("sitemap_depth", "levels of sitemap indexes followed below robots.txt", "N", int),
    Setting("max_sitemaps", "sitemaps read per host at most", "N", int),
    Setting(
        "warc_bodies",
        "WARC records hold bodies as-sent (content-coded, as the server sent them: the "
        "payload digests other crawlers record) or decoded; one way per crawl",
        "as-sent|decoded",
        _bodies,
    ),
)


def _default_text(value: Any) -> str:
    if value is None:
        return "no limit"
    if isinstance(value, tuple):
        return "none" if not value else ", ".join(map(str, value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def add_crawl_settings(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    defaults: Any | None,
    *,
    replaces: str = "",
) -> None:
    """Add every crawl setting. ``defaults`` (a ``CrawlConfig``) fills them in and is shown
    in the help; ``None`` leaves them unset (``recrawl``: the stored value applies), and
    ``replaces`` is then appended to the help of repeatable ones."""
    for s in CRAWL_SETTINGS:
        kwargs: dict[str, Any] = {}
        help_text = s.help
        if defaults is not None:
            value = getattr(defaults, s.field)
            kwargs["default"] = list(value) if s.repeat else value
            if s.metavar is not None and not s.repeat and s.show_default:
                default = f"default {_default_text(value)}"
                # "… (cTim)" becomes "… (cTim; default 10)", not "(cTim) (default 10)".
                if help_text.endswith(")"):
                    help_text = f"{help_text[:-1]}; {default})"
                else:
                    help_text += f" ({default})"
        elif s.repeat and replaces:
            help_text += f"; {replaces}"
        if s.metavar is None:
            kwargs["action"] = "store_true"
            if defaults is None:
                kwargs["default"] = None
        else:
            kwargs["metavar"] = s.metavar
            if s.repeat:
                kwargs["action"] = "append"
            if s.type is not None:
                kwargs["type"] = s.type
        parser.add_argument(s.option, help=help_text, **kwargs)


def given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line (those not left unset), by field name."""
    out: dict[str, Any] = {}
    for s in CRAWL_SETTINGS:
        value = getattr(args, s.field)
        if value is not None:
            out[s.field] = list(value) if s.repeat else value
    return out


def add_progress_options(parser: argparse.ArgumentParser, *, interval: float) -> None:
    """``--json``, ``--quiet``, ``--progress-interval``, ``--log-file``, ``--log-level``."""
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the summary as one JSON document on stdout, instead of lines on stderr",
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress and no summary on stderr (errors still are; --json and --log-file "
        "still write)",
    )
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        help="append the progress reports (every --progress-interval seconds), the summary "
        "and the warnings to PATH, each line timed",
    )
    parser.add_argument(
        "--log-level",
        choices=LEVELS,
        default="info",
        help="what --log-file keeps: info (all), warning (warnings alone), error (default info)",
    )
    parser.add_argument(
        "--progress-interval",
        type=_seconds,
        default=interval,
        metavar="S",
        help="when stderr is not a terminal (a log, a pipe), print one progress line every S "
        f"seconds; 0: none (default {interval:g}; a terminal shows a live display)",
    )
