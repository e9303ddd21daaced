"""The factors and methods of seed 000 §4 (plus seed 001's steps) and the recommender.

Seed 000's conclusion (§5) is a recommendation: accept "about 1 %" of coverage loss to
remove "about 50 %" of the redundancy, which picks *lowercase the path* and *add the
trailing slash* and rejects the `www` and default-document methods (≥ 0.09 loss). The
recommender makes that choice for a user's own crawl and loss budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from dustless.analysis._metrics import MethodRow
from dustless.errors import InvalidOption

__all__ = ["FACTOR_METHODS", "PAPER_TABLE_1", "PaperRow", "Recommendation", "recommend"]


def _steps(*names: str) -> frozenset[str]:
    return frozenset(names)


#: Factor → method → the normalizer steps (ARCHITECTURE "Names for the normalization
#: steps") the method stands for. The first four factors and their methods are seed 000
#: §4.1–§4.4; the last four are seed 001's further steps. "none" is the paper's method (1).
FACTOR_METHODS: Mapping[str, Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "path-case": MappingProxyType(
            {
                "none": _steps(),
                "lowercase": _steps("lowercase-path"),
                "uppercase": _steps("uppercase-path"),
            }
        ),
        "trailing-slash": MappingProxyType(
            {
                "none": _steps(),
                "add": _steps("add-trailing-slash"),
                "remove": _steps("remove-trailing-slash"),
            }
        ),
        "www": MappingProxyType(
            {"none": _steps(), "add": _steps("add-www"), "remove": _steps("remove-www")}
        ),
        "default-document": MappingProxyType(
            {"none": _steps(), "remove": _steps("remove-default-document")}
        ),
        "sort-query": MappingProxyType({"none": _steps(), "sort": _steps("sort-query")}),
        "fragment": MappingProxyType({"none": _steps(), "remove": _steps("remove-fragment")}),
        "collapse-slashes": MappingProxyType(
            {"none": _steps(), "collapse": _steps("collapse-slashes")}
        ),
        "tracking-params": MappingProxyType(
            {"none": _steps(), "remove": _steps("remove-query-params")}
        ),
    }
)


@dataclass(frozen=True, slots=True)
class PaperRow:
    """One row of seed 000 Table 1 (redundancy rate, coverage loss rate)."""

    factor: str
    method: str
    redundancy_rate: float
    coverage_loss_rate: float


#: Seed 000 Table 1, on 170 million URLs of Korean sites (Dec. 2003). The trailing-slash
#: loss figures follow the paper's *text* (§4.2: adding 0.01, removing 0.03; §5: "adding the
#: slash loses 0.01"); the table itself prints them swapped.
PAPER_TABLE_1: tuple[PaperRow, ...] = (
    PaperRow("path-case", "none", 0.52, 0.0),
    PaperRow("path-case", "lowercase", 0.0, 0.01),
    PaperRow("path-case", "uppercase", 0.0, 0.11),
    PaperRow("trailing-slash", "none", 0.49, 0.0),
    PaperRow("trailing-slash", "add", 0.0, 0.01),
    PaperRow("trailing-slash", "remove", 0.0, 0.03),
    PaperRow("www", "none", 0.41, 0.0),
    PaperRow("www", "add", 0.0, 0.13),
    PaperRow("www", "remove", 0.0, 0.09),
    PaperRow("default-document", "none", 0.42, 0.0),
    PaperRow("default-document", "remove", 0.0, 0.19),
)


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The policy the recommender picked.

    ``choices`` is one ``(factor, method)`` per factor that gains something within the
    budget; ``steps`` the union of their steps (add them to the crawl's base policy).
    ``coverage_loss`` is the largest chosen loss (``combine="each"``) or their sum
    (``combine="sum"``).
    """

    steps: frozenset[str]
    choices: tuple[tuple[str, str], ...]
    duplicates_removed: int
    coverage_loss: float
    max_loss: float
    combine: str


# On a tie, the method that keeps the URL a site's own links use most: a www twin folds
# into the bare host (as ``rules learn`` and seed 001's redirects do), paths keep the case a
# Windows server's canonical spelling has (lower).
_PREFERRED = frozenset({("www", "remove"), ("path-case", "lowercase")})

# Loss rates are ratios of integers; a row at exactly the budget must fit it.
_EPS = 1e-12


def recommend(
    rows: Iterable[MethodRow],
    max_loss: float,
    *,
    combine: Literal["each", "sum"] = "each",
) -> Recommendation:
    """The methods that remove the most duplicate downloads within a coverage-loss budget.

    At most one method per factor (adding and removing `www` exclude each other). With
    ``combine="each"`` — seed 000's reading, which accepts lowercase path *and* add slash at
    0.01 each under "about 1 %" — every chosen method's loss must be within ``max_loss``;
    with ``combine="sum"`` the sum of the chosen losses must be (a conservative bound, as
    the factors' candidate sets overlap). Gains are duplicate downloads removed
    (:attr:`MethodRow.duplicates_removed`), which add up across factors; ties go to the
    smaller loss, then to fewer steps, then to ``remove`` www and ``lowercase`` paths, then
    to the name, so the answer is deterministic.
    """
    if not 0.0 <= max_loss <= 1.0:
        raise InvalidOption(f"max loss {max_loss} is not within 0..1")
    if combine not in ("each", "sum"):
        raise InvalidOption(f"combine must be 'each' or 'sum', not {combine!r}")
    by_factor: dict[str, list[MethodRow]] = {}
    for row in rows:
        if row.duplicates_removed > 0 and row.coverage_loss_rate <= max_loss + _EPS:
            by_factor.setdefault(row.factor, []).append(row)

    def rank(r: MethodRow) -> tuple[int, float, int, int, str]:
        preferred = 0 if (r.factor, r.method) in _PREFERRED else 1
        return (-r.duplicates_removed, r.coverage_loss_rate, len(r.steps), preferred, r.method)

    chosen: list[MethodRow]
    if combine == "each":
        chosen = [min(options, key=rank) for options in by_factor.values()]
    else:
        chosen = _best_sum(by_factor, max_loss)
    chosen.sort(key=lambda r: r.factor)
    steps: frozenset[str] = frozenset().union(*(r.steps for r in chosen))
    losses = [r.coverage_loss_rate for r in chosen]
    return Recommendation(
        steps=steps,
        choices=tuple((r.factor, r.method) for r in chosen),
        duplicates_removed=sum(r.duplicates_removed for r in chosen),
        coverage_loss=(max(losses, default=0.0) if combine == "each" else sum(losses)),
        max_loss=max_loss,
        combine=combine,
    )


def _best_sum(by_factor: Mapping[str, list[MethodRow]], max_loss: float) -> list[MethodRow]:
    # A multiple-choice knapsack with a real-valued weight: walk the factors keeping only the
    # Pareto frontier of (loss, gain) states. Exact, and tiny for a handful of factors.
    State = tuple[float, int, tuple[MethodRow, ...]]
    frontier: list[State] = [(0.0, 0, ())]
    for factor in sorted(by_factor):
        options = sorted(by_factor[factor], key=lambda r: (r.coverage_loss_rate, r.method))
        grown = list(frontier)
        for loss, gain, picked in frontier:
            for r in options:
                new_loss = loss + r.coverage_loss_rate
                if new_loss <= max_loss + _EPS:
                    grown.append((new_loss, gain + r.duplicates_removed, (*picked, r)))
        grown.sort(key=lambda s: (s[0], -s[1], len(s[2])))
        frontier = []
        best_gain = -1
        for state in grown:
            if state[1] > best_gain:
                frontier.append(state)
                best_gain = state[1]
    best = max(frontier, key=lambda s: (s[1], -s[0], -len(s[2])))
    return list(best[2])
