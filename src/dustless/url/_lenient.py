"""The lenient reading of a URL: its parts without validation, and never an exception.

``parse``/``split_url`` (``_parse.py``) are the strict reading: an absolute URL with a host
or :class:`InvalidURL`. Many callers hold a URL that was already normalized or that comes
from the wild where raising would lose it — the rules inside the normalizer's
``site-rules`` step, a robots.txt key, a sitemap entry's origin, a SURT key, a soft-404
probe's path. They read it here: RFC 3986 Appendix B's expression matches *every* string,
so a string that is no absolute URL simply has no scheme or authority.

And the hot-path slicing of an absolute URL already in normal form (``authority_of``,
``origin_of``): no parse per link where a ``find`` is enough.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dustless.errors import InvalidURL

__all__ = [
    "LenientParts",
    "RobotsKey",
    "authority_of",
    "hostname_of",
    "origin_of",
    "port_number",
    "replace_host",
    "robots_key",
    "robots_url",
    "split_authority",
    "split_lenient",
    "with_authority",
]

# RFC 3986 Appendix B: "^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?"
_APPENDIX_B = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)
# RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class LenientParts:
    """The five components of RFC 3986 §3; ``None`` means the component is absent."""

    scheme: str | None
    authority: str | None
    path: str
    query: str | None
    fragment: str | None

    def unsplit(self) -> str:
        # RFC 3986 §5.3 component recomposition.
        out = []
        if self.scheme is not None:
            out.append(self.scheme + ":")
        if self.authority is not None:
            out.append("//" + self.authority)
        out.append(self.path)
        if self.query is not None:
            out.append("?" + self.query)
        if self.fragment is not None:
            out.append("#" + self.fragment)
        return "".join(out)

    @property
    def is_absolute(self) -> bool:
        """A hierarchical absolute URL (``scheme://authority…``)."""
        return (
            self.scheme is not None
            and self.authority is not None
            and _SCHEME.fullmatch(self.scheme) is not None
        )

    @property
    def host(self) -> str:
        """Lowercased host without userinfo and port ("" when there is no authority); an
        IPv6 literal keeps its brackets."""
        return split_authority(self.authority or "")[0]

    @property
    def port(self) -> str | None:
        return split_authority(self.authority or "")[1]


def split_lenient(url: str) -> LenientParts:
    """Split any string into its RFC 3986 components; never raises."""
    m = _APPENDIX_B.fullmatch(url)
    assert m is not None  # Appendix B's expression matches every string
    scheme, authority, path, query, fragment = m.groups()
    return LenientParts(scheme, authority, path or "", query, fragment)


def split_authority(authority: str) -> tuple[str, str | None]:
    """``user@Host:8080`` → (``host``, ``"8080"``); a bracketed IPv6 literal keeps its colons."""
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        if end != -1:
            rest = hostport[end + 1 :]
            return hostport[: end + 1].lower(), (rest[1:] if rest.startswith(":") else None)
    host, colon, port = hostport.partition(":")
    return host.lower(), (port if colon else None)


def replace_host(authority: str, host: str) -> str:
    """The authority with its host replaced, keeping userinfo and port."""
    userinfo, at, hostport = authority.rpartition("@")
    _, port = split_authority(hostport)
    return f"{userinfo}{at}{host}" + (f":{port}" if port is not None else "")


def port_number(port: str | None) -> int | None:
    """The number of a port as ``split_authority`` returns it: None when absent or empty
    (RFC 3986 §3.2.3 allows ``http://h:/``); ValueError unless 0–65535 in ASCII digits."""
    if not port:
        return None
    if not (port.isascii() and port.isdigit()) or int(port) > 65535:
        raise ValueError(f"invalid port {port!r}")
    return int(port)


def _authority_end(url: str, start: int) -> int:
    """Where the authority that begins at ``start`` ends: the first ``/``, ``?`` or ``#``."""
    end = len(url)
    for sep in "/?#":
        pos = url.find(sep, start)
        if 0 <= pos < end:
            end = pos
    return end


def authority_of(url: str) -> str:
    """``host[:port]`` of an absolute URL already in normal form (lowercase host, default port
    removed), any userinfo left out: the key of a host's politeness queue, of its learned
    rules and of its statistics. String slicing only: no parse on the crawler's hot path."""
    start = url.find("://") + 3
    return url[start : _authority_end(url, start)].rpartition("@")[2]


def with_authority(url: str, authority: str) -> str:
    """An absolute URL already in normal form with what ``authority_of`` gives of it
    (``host[:port]``) replaced by ``authority``, any userinfo kept: slicing, as
    ``authority_of``."""
    start = url.find("://") + 3
    end = _authority_end(url, start)
    begin = url.rfind("@", start, end) + 1 or start
    return url[:begin] + authority + url[end:]


def origin_of(url: str) -> str:
    """``scheme://authority`` of an absolute URL: the scope of one robots.txt (slicing, as
    ``authority_of``)."""
    return url[: _authority_end(url, url.find("://") + 3)]


def hostname_of(authority: str) -> str:
    """The host of an ``authority_of`` result: the port left out, an IPv6 literal kept in
    its brackets."""
    if authority.startswith("["):
        return authority[: authority.find("]") + 1]
    colon = authority.rfind(":")
    return authority[:colon] if colon >= 0 else authority


RobotsKey = tuple[str, str, int]


def robots_key(url: str) -> RobotsKey:
    """(scheme, host, port) of ``url``: robots.txt applies per origin (RFC 9309 §2.3). The
    host is lowercased, an IPv6 literal without its brackets; the port is the scheme's
    default when absent. Raises :class:`InvalidURL` for anything but http(s) with a host."""
    parts = split_lenient(url.strip())
    scheme = (parts.scheme or "").lower()
    host, port_text = split_authority(parts.authority or "")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if scheme not in _DEFAULT_PORTS or not host:
        raise InvalidURL("robots.txt needs an http(s) URL with a host", url)
    try:
        port = port_number(port_text)
    except ValueError as exc:
        raise InvalidURL(f"invalid URL for robots.txt: {exc}", url) from None
    return scheme, host, _DEFAULT_PORTS[scheme] if port is None else port


def robots_url(url: str) -> str:
    """The robots.txt URL governing ``url`` (RFC 9309 §2.3: "/robots.txt" at the origin)."""
    scheme, host, port = robots_key(url)
    shown = f"[{host}]" if ":" in host else host
    if port != _DEFAULT_PORTS[scheme]:
        shown = f"{shown}:{port}"
    return f"{scheme}://{shown}/robots.txt"
