"""Query-parameter rules (DustBuster's "parameter" DUST; seed 001, URL-list normalization).

A parameter that never changes the content can be dropped (``sid``, ``utm_source``,
``PHPSESSID``, and the servlet's ``;jsessionid=`` segment parameter); one whose *value*
never matters — but whose presence does — can be fixed to one value. Each candidate is
measured on the host's documents (``measure``): support is the number of merged pairs with
equal payloads, and the rule is kept only with ``support >= min_support`` and
``fp <= max_fp``. Parameters are tried from the most frequent; each is measured on the URLs
the parameters accepted before it already rewrote, so ``?id=9&sid=a&utm_source=b`` meets
``?id=9`` once ``utm_source`` is gone.

A parameter rejected site-wide (``sid`` selects a board on one path, a session elsewhere)
is tried per path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dustless.url import split_lenient

from ._learn_evidence import Doc, Evidence, measure, rewrite_docs
from ._learned import DropParam, FixParam
from ._urlparts import query_pieces

__all__ = ["ParamFinding", "learn_params"]

# A parameter seen on fewer documents cannot show a rule worth its risk.
_MIN_OCCURRENCES = 2


@dataclass(frozen=True, slots=True)
class ParamFinding:
    host: str
    rule: DropParam | FixParam
    evidence: Evidence
    accepted: bool
    reason: str


def _params(url: str) -> tuple[str, list[tuple[str, str | None]]]:
    """(path without segment parameters, every parameter: segment ones, then the query's)."""
    parts = split_lenient(url)
    found: list[tuple[str, str | None]] = []
    segments = []
    for segment in parts.path.split("/"):
        head, *params = segment.split(";")
        segments.append(head)
        for p in params:
            name, eq, value = p.partition("=")
            found.append((name, value if eq else None))
    found += query_pieces(parts.query or "")
    return "/".join(segments), found


def _verdict(ev: Evidence, max_fp: float, min_support: int) -> tuple[bool, str]:
    fp = ev.fp_rate
    if ev.pairs == 0:
        return False, "merges no fetched pair"
    if fp is not None and fp > max_fp:
        return False, f"fp {fp:.2%} > {max_fp:.2%}"
    if ev.equal < min_support:
        return False, f"support {ev.equal} < {min_support}"
    return True, "content never changed"


def _with_stats(rule: DropParam | FixParam, ev: Evidence) -> DropParam | FixParam:
    fp = ev.fp_rate if ev.fp_rate is not None else 0.0
    if isinstance(rule, DropParam):
        return DropParam(rule.name, rule.path, support=ev.equal, fp_rate=fp)
    return FixParam(rule.name, rule.value, rule.path, support=ev.equal, fp_rate=fp)


def learn_params(
    host: str, docs: Sequence[Doc], *, max_fp: float, min_support: int
) -> list[ParamFinding]:
    """Drop/fix rules for the parameters of one host's documents."""
    names: Counter[str] = Counter()
    values: dict[str, Counter[str]] = {}
    paths: dict[str, set[str]] = {}
    for d in docs:
        path, params = _params(d.url)
        for name, value in dict(params).items():
            if not name:
                continue
            names[name] += 1
            paths.setdefault(name, set()).add(path)
            if value is not None:
                values.setdefault(name, Counter())[value] += 1
    out: list[ParamFinding] = []
    current = list(docs)
    accepted: list[Callable[[str], str]] = []
    for name, count in sorted(names.items(), key=lambda kv: (-kv[1], kv[0])):
        if count < _MIN_OCCURRENCES:
            continue
        found = _learn_one(host, name, current, values.get(name), paths[name], max_fp, min_support)
        out += found
        for f in found:
            if f.accepted:
                accepted.append(f.rule.apply)
                current = rewrite_docs(f.rule.apply, current)
    return out


def _learn_one(
    host: str,
    name: str,
    docs: Sequence[Doc],
    values: Counter[str] | None,
    paths: set[str],
    max_fp: float,
    min_support: int,
) -> list[ParamFinding]:
    drop = DropParam(name)
    ev = measure(drop.apply, docs)
    ok, reason = _verdict(ev, max_fp, min_support)
    tried = [ParamFinding(host, _with_stats(drop, ev), ev, ok, reason)]
    if ok:
        return tried
    if values:
        # Its presence matters (the drop merged different pages); maybe its value does not.
        value = values.most_common(1)[0][0]
        fix = FixParam(name, value)
        fev = measure(fix.apply, docs)
        fok, freason = _verdict(fev, max_fp, min_support)
        tried.append(ParamFinding(host, _with_stats(fix, fev), fev, fok, freason))
        if fok:
            return tried
    if len(paths) > 1 and ev.pairs > 0:
        for path in sorted(paths):
            one = DropParam(name, path)
            pev = measure(one.apply, docs)
            pok, preason = _verdict(pev, max_fp, min_support)
            if pev.pairs:
                tried.append(ParamFinding(host, _with_stats(one, pev), pev, pok, preason))
    return tried
