"""Long URLs that would lead back to the shortener itself (a redirect loop) are refused.

A string comparison with the configured host is not enough: a browser reads the host the
WHATWG way, so ``http://2130706433/``, ``http://0x7f.1/`` and ``http://127.1/`` all reach
127.0.0.1, ``localhost.`` is ``localhost``, and ``[::ffff:7f00:1]`` is 127.0.0.1 again. The
host is therefore first parsed as a browser parses it (ada, the WHATWG reference parser the
crawler uses too), and an address is then judged the way the crawler's address policy judges
one (``dustless.fetch.AddressPolicy``): loopback, unspecified, private, link-local and
reserved addresses are not where a public link should send anyone — ``--allow-private-targets``
opens the private ones for an intranet shortener, never loopback. A name is looked up (with
the crawler's DNS cache) when the service is asked to create a link: a name that resolves to
one of those addresses, or to an address of the service's own names, is refused too.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Iterable

import ada_url

from dustless.errors import FetchError
from dustless.fetch import AddressPolicy, Resolver, normalize_host

__all__ = ["TargetGuard", "web_host"]

_LOOKUP_TIMEOUT = 2.0  # seconds; a name that does not resolve by then is not refused for it


def web_host(url: str) -> str | None:
    """The host of ``url`` as a browser reads it, without brackets; None if it cannot."""
    try:
        host = ada_url.URL(url).hostname
    except ValueError:
        return None
    return normalize_host(host) if host else None


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class TargetGuard:
    """Refuses the service's own names and addresses as link targets."""

    def __init__(
        self,
        own_hosts: Iterable[str] = (),
        *,
        allow_private: bool = False,
        resolver: Resolver | None = None,
    ) -> None:
        names = {normalize_host(h) for h in own_hosts if h}
        self._names = frozenset(n for n in names if _ip(n) is None) | {"localhost"}
        self._own_ips = {str(a) for a in map(_ip, names) if a is not None}
        self._policy = AddressPolicy(allow_private=allow_private)
        self._resolver = resolver
        self._resolved_own = False

    def use_resolver(self, resolver: Resolver) -> None:
        """Look names up with ``resolver`` in :meth:`resolved_refusal` (none by default)."""
        self._resolver = resolver

    def _address_refusal(self, ip: str) -> str | None:
        address = _ip(ip)
        if address is None:
            return None
        if str(address) in self._own_ips:
            return f"points to this shortener's own address {address} (a redirect loop)"
        if address.is_loopback or address.is_unspecified:
            return f"points to {address}, this machine (a redirect loop)"
        refusal = self._policy.refusal(str(address))
        return None if refusal is None else f"points to a non-public address: {refusal}"

    def refusal(self, host: str) -> str | None:
        """Why ``host`` (as :func:`web_host` gives it) is refused, without a DNS lookup."""
        name = normalize_host(host)
        if name in self._names or name.endswith(".localhost"):
            return f"points to {name}, this shortener's own name (a redirect loop)"
        return self._address_refusal(name)

    async def resolved_refusal(self, host: str) -> str | None:
        """:meth:`refusal`, then the addresses a name resolves to (when a resolver is set)."""
        refusal = self.refusal(host)
        if refusal is not None or self._resolver is None or _ip(normalize_host(host)):
            return refusal
        if not self._resolved_own:
            # The addresses of our own names (the base URL's host, --own-host), once.
            self._resolved_own = True
            for name in self._names - {"localhost"}:
                ip = await self._lookup(name)
                if ip is not None:
                    self._own_ips.add(str(_ip(ip)))
        ip = await self._lookup(host)
        if ip is None:
            return None
        refusal = self._address_refusal(ip)
        return None if refusal is None else f"(via {normalize_host(host)}) {refusal}"

    async def _lookup(self, host: str) -> str | None:
        assert self._resolver is not None
        try:
            return await asyncio.wait_for(self._resolver.resolve(host), _LOOKUP_TIMEOUT)
        except (FetchError, TimeoutError):
            return None
