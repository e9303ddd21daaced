"""Named, frozen policies and policy expressions (``paper + remove-www - add-trailing-slash``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from dustless.errors import InvalidPolicy
from dustless.url._steps import CONFLICTS, ORDER, STEPS, Safety, StepOptions

__all__ = ["POLICIES", "SAFEBROWSING", "Policy", "get_policy"]

# The name of the one policy that is its own pipeline rather than a set of steps.
SAFEBROWSING = "google-safebrowsing"


@dataclass(frozen=True, slots=True)
class Policy:
    """A named set of steps with their options. Steps always run in the fixed ``ORDER``."""

    name: str
    steps: frozenset[str]
    options: StepOptions = field(default_factory=StepOptions)
    # "steps": the steps above, in ORDER; "google-safebrowsing": Google's own pipeline.
    pipeline: str = "steps"

    def __post_init__(self) -> None:
        unknown = sorted(self.steps - STEPS.keys())
        if unknown:
            raise InvalidPolicy(
                f"unknown step {unknown[0]!r} (see: dustless normalize --list-steps)"
            )
        for a, b in CONFLICTS:
            if a in self.steps and b in self.steps:
                raise InvalidPolicy(f"policy {self.name!r} has both {a!r} and {b!r}")
        if self.pipeline not in ("steps", SAFEBROWSING):
            raise InvalidPolicy(f"unknown pipeline {self.pipeline!r}")

    def ordered_steps(self) -> tuple[str, ...]:
        return tuple(s for s in ORDER if s in self.steps)

    def with_steps(self, enable: Iterable[str] = (), disable: Iterable[str] = ()) -> Policy:
        """A derived policy; ``enable`` then ``disable``. Unknown names raise InvalidPolicy."""
        enable, disable = tuple(enable), tuple(disable)
        if not enable and not disable:
            return self
        if self.pipeline != "steps":
            raise InvalidPolicy(f"{self.name!r} is a fixed pipeline; steps cannot be added to it")
        for name in (*enable, *disable):
            if name not in STEPS:
                raise InvalidPolicy(f"unknown step {name!r} (see: dustless normalize --list-steps)")
        steps = set(self.steps | set(enable)) - set(disable)
        # An enabled step replaces the one it conflicts with ("paper + remove-trailing-slash"
        # means "instead of adding the slash"), unless both were asked for explicitly.
        for a, b in CONFLICTS:
            for new, old in ((a, b), (b, a)):
                if new in enable and old in steps and old not in enable:
                    steps.discard(old)
        name = self.name + "".join(f" + {s}" for s in enable) + "".join(f" - {s}" for s in disable)
        return replace(self, name=name, steps=frozenset(steps))

    def with_options(self, **changes: object) -> Policy:
        """The same steps with some options changed, e.g. ``default_documents=(…)``."""
        try:
            options = replace(self.options, **changes)  # type: ignore[arg-type]
        except TypeError as exc:
            raise InvalidPolicy(str(exc)) from None
        return replace(self, options=options)

    @property
    def safety(self) -> Safety:
        """The least safe class among the steps (google-safebrowsing counts as unsafe)."""
        if self.pipeline != "steps":
            return Safety.UNSAFE
        classes = {STEPS[s].safety for s in self.steps}
        for level in (Safety.UNSAFE, Safety.USUALLY):
            if level in classes:
                return level
        return Safety.SAFE


_SAFE = frozenset(name for name, info in STEPS.items() if info.safety is Safety.SAFE)
_STANDARD = _SAFE | {"remove-fragment"}  # 000 §2.2: the five points, fragment included
_PAPER = _STANDARD | {"lowercase-path", "add-trailing-slash"}  # 000 §5 and Table 1
_AGGRESSIVE = _PAPER | {
    "remove-www",
    "remove-default-document",
    "collapse-slashes",
    "remove-empty-query",
    "sort-query",
    "remove-query-params",
}

POLICIES: Mapping[str, Policy] = MappingProxyType(
    {
        "rfc3986": Policy("rfc3986", _SAFE),
        "standard": Policy("standard", _STANDARD),
        "paper": Policy("paper", _PAPER),
        "aggressive": Policy("aggressive", _AGGRESSIVE),
        SAFEBROWSING: Policy(SAFEBROWSING, frozenset(), pipeline=SAFEBROWSING),
    }
)

_TOKEN_RE = re.compile(r"\s*([+-])\s*([A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])\s*")


def get_policy(expr: str | Policy) -> Policy:
    """``"paper"``, or ``"paper + remove-www - add-trailing-slash"``; raises InvalidPolicy.

    Step names contain "-", so the operators must be surrounded by spaces (or start the
    expression): ``paper -remove-fragment`` is accepted, ``paper-remove-fragment`` is not.
    """
    if isinstance(expr, Policy):
        return expr
    policy = _CACHE.get(expr)
    if policy is not None:
        return policy
    text = expr.strip()
    head, _, rest = text.partition(" ")
    if head not in POLICIES:
        raise InvalidPolicy(f"unknown policy {head!r}; known: {', '.join(POLICIES)}")
    base = POLICIES[head]
    enable: list[str] = []
    disable: list[str] = []
    pos = 0
    rest = " " + rest
    while pos < len(rest) and rest[pos:].strip():
        m = _TOKEN_RE.match(rest, pos)
        if m is None:
            raise InvalidPolicy(f"cannot read policy expression {expr!r} at {len(head) + pos}")
        (enable if m.group(1) == "+" else disable).append(m.group(2))
        pos = m.end()
    policy = base.with_steps(enable, disable)
    if len(_CACHE) < 256:
        _CACHE[expr] = policy
    return policy


_CACHE: dict[str, Policy] = {}
