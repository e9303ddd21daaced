"""The ``--json`` documents of the commands that had none, and the one way they are printed.

As ``stats``, ``evaluate`` and ``changes`` already did: one JSON document (indented), numbers
as numbers, snake_case keys, no version key. Every key is documented once, in a table of the
command's docs/*.md page; ``tests/cli/test_cli_json.py`` reads those tables and fails when a
document and its table disagree. The builders are pure: values in, dicts out.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from pathlib import Path

    from dustless.crawl.progress import RunCounters
    from dustless.recrawl import RecrawlPlan

__all__ = ["crawl_summary", "print_json", "recrawl_summary", "run_counts"]


def print_json(data: Any, stream: TextIO | None = None) -> None:
    out = sys.stdout if stream is None else stream
    json.dump(data, out, indent=2, ensure_ascii=False)
    out.write("\n")
    out.flush()


def run_counts(s: RunCounters) -> dict[str, Any]:
    """What ``crawl --json`` and ``recrawl --json`` share: the counts of the run."""
    return {
        "fetched": s.fetched,
        "revisits": s.revisits,
        "discovered": s.discovered,
        "bytes": s.bytes,
        "states": dict(sorted(s.states.items())),
        # JSON keys are strings: the HTTP status as its three digits.
        "codes": {str(code): n for code, n in sorted(s.codes.items())},
        "errors": s.errors,
        # A URL's fetch that failed for dustless's own reasons (retried once, see the log)
        # and requests held back because the host's lease was no longer sure (many machines).
        "internal_errors": s.internal_errors,
        "fenced": s.fenced,
        # crawl/soft404.py: random missing paths requested; hosts that answered them 200.
        "soft404_probes": s.soft404_probes,
        "soft404_signatures": s.soft404_signatures,
    }


def _sources(s: RunCounters) -> dict[str, Any]:
    """``--sitemaps`` / ``--feeds``: how reading each source ended, by kind and state."""
    by_kind: dict[str, dict[str, int]] = {"sitemaps": {}, "feeds": {}}
    for key, n in sorted(s.sources.items()):
        letter, _, state = key.partition(" ")
        kind = {"m": "sitemaps", "n": "feeds"}.get(letter)
        if kind is not None:
            by_kind[kind][state] = n
    return {
        **by_kind,
        "entries": s.source_entries,
        "refused": dict(sorted(s.sources_refused.items())),
    }


def _learning(s: RunCounters) -> dict[str, int] | None:
    if not s.learning:
        return None
    return {
        "rules_learned": s.rules_learned,
        "rules_retracted": s.rules_retracted,
        "duplicates_avoided": s.duplicates_avoided,
        "rules_checked": s.rules_checked,
        "readmitted": s.readmitted,
    }


def crawl_summary(
    batch: int, finished: bool, s: RunCounters, directory: Path, crawl_db: str
) -> dict[str, Any]:
    """``crawl --json`` (docs/crawling.md, "The summary as JSON")."""
    return {
        "finished": finished,
        "batch": batch,
        **run_counts(s),
        "sources": _sources(s) if s.sources else None,
        "refused_hosts": dict(sorted(s.refused_hosts.items())),
        "learning": _learning(s),
        "directory": str(directory),
        "crawl_db": crawl_db,
        "db_round_trips": s.db_round_trips,
        "warc": str(directory / "warc"),
        "seeds_file": str(directory / "seeds.out.txt"),
    }


def recrawl_summary(
    batch: int, finished: bool, s: RunCounters, queued: int | None, plan: RecrawlPlan | None
) -> dict[str, Any]:
    """``recrawl --json`` (docs/recrawl.md, "The summary as JSON")."""
    return {
        "finished": finished,
        "batch": batch,
        "queued": queued,
        "plan": None
        if plan is None
        else {
            "schedule": plan.schedule,
            "budget": plan.budget,
            "documents": plan.documents,
            "left_out": plan.left_out,
            # No estimated rate: every page is assumed never to change, and the freshness
            # would be a figure about that assumption (the text says "unknown" too).
            "expected_freshness": plan.expected_freshness if plan.rates_known else None,
        },
        **run_counts(s),
    }
