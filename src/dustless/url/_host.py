"""Host and port steps: case, IDNA, default ports, the ``www`` label.

These run once per distinct ``scheme://authority`` (Normalizer caches the result), so they
favour being right over being fast.
"""

from __future__ import annotations

import ipaddress
import re

from dustless.errors import InvalidURL

__all__ = [
    "add_www",
    "ascii_lower",
    "idna_host",
    "is_ip_host",
    "lower_host",
    "remove_www",
]

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_IPV4_RE = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")


def ascii_lower(text: str) -> str:
    """Lowercase A–Z only: ``str.lower`` would also fold non-ASCII letters ("İ" → "i̇"), which
    is IDNA's job (UTS #46 mapping), not ours."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def is_ip_host(host: str) -> bool:
    return host.startswith("[") or _IPV4_RE.fullmatch(host) is not None


def lower_host(host: str) -> str:
    """RFC 3986 §6.2.2.1: the host is case-insensitive. IPv6 literals also get the RFC 5952
    text form (lower-case hex, zeros compressed): the same address, spelled one way."""
    if host.startswith("[") and host[1:2] not in ("v", "V"):
        addr, sep, zone = host[1:-1].partition("%25")
        return f"[{ipaddress.IPv6Address(addr).compressed}{sep}{zone}]"
    if "%" in host:
        # Escapes keep their (upper-case, §6.2.2.1) hex: "%7C" is not "%7c" lowercased.
        parts = _ESCAPE_SPLIT_RE.split(host)
        return "".join(p if i % 2 else ascii_lower(p) for i, p in enumerate(parts))
    return ascii_lower(host)


_ESCAPE_SPLIT_RE = re.compile(r"(%[0-9A-Fa-f]{2})")
_REG_NAME_RE = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=]+")  # RFC 3986 §3.2.2, unescaped
_UTF8_ESCAPES_RE = re.compile(r"(?:%[89A-Fa-f][0-9A-Fa-f])+")


def idna_host(host: str, url: str = "") -> str:
    """IRI host → punycode (RFC 3987 §3.1, RFC 5891). Percent-escaped UTF-8 in a reg-name
    (RFC 3986 §3.2.2) is decoded first, since it names the same characters.

    ``ada_url.idna_to_ascii`` implements UTS #46 exactly as browsers do (WHATWG "domain to
    ASCII"); the ``idna`` package is strict IDNA 2008 and refuses names that browsers resolve
    (``☃.net``), so a crawler following browser links uses ada's mapping.
    """
    if host.isascii() and "%" not in host:
        return host
    if host.startswith("["):
        return host
    if "%" in host:

        def dec(m: re.Match[str]) -> str:
            raw = bytes.fromhex(m.group().replace("%", ""))
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                return m.group()

        host = _UTF8_ESCAPES_RE.sub(dec, host)
        if host.isascii():
            return host
    import ada_url  # lazy: only hosts that are not plain ASCII pay for it

    # Labels that are already ASCII keep their exact spelling (case is lowercase-host's
    # business); only the non-ASCII ones go through the UTS #46 mapping.
    labels = host.split(".")
    out = []
    for label in labels:
        if label.isascii():
            out.append(label)
            continue
        ascii_label = ada_url.idna_to_ascii(label).decode("ascii") if label else ""
        # UTS #46 can map a character to a space or other delimiter ("¯" → " ̄"): the result
        # must still be an RFC 3986 reg-name, or normalizing it again would fail.
        if not ascii_label or "%" in label or _REG_NAME_RE.fullmatch(ascii_label) is None:
            raise InvalidURL(f"invalid international host {host!r}", url)
        out.append(ascii_label)
    return ".".join(out)


# Second-level labels under which registrations happen (co.kr, ac.uk, com.au, …): without
# these, remove-www would turn www.co.kr into co.kr and add-www would add www to a public
# suffix. A short list instead of the Public Suffix List: the steps are unsafe heuristics that
# the paper measures (000 §4.3), not a registry.
_SECOND_LEVEL = frozenset(
    [
        "ac",
        "co",
        "com",
        "edu",
        "go",
        "gov",
        "govt",
        "gv",
        "ltd",
        "ne",
        "net",
        "or",
        "org",
        "pe",
        "plc",
        "re",
        "sch",
        "mil",
        "nic",
        "ltd",
        "gen",
    ]
)


def _is_public_suffix(labels: list[str]) -> bool:
    if len(labels) <= 1:
        return True
    return len(labels) == 2 and len(labels[1]) == 2 and labels[0] in _SECOND_LEVEL


def remove_www(host: str) -> str:
    """``www.example.com`` → ``example.com`` — but never ``www.com`` → ``com`` (nor
    ``www.co.kr`` → ``co.kr``): the rest must still be a registrable name.

    Every leading ``www.`` label goes (``www.www.example.com`` → ``example.com``): removing
    one per pass would make normalizing twice differ from normalizing once."""
    while len(host) > 4 and host[:4].lower() == "www.":
        rest = host[4:]
        if _is_public_suffix(rest.lower().rstrip(".").split(".")):
            break
        host = rest
    return host


def add_www(host: str) -> str:
    """``example.com`` → ``www.example.com``, only for a registrable domain itself (two labels,
    or three under a second-level suffix such as ``co.kr``): ``blog.example.com`` is left
    alone, so are IP addresses and single labels (``localhost``)."""
    if is_ip_host(host) or host[:4].lower() == "www.":
        return host
    labels = host.lower().rstrip(".").split(".")
    if len(labels) == 2 and not _is_public_suffix(labels):
        return "www." + host
    if len(labels) == 3 and _is_public_suffix(labels[1:]):
        return "www." + host
    return host
