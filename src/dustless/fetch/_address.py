"""Which addresses the crawler may connect to (seed 004 §2; docs/crawling.md).

004 decides per party by IP address ("시드 수행 결정": only Korean addresses); we keep that as
``--allow-ip``/``--deny-ip`` CIDR lists. Safety first: a public page linking to
``http://169.254.169.254/`` (cloud metadata) or ``http://10.0.0.1/admin`` must not make the
crawler reach it, so loopback, private, link-local, multicast and reserved addresses are
refused unless the user vouched for them: ``--allow-private``, a name given with
``--resolve``, a seed on such an address, or a CIDR in ``--allow-ip``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from dustless.errors import InvalidOption
from dustless.fetch._dns import normalize_host

__all__ = ["AddressPolicy", "is_special_address"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _address(ip: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(normalize_host(ip))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        # ::ffff:127.0.0.1 reaches 127.0.0.1; judge the address it really is.
        return address.ipv4_mapped
    return address


def _kind(address: IPAddress) -> str:
    """What makes a special address special, in the words a user searches for."""
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    if address.is_reserved:
        return "reserved"
    return "not globally routable"


def is_special_address(ip: str) -> bool:
    """Loopback, private, link-local, multicast, reserved, unspecified, or otherwise not global."""
    address = _address(ip)
    if address is None:
        return True
    return (
        not address.is_global
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


def _networks(cidrs: Iterable[str], option: str) -> tuple[IPNetwork, ...]:
    networks: list[IPNetwork] = []
    for cidr in cidrs:
        try:
            networks.append(ipaddress.ip_network(cidr.strip(), strict=False))
        except ValueError:
            raise InvalidOption(f"{option} {cidr!r} is not an IP address or CIDR") from None
    return tuple(networks)


# Verdict memo bounds: cleared when full (a crawl of the open web meets many addresses).
_MEMO_SIZE = 4096


class _Special:
    """A special address no allow list opened: the verdict then depends on the host name."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def _host_matches(host: str, pattern: str) -> bool:
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return host == pattern


class AddressPolicy:
    """Allow/deny decisions for (IP, host) pairs; immutable."""

    __slots__ = (
        "_allow",
        "_deny",
        "_host_memo",
        "_ip_memo",
        "_trusted_hosts",
        "_trusted_ips",
        "allow_private",
    )

    def __init__(
        self,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        *,
        allow_private: bool = False,
        trusted_hosts: Iterable[str] = (),
        trusted_ips: Iterable[str] = (),
    ) -> None:
        self._allow = _networks(allow, "--allow-ip")
        self._deny = _networks(deny, "--deny-ip")
        self.allow_private = allow_private
        self._trusted_hosts = frozenset(normalize_host(h) for h in trusted_hosts)
        trusted = (_address(ip) for ip in trusted_ips)
        self._trusted_ips = frozenset(a for a in trusted if a is not None)
        # Memos of ``refusal``: the fetcher asks once per request (and the connector once per
        # new connection), and parsing the address twice with ``ipaddress`` cost ~20 µs of
        # the ~200 µs per-request CPU (measured, crawl_peers clean profile). The verdict for
        # an address never changes within a policy; only the trusted-host part depends on
        # the host, memoized per host name.
        self._ip_memo: dict[str, str | _Special | None] = {}
        self._host_memo: dict[str, bool] = {}

    @classmethod
    def permissive(cls) -> AddressPolicy:
        """Everything but nothing denied: for tests and trusted networks."""
        return cls(allow_private=True)

    def trusting(self, hosts: Iterable[str] = (), ips: Iterable[str] = ()) -> AddressPolicy:
        """A copy that also trusts ``hosts`` (names, ``*.test``) and ``ips`` (e.g. the seeds')."""
        policy = AddressPolicy(allow_private=self.allow_private)
        policy._allow, policy._deny = self._allow, self._deny
        policy._trusted_hosts = self._trusted_hosts | {normalize_host(h) for h in hosts}
        extra = (_address(ip) for ip in ips)
        policy._trusted_ips = self._trusted_ips | {a for a in extra if a is not None}
        return policy  # its memos start empty: its verdicts may differ from ours

    def refusal(self, ip: str, host: str = "") -> str | None:
        """Why a connection to ``ip`` (for ``host``) is refused, or ``None`` if it is permitted."""
        try:
            verdict = self._ip_memo[ip]
        except KeyError:
            verdict = self._ip_verdict(ip)
            if len(self._ip_memo) >= _MEMO_SIZE:
                self._ip_memo.clear()
            self._ip_memo[ip] = verdict
        if verdict is None or isinstance(verdict, str):
            return verdict
        try:
            trusted = self._host_memo[host]
        except KeyError:
            name = normalize_host(host)
            trusted = any(_host_matches(name, pattern) for pattern in self._trusted_hosts)
            if len(self._host_memo) >= _MEMO_SIZE:
                self._host_memo.clear()
            self._host_memo[host] = trusted
        return None if trusted else verdict.message

    def _ip_verdict(self, ip: str) -> str | _Special | None:
        """The part of ``refusal`` that depends on the address alone (memoized per ``ip``)."""
        address = _address(ip)
        if address is None:
            return f"address policy: {ip!r} is not an IP address"
        if any(address in network for network in self._deny):
            return f"address policy: {address} is in a --deny-ip range"
        if any(address in network for network in self._allow):
            return None  # an explicit allow also opens private ranges the user named
        if self._allow:
            return f"address policy: {address} is outside every --allow-ip range"
        if not is_special_address(str(address)) or self.allow_private:
            return None
        if address in self._trusted_ips:
            return None
        return _Special(
            f"address policy: {address} is {_kind(address)} "
            "(use --allow-private, --allow-ip or --resolve to permit it)"
        )

    def permits(self, ip: str, host: str = "") -> bool:
        return self.refusal(ip, host) is None

    def __repr__(self) -> str:
        return (
            f"AddressPolicy(allow={[str(n) for n in self._allow]}, "
            f"deny={[str(n) for n in self._deny]}, allow_private={self.allow_private}, "
            f"trusted_hosts={sorted(self._trusted_hosts)})"
        )
