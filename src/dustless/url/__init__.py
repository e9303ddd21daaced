"""dustless.url — RFC 3986 parsing, normalization policies, reference resolution (pure).

No I/O, no clock: values in, values out. The contract is ``docs/internals.md``; the user
guide to the steps and policies is ``docs/normalization.md``.

>>> normalize("HTTP://Example.COM:80/a/./b/../c/%7Euser?b=2&a=1#top")
'http://example.com/a/c/~user?b=2&a=1#top'
>>> normalize("http://Example.com/Pubs", "paper")
'http://example.com/pubs/'
"""

from __future__ import annotations

from dustless.url._host import ascii_lower as _ascii_lower
from dustless.url._host import idna_host as _idna_host
from dustless.url._host import lower_host as _lower_host
from dustless.url._lenient import (
    LenientParts,
    RobotsKey,
    authority_of,
    hostname_of,
    origin_of,
    port_number,
    replace_host,
    robots_key,
    robots_url,
    split_authority,
    split_lenient,
    with_authority,
)
from dustless.url._normalize import Change, Normalizer, explain, normalize
from dustless.url._parse import URLParts, as_text, parse, split_url
from dustless.url._policy import POLICIES, Policy, get_policy
from dustless.url._resolve import resolve
from dustless.url._steps import (
    ORDER,
    SESSION_PARAMS,
    STEPS,
    TRACKING_PARAMS,
    Safety,
    SiteRule,
    StepInfo,
    StepOptions,
)
from dustless.url.safebrowsing import safebrowsing_canonicalize, safebrowsing_expressions

__all__ = [
    "ORDER",
    "POLICIES",
    "SESSION_PARAMS",
    "STEPS",
    "TRACKING_PARAMS",
    "Change",
    "LenientParts",
    "Normalizer",
    "Policy",
    "RobotsKey",
    "Safety",
    "SiteRule",
    "StepInfo",
    "StepOptions",
    "URLParts",
    "as_text",
    "authority_of",
    "explain",
    "get_policy",
    "host_of",
    "hostname_of",
    "normalize",
    "origin_of",
    "port_number",
    "replace_host",
    "resolve",
    "robots_key",
    "robots_url",
    "safebrowsing_canonicalize",
    "safebrowsing_expressions",
    "split_authority",
    "split_lenient",
    "split_url",
    "with_authority",
]

_HOSTS: dict[str, str] = {}


def host_of(url: str | bytes) -> str:
    """The lowercased host of ``url`` (punycode for IDN, RFC 5952 for IPv6), without port or
    userinfo: the key of the crawler's per-host queues. Raises :class:`InvalidURL`."""
    text = as_text(url)
    parts = parse(text)
    host = parts.host
    cached = _HOSTS.get(host)
    if cached is None:
        from dustless.url._percent import decode_unreserved, upper_hex

        cached = host
        if not host.startswith("["):
            cached = decode_unreserved(upper_hex(cached))
        cached = _idna_host(_lower_host(_ascii_lower(cached)), text)
        if len(_HOSTS) >= 100_000:
            _HOSTS.clear()
        _HOSTS[host] = cached
    return cached
