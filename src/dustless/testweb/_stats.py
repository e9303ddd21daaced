"""Server-side counters: politeness and duplicate avoidance seen from the server (pure).

The clock is passed in (``now``, seconds); nothing here reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["HostStats", "Stats"]


@dataclass(slots=True)
class HostStats:
    requests: int = 0
    in_flight: int = 0
    max_concurrent: int = 0
    last_start: float | None = None
    min_gap_s: float | None = None  # smallest gap between the starts of two requests

    def begin(self, now: float) -> None:
        self.requests += 1
        self.in_flight += 1
        self.max_concurrent = max(self.max_concurrent, self.in_flight)
        if self.last_start is not None:
            gap = now - self.last_start
            if self.min_gap_s is None or gap < self.min_gap_s:
                self.min_gap_s = gap
        self.last_start = now

    def as_json(self) -> dict[str, object]:
        gap = None if self.min_gap_s is None else round(self.min_gap_s, 6)
        return {"requests": self.requests, "max_concurrent": self.max_concurrent, "min_gap_s": gap}


@dataclass(slots=True)
class Stats:
    requests: int = 0
    duplicate_fetches: int = 0
    trap_hits: int = 0
    fetched: set[str] = field(default_factory=set)
    hosts: dict[str, HostStats] = field(default_factory=dict)
    addresses: dict[str, HostStats] = field(default_factory=dict)

    def begin(self, host: str, now: float, address: str | None = None) -> None:
        self.requests += 1
        hs = self.hosts.get(host)
        if hs is None:
            hs = self.hosts[host] = HostStats()
        hs.begin(now)
        if address is not None:
            a = self.addresses.get(address)
            if a is None:
                a = self.addresses[address] = HostStats()
            a.begin(now)

    def end(self, host: str, address: str | None = None) -> None:
        hs = self.hosts.get(host)
        if hs is not None and hs.in_flight > 0:
            hs.in_flight -= 1
        a = self.addresses.get(address) if address is not None else None
        if a is not None and a.in_flight > 0:
            a.in_flight -= 1

    def served(self, rid: str, resource: bool, trap: bool) -> None:
        if trap:
            self.trap_hits += 1
        if resource:
            if rid in self.fetched:
                self.duplicate_fetches += 1
            else:
                self.fetched.add(rid)

    def reset(self) -> None:
        self.requests = self.duplicate_fetches = self.trap_hits = 0
        self.fetched = set()
        # Requests in flight stay counted, so their end() does not go negative.
        self.hosts = {
            h: HostStats(in_flight=s.in_flight) for h, s in self.hosts.items() if s.in_flight
        }
        self.addresses = {
            a: HostStats(in_flight=s.in_flight) for a, s in self.addresses.items() if s.in_flight
        }

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "requests": self.requests,
            "resources_fetched": len(self.fetched),
            "duplicate_fetches": self.duplicate_fetches,
            "trap_hits": self.trap_hits,
            "hosts": {h: s.as_json() for h, s in sorted(self.hosts.items()) if s.requests},
        }
        if self.addresses:
            out["addresses"] = {
                a: s.as_json() for a, s in sorted(self.addresses.items()) if s.requests
            }
        return out
