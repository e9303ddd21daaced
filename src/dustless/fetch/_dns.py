"""DNS cache: one lookup per host per TTL, ``--resolve NAME:IP`` overrides (seed 004 §2).

004 §2: DNS lookups are a crawler's bottleneck, so 004 looks a party's host up once and keeps
the address in the seed context. We keep each answer for ``ttl`` seconds (getaddrinfo does not
tell us the record's TTL), share one lookup between concurrent callers for the same host, and
remember failures briefly so a dead name is not asked again for every URL.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence

from dustless.errors import FetchError, InvalidOption

__all__ = ["Lookup", "Resolver", "normalize_host", "parse_resolve"]

Lookup = Callable[[str], Awaitable[Sequence[str]]]


def normalize_host(host: str) -> str:
    """Lower-case, without a trailing dot or IPv6 brackets: the form cache keys use."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host.rstrip(".")


def _is_ip(host: str) -> bool:
    if ":" not in host and not ("0" <= host[-1:] <= "9"):
        # Neither IPv6 (always has a colon) nor IPv4 (its last octet ends in an ASCII digit):
        # a host name, the usual case, is answered without ipaddress raising ValueError
        # (~4 µs a fetch, measured).
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def parse_resolve(spec: str) -> tuple[str, str]:
    """``NAME:IP`` (``NAME`` may be ``*.test``) → (name, ip); ``InvalidOption`` if malformed."""
    name, sep, ip = spec.partition(":")
    ip = ip.strip().strip("[]")
    name = normalize_host(name)
    if not sep or not name or not ip:
        raise InvalidOption(f"--resolve wants NAME:IP, not {spec!r}")
    if not _is_ip(ip):
        raise InvalidOption(f"--resolve {spec!r}: {ip!r} is not an IP address")
    if "*" in name and (not name.startswith("*.") or "*" in name[2:] or len(name) < 3):
        raise InvalidOption(f"--resolve {spec!r}: a wildcard must look like *.example")
    return name, str(ipaddress.ip_address(ip))


async def _getaddrinfo(host: str) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    v4 = [str(info[4][0]) for info in infos if info[0] == socket.AF_INET]
    v6 = [str(info[4][0]) for info in infos if info[0] == socket.AF_INET6]
    # IPv4 first: many hosts publish AAAA records that do not answer, and many crawl machines
    # have no IPv6 route; an address that works beats the RFC 6724 preference here.
    return v4 + v6


class Resolver:
    """Host name → one IP address, cached; ``FetchError(state="noIP")`` when there is none."""

    def __init__(
        self,
        overrides: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        ttl: float = 300.0,
        *,
        negative_ttl: float = 30.0,
        lookup: Lookup | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 100_000,
    ) -> None:
        pairs = overrides.items() if isinstance(overrides, Mapping) else (overrides or ())
        self._exact: dict[str, str] = {}
        wildcards: list[tuple[str, str]] = []
        for raw_name, raw_ip in pairs:
            name, ip = parse_resolve(f"{raw_name}:{raw_ip}")
            if name.startswith("*."):
                wildcards.append((name[1:], ip))  # ".test"
            else:
                self._exact[name] = ip
        # Longest suffix first, so *.a.test beats *.test.
        self._wildcards = sorted(wildcards, key=lambda pair: -len(pair[0]))
        self.ttl = ttl
        self.negative_ttl = negative_ttl
        self._lookup: Lookup = lookup or _getaddrinfo
        self._clock = clock
        self._max_entries = max_entries
        self._cache: dict[str, tuple[float, str | None, str]] = {}  # host → (expires, ip, error)
        self._pending: dict[str, asyncio.Task[str]] = {}
        self.lookups = 0  # real lookups made (a statistic, and the tests' witness)

    @property
    def override_names(self) -> tuple[str, ...]:
        """The names given with --resolve (wildcards as ``*.test``)."""
        return (*self._exact, *("*" + suffix for suffix, _ip in self._wildcards))

    def override_for(self, host: str) -> str | None:
        host = normalize_host(host)
        ip = self._exact.get(host)
        if ip is not None:
            return ip
        for suffix, wildcard_ip in self._wildcards:
            if host.endswith(suffix) and len(host) > len(suffix):
                return wildcard_ip
        return None

    def cached(self, host: str) -> str | None:
        """The cached address of ``host`` if fresh, without looking anything up."""
        host = normalize_host(host)
        entry = self._cache.get(host)
        if entry is not None and self._clock() < entry[0]:
            return entry[1]
        return None

    async def resolve(self, host: str) -> str:
        host = normalize_host(host)
        if not host:
            raise FetchError("empty host name", state="noIP")
        if _is_ip(host):
            return host
        override = self.override_for(host)
        if override is not None:
            return override
        entry = self._cache.get(host)
        if entry is not None and self._clock() < entry[0]:
            _expires, ip, error = entry
            if ip is None:
                raise FetchError(error, state="noIP")
            return ip
        task = self._pending.get(host)
        if task is None:
            task = asyncio.ensure_future(self._look_up(host))
            self._pending[host] = task
            task.add_done_callback(functools.partial(self._finished, host))
        # shield: one caller giving up (its fetch timed out) must not cancel the others' lookup.
        return await asyncio.shield(task)

    def _finished(self, host: str, task: asyncio.Task[str]) -> None:
        if self._pending.get(host) is task:
            del self._pending[host]
        if not task.cancelled():
            task.exception()  # retrieved: every waiter may have gone away

    async def _look_up(self, host: str) -> str:
        self.lookups += 1
        try:
            addresses = list(await self._lookup(host))
        except (OSError, UnicodeError, ValueError) as exc:
            # socket.gaierror is an OSError; IDNA failures are UnicodeErrors.
            error = f"DNS lookup of {host} failed: {exc}"
            self._store(host, None, error, self.negative_ttl)
            raise FetchError(error, state="noIP") from None
        valid = [a for a in addresses if _is_ip(a)]
        if not valid:
            error = f"DNS lookup of {host} returned no address"
            self._store(host, None, error, self.negative_ttl)
            raise FetchError(error, state="noIP")
        self._store(host, valid[0], "", self.ttl)
        return valid[0]

    def _store(self, host: str, ip: str | None, error: str, ttl: float) -> None:
        self._cache.pop(host, None)
        self._cache[host] = (self._clock() + ttl, ip, error)
        while len(self._cache) > self._max_entries:
            del self._cache[next(iter(self._cache))]  # oldest stored first
