"""DNS cache (one lookup per host per TTL, --resolve) and the address policy."""

import asyncio
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.errors import FetchError, InvalidOption
from dustless.fetch import AddressPolicy, Resolver, is_special_address, parse_resolve


class FakeDNS:
    def __init__(self, answers):
        self.answers = answers
        self.calls = []
        self.gate = None

    async def __call__(self, host):
        self.calls.append(host)
        if self.gate is not None:
            await self.gate.wait()
        answer = self.answers.get(host)
        if answer is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answer


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


async def test_one_lookup_per_host_per_ttl():
    dns, clock = FakeDNS({"a.example": ["93.184.216.34"]}), Clock()
    resolver = Resolver(ttl=60.0, lookup=dns, clock=clock)
    for _ in range(5):
        assert await resolver.resolve("A.Example.") == "93.184.216.34"
    assert dns.calls == ["a.example"]
    assert resolver.lookups == 1
    clock.now += 59.9
    await resolver.resolve("a.example")
    assert resolver.lookups == 1
    clock.now += 0.2
    await resolver.resolve("a.example")
    assert resolver.lookups == 2


async def test_concurrent_callers_share_one_lookup():
    dns = FakeDNS({"a.example": ["93.184.216.34"]})
    dns.gate = asyncio.Event()
    resolver = Resolver(lookup=dns)
    waiters = [asyncio.ensure_future(resolver.resolve("a.example")) for _ in range(10)]
    await asyncio.sleep(0)
    dns.gate.set()
    assert set(await asyncio.gather(*waiters)) == {"93.184.216.34"}
    assert dns.calls == ["a.example"]


async def test_failures_are_noip_and_cached_briefly():
    dns, clock = FakeDNS({}), Clock()
    resolver = Resolver(lookup=dns, clock=clock, negative_ttl=10.0)
    for _ in range(3):
        with pytest.raises(FetchError) as exc:
            await resolver.resolve("nowhere.example")
        assert exc.value.state == "noIP"
    assert len(dns.calls) == 1
    clock.now += 11
    with pytest.raises(FetchError):
        await resolver.resolve("nowhere.example")
    assert len(dns.calls) == 2


async def test_empty_answer_is_noip():
    resolver = Resolver(lookup=FakeDNS({"e.example": []}))
    with pytest.raises(FetchError):
        await resolver.resolve("e.example")


async def test_overrides_and_wildcards_need_no_lookup():
    dns = FakeDNS({})
    resolver = Resolver(
        {"exact.test": "127.0.0.2", "*.test": "127.0.0.1", "*.deep.test": "::1"}, lookup=dns
    )
    assert await resolver.resolve("exact.test") == "127.0.0.2"
    assert await resolver.resolve("www.site.test") == "127.0.0.1"
    assert await resolver.resolve("a.deep.test") == "::1"
    with pytest.raises(FetchError):
        await resolver.resolve("test")  # *.test names subdomains only, as curl's does
    assert await resolver.resolve("10.1.2.3") == "10.1.2.3"  # literals are not looked up
    assert await resolver.resolve("[::1]") == "::1"
    assert dns.calls == ["test"]
    assert set(resolver.override_names) == {"exact.test", "*.test", "*.deep.test"}


async def test_real_getaddrinfo_for_localhost():
    resolver = Resolver()
    assert await resolver.resolve("localhost") in ("127.0.0.1", "::1")
    assert resolver.lookups == 1


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("site.test:127.0.0.1", ("site.test", "127.0.0.1")),
        ("*.test:127.0.0.1", ("*.test", "127.0.0.1")),
        ("Host.Test.:[::1]", ("host.test", "::1")),
        ("v6.test:::1", ("v6.test", "::1")),
    ],
)
def test_parse_resolve(spec, expected):
    assert parse_resolve(spec) == expected


@pytest.mark.parametrize(
    "spec", ["nocolon", "a.test:", ":1.2.3.4", "a.test:999.1.1.1", "a*.test:1.2.3.4"]
)
def test_parse_resolve_rejects(spec):
    with pytest.raises(InvalidOption):
        parse_resolve(spec)


@pytest.mark.parametrize(
    "ip",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "ff02::1",
        "::",
    ],
)
def test_special_addresses_are_refused_by_default(ip):
    assert is_special_address(ip)
    policy = AddressPolicy()
    assert not policy.permits(ip, "evil.example")
    assert "allow-private" in policy.refusal(ip, "evil.example")
    assert AddressPolicy(allow_private=True).permits(ip, "evil.example")


def test_public_addresses_are_permitted():
    policy = AddressPolicy()
    for ip in ("93.184.216.34", "8.8.8.8", "2606:4700::1111"):
        assert policy.permits(ip, "h")
        assert not is_special_address(ip)


def test_allow_and_deny_lists():
    policy = AddressPolicy(allow=["211.0.0.0/8", "10.1.0.0/16"], deny=["211.1.0.0/16"])
    assert policy.permits("211.2.3.4", "kr.example")  # 004: only the allowed ranges
    assert not policy.permits("8.8.8.8", "us.example")
    assert not policy.permits("211.1.2.3", "denied.example")  # deny wins
    assert policy.permits("10.1.2.3", "intranet")  # an explicit allow opens a private range
    assert not AddressPolicy(deny=["93.184.216.34"]).permits("93.184.216.34", "h")
    with pytest.raises(InvalidOption):
        AddressPolicy(allow=["not-a-cidr"])


def test_trusted_hosts_and_ips():
    policy = AddressPolicy(trusted_hosts=["*.test", "seed.local"], trusted_ips=["10.0.0.5"])
    assert policy.permits("127.0.0.1", "www.site.test")
    assert policy.permits("192.168.0.9", "SEED.local.")
    assert policy.permits("10.0.0.5", "other.example")  # the seed's own address
    assert not policy.permits("169.254.169.254", "169.254.169.254")
    assert not policy.permits("127.0.0.1", "test")
    wider = AddressPolicy().trusting(hosts=["a.example"], ips=["10.9.9.9"])
    assert wider.permits("127.0.0.1", "a.example")
    assert wider.permits("10.9.9.9", "x")
    assert not wider.permits("127.0.0.1", "b.example")
    # deny still wins over trust
    assert not AddressPolicy(deny=["127.0.0.0/8"], trusted_hosts=["a.test"]).permits(
        "127.0.0.1", "a.test"
    )


def _unmemoized_refusal(policy, ip, host):
    """``AddressPolicy.refusal`` as it was before its memo: the reference for the fast path."""
    from dustless.fetch._address import _address, _host_matches, _kind
    from dustless.fetch._dns import normalize_host

    address = _address(ip)
    if address is None:
        return f"address policy: {ip!r} is not an IP address"
    if any(address in network for network in policy._deny):
        return f"address policy: {address} is in a --deny-ip range"
    if any(address in network for network in policy._allow):
        return None
    if policy._allow:
        return f"address policy: {address} is outside every --allow-ip range"
    if not is_special_address(str(address)) or policy.allow_private:
        return None
    name = normalize_host(host)
    if address in policy._trusted_ips or any(
        _host_matches(name, pattern) for pattern in policy._trusted_hosts
    ):
        return None
    return (
        f"address policy: {address} is {_kind(address)} "
        "(use --allow-private, --allow-ip or --resolve to permit it)"
    )


_IPS = st.sampled_from(
    ["127.0.0.1", "10.0.0.5", "10.1.2.3", "8.8.8.8", "211.1.2.3", "211.2.3.4", "::1",
     "::ffff:127.0.0.1", "[::1]", "2606:4700::1111", "169.254.169.254", "not-an-ip", ""]
)  # fmt: skip
_HOSTS = st.sampled_from(
    ["", "a.test", "www.A.TEST.", "test", "seed.local", "[::1]", "x.example", " a.test "]
)
_POLICIES = [
    AddressPolicy(),
    AddressPolicy(allow_private=True),
    AddressPolicy(allow=["211.0.0.0/8", "10.1.0.0/16"], deny=["211.1.0.0/16"]),
    AddressPolicy(trusted_hosts=["*.test", "seed.local"], trusted_ips=["10.0.0.5"]),
    AddressPolicy(deny=["127.0.0.0/8"], trusted_hosts=["a.test"]).trusting(hosts=["x.example"]),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(range(len(_POLICIES))), _IPS, _HOSTS), max_size=30))
def test_memoized_refusal_equals_the_unmemoized_one(calls):
    # The memo (per address, then per host name) must never change a verdict, in any order
    # of questions, including the same address asked for another host.
    for index, ip, host in calls:
        policy = _POLICIES[index]
        assert policy.refusal(ip, host) == _unmemoized_refusal(policy, ip, host)
