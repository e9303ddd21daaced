"""The parsed robots.txt and its decisions (RFC 9309 §2.2)."""

from __future__ import annotations

import enum

from dustless.robots._match import Rule, compile_rule, path_of
from dustless.robots._parse import Group, parse_lines

__all__ = ["Robots", "product_token"]


class _Mode(enum.Enum):
    PARSED = "parsed"
    ALLOW_ALL = "allow all"
    DISALLOW_ALL = "disallow all"


def product_token(agent: str) -> str:
    """The product token of a User-Agent string, lower-cased: ``dustless/0.1 (+…)`` → ``dustless``.

    RFC 9309 §2.2.1: crawlers match groups by their product token. A name without ``/`` is
    taken whole, as Google's matcher does (so ``Foo Bar`` does not match a ``Foo`` group).
    """
    if "/" in agent:
        agent = agent.split("/", 1)[0].strip()
    return agent.lower()


class _AgentView:
    """The rules that apply to one agent, longest first (allow before disallow on ties)."""

    __slots__ = ("crawl_delay", "rules")

    def __init__(self, groups: list[Group]) -> None:
        rules: list[Rule] = []
        for group in groups:
            for allow, pattern, _line in group.rules:
                if not pattern:
                    # An empty pattern has priority 0 and never decides (Google: a match only
                    # counts with priority > 0; "Disallow:" with no value allows all).
                    continue
                rules.append(compile_rule(allow, pattern))
                if allow:
                    alternative = _index_alternative(pattern)
                    if alternative is not None:
                        rules.append(compile_rule(True, alternative))
        rules.sort(key=lambda rule: (-rule.priority, not rule.allow))
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.crawl_delay: float | None = next(
            (g.crawl_delay for g in groups if g.crawl_delay is not None), None
        )

    def allowed(self, path: str) -> bool:
        for rule in self.rules:
            if rule.matches(path):
                return rule.allow
        return True


def _index_alternative(pattern: str) -> str | None:
    # Google-only: "allow: /dir/index.htm(l)" also allows "/dir/" (GoogleOnly_IndexHTMLisDirectory).
    slash = pattern.rfind("/")
    if slash >= 0 and pattern.startswith("/index.htm", slash):
        return pattern[: slash + 1] + "$"
    return None


class Robots:
    """A parsed robots.txt: which agent may fetch which URL, its crawl delays and sitemaps.

    Immutable once built; decisions for an agent are compiled on first use and kept.
    """

    __slots__ = ("_groups", "_mode", "_views", "sitemaps")

    def __init__(self, groups: list[Group], sitemaps: tuple[str, ...], mode: _Mode) -> None:
        self._groups = groups
        self._mode = mode
        self._views: dict[str, _AgentView] = {}
        self.sitemaps: tuple[str, ...] = sitemaps

    @classmethod
    def parse(cls, body: bytes | str) -> Robots:
        """Parse a robots.txt body; never raises, whatever the bytes."""
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogatepass")
        parsed = parse_lines(body)
        sitemaps = tuple(dict.fromkeys(parsed.sitemaps))
        return cls(parsed.groups, sitemaps, _Mode.PARSED)

    @classmethod
    def allow_all(cls) -> Robots:
        """RFC 9309 §2.3.1.3: an unavailable robots.txt (4xx) allows everything."""
        return cls([], (), _Mode.ALLOW_ALL)

    @classmethod
    def disallow_all(cls) -> Robots:
        """RFC 9309 §2.3.1.4: an unreachable robots.txt (5xx, network) allows nothing."""
        return cls([], (), _Mode.DISALLOW_ALL)

    @property
    def kind(self) -> str:
        """``parsed``, ``allow all`` or ``disallow all``: how this decision set was made."""
        return self._mode.value

    def _view(self, agent: str) -> _AgentView:
        token = product_token(agent)
        view = self._views.get(token)
        if view is None:
            # §2.2.1: the groups naming the agent win; "*" applies only when none does.
            # Several groups naming it are merged (§2.2.1 "MUST be combined").
            specific = [g for g in self._groups if token in g.agents]
            chosen = specific or [g for g in self._groups if g.is_global]
            view = self._views[token] = _AgentView(chosen)
        return view

    def allowed(self, agent: str, url: str) -> bool:
        """May ``agent`` fetch ``url`` (absolute URL or path+query; empty means ``/``)?"""
        if self._mode is _Mode.ALLOW_ALL:
            return True
        path = path_of(url)
        if path == "/robots.txt":
            return True  # §2.2.2: "The /robots.txt URI is implicitly allowed."
        if self._mode is _Mode.DISALLOW_ALL:
            return False
        return self._view(agent).allowed(path)

    def crawl_delay(self, agent: str) -> float | None:
        """Seconds between requests the file asks of ``agent``; the caller caps it."""
        if self._mode is not _Mode.PARSED:
            return None
        return self._view(agent).crawl_delay

    def __repr__(self) -> str:
        rules = sum(len(g.rules) for g in self._groups)
        return f"<Robots {self.kind}: {len(self._groups)} groups, {rules} rules>"
