"""RFC 3986 splitting and validation of absolute URLs.

Only URLs with an authority (``scheme://host…``) are accepted: dustless normalizes URLs a
crawler can fetch, so a URL without a scheme or a host is an error (``InvalidURL``), not a
guess. The regular expressions follow RFC 3986 Appendix B, tightened to the ABNF of §3.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from dustless.errors import InvalidURL

__all__ = ["URLParts", "as_text", "split_url"]


@dataclass(frozen=True, slots=True)
class URLParts:
    """The RFC 3986 §3 components of an absolute URL, as written (nothing decoded)."""

    scheme: str
    userinfo: str | None
    host: str
    port: int | None
    path: str
    query: str | None
    fragment: str | None


# RFC 3986 Appendix B, with the scheme restricted to §3.1
#   scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
# and the authority required (the "//" group is optional here only so that a missing
# authority can be reported as "missing host" rather than as a mismatch).
URL_RE = re.compile(
    r"([A-Za-z][A-Za-z0-9+.\-]*):(//[^/?#]*)?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S
)

# scheme "://" authority: the part of a URL that Normalizer caches per distinct spelling.
PREFIX_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/?#]*")

# RFC 3986 §2.1: pct-encoded = "%" HEXDIG HEXDIG; a "%" not followed by two hex digits.
BAD_ESCAPE_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")

# RFC 3986 §3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims ). Non-ASCII letters are
# allowed here too: they are an IRI host (RFC 3987) that idna-host turns into punycode.
# Spelled as the ASCII characters it excludes: a class over all of Unicode takes 5 ms to
# compile, which every `dustless normalize` start-up would pay.
_REG_NAME_BAD_RE = re.compile(r"[\x00-\x20\"<>\[\\\]^`{|}\x7f:]")

# §3.2.3: port = *DIGIT
_PORT_RE = re.compile(r"[0-9]*")

# Lone surrogates. Python's "surrogateescape" error handler (used for sys.argv, file names, and
# by us for stdin) turns each byte that is not part of valid UTF-8 into U+DC80–U+DCFF: such a
# character *is* that byte. Any other lone surrogate is no character at all.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_BYTE_ESCAPES = {chr(0xDC00 + b): f"%{b:02X}" for b in range(0x80, 0x100)}


def as_text(url: str | bytes) -> str:
    """``url`` as text the steps can work on: bytes and escaped bytes become ``%XX``.

    A URL found in a crawl log is bytes, not always UTF-8. RFC 3986 §2.1 writes a byte as
    ``%XX``, and RFC 3987 §3.1 maps characters to their UTF-8 bytes: so valid UTF-8 is read as
    characters (encode-unsafe writes them as the same bytes), and each byte that is not part
    of valid UTF-8 is written ``%XX`` — ``b"http://\x01\x80.com/"`` gives
    ``"http://\x01%80.com/"``, which keeps the byte (Google's Safe Browsing example). A
    ``str`` holding surrogate escapes (U+DC80–U+DCFF, what ``surrogateescape`` made of such
    bytes) is read the same way; any other lone surrogate raises :class:`InvalidURL`.
    """
    if isinstance(url, bytes):
        url = url.decode("utf-8", "surrogateescape")
    if url.isascii() or _SURROGATE_RE.search(url) is None:
        return url
    out = []
    for pos, char in enumerate(url):
        if "\ud800" <= char <= "\udfff":
            escape = _BYTE_ESCAPES.get(char)
            if escape is None:
                raise InvalidURL(f"lone surrogate U+{ord(char):04X} at {pos}", url, pos)
            out.append(escape)
        else:
            out.append(char)
    return "".join(out)


# C0 controls and space, stripped at both ends: RFC 3986 Appendix C says whitespace around a
# URI found in text is not part of it (and WHATWG strips the same set).
STRIP = "".join(chr(c) for c in range(0x21))


@dataclass(slots=True)
class Parts:
    """Mutable working form used by the steps. ``port`` stays a string ("" = empty port)."""

    scheme: str
    userinfo: str | None
    host: str
    port: str | None
    path: str
    query: str | None
    fragment: str | None

    def prefix(self) -> str:
        """``scheme://authority``."""
        auth = self.host if self.userinfo is None else f"{self.userinfo}@{self.host}"
        if self.port is not None:
            auth = f"{auth}:{self.port}"
        return f"{self.scheme}://{auth}"

    def tail(self) -> str:
        out = self.path
        if self.query is not None:
            out = f"{out}?{self.query}"
        if self.fragment is not None:
            out = f"{out}#{self.fragment}"
        return out

    def unsplit(self) -> str:
        return self.prefix() + self.tail()


def check_escapes(text: str, url: str, offset: int) -> None:
    """Raise on a "%" that does not start an escape (RFC 3986 §2.1); ``offset`` locates text."""
    if "%" in text:
        bad = BAD_ESCAPE_RE.search(text)
        if bad is not None:
            pos = offset + bad.start()
            raise InvalidURL(f"bad percent-escape at {pos}", url, pos)


def _check_host(host: str, url: str, offset: int) -> None:
    if host.startswith("["):
        # RFC 3986 §3.2.2: IP-literal = "[" ( IPv6address / IPvFuture ) "]"
        if not host.endswith("]"):
            raise InvalidURL(f"unclosed IPv6 literal at {offset}", url, offset)
        inner = host[1:-1]
        if inner[:1] in ("v", "V"):
            if not re.fullmatch(r"[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+", inner):
                raise InvalidURL(f"invalid IP literal {host!r} at {offset}", url, offset)
            return
        addr, _, zone = inner.partition("%25")  # RFC 6874 zone identifier
        try:
            ipaddress.IPv6Address(addr)
        except ValueError:
            raise InvalidURL(f"invalid IPv6 address {host!r} at {offset}", url, offset) from None
        if zone:
            check_escapes(zone, url, offset + len(addr) + 4)
        return
    bad = _REG_NAME_BAD_RE.search(host)
    if bad is not None:
        pos = offset + bad.start()
        raise InvalidURL(f"invalid character {bad.group()!r} in host at {pos}", url, pos)
    check_escapes(host, url, offset)


def parse(url: str, strip: bool = True) -> Parts:
    """Split and validate an absolute URL into :class:`Parts` (nothing normalized).

    ``strip=False`` is for a URL already stripped (a cached prefix): whitespace left at its
    ends is then inside the URL, and an error. ``url`` has been through :func:`as_text`."""
    stripped = url.strip(STRIP) if strip else url
    lead = url.find(stripped[:1]) if stripped else 0
    m = URL_RE.match(stripped)
    if m is None:
        if not stripped:
            raise InvalidURL("empty URL", url, 0)
        raise InvalidURL("missing scheme", url, lead)
    scheme, authority, path, query, fragment = m.groups()
    if authority is None:
        pos = lead + m.end(1) + 1
        raise InvalidURL("missing host", url, pos)
    auth_start = lead + m.start(2) + 2
    authority = authority[2:]
    userinfo: str | None = None
    host = authority
    host_start = auth_start
    at = authority.rfind("@")
    if at >= 0:
        userinfo = authority[:at]
        host = authority[at + 1 :]
        host_start = auth_start + at + 1
        check_escapes(userinfo, url, auth_start)
    port: str | None = None
    if host.startswith("["):
        close = host.find("]")
        if close >= 0 and close + 1 < len(host):
            if host[close + 1] != ":":
                pos = host_start + close + 1
                raise InvalidURL(
                    f"unexpected {host[close + 1]!r} after IPv6 literal at {pos}", url, pos
                )
            port = host[close + 2 :]
            host = host[: close + 1]
    else:
        colon = host.rfind(":")
        if colon >= 0:
            port = host[colon + 1 :]
            host = host[:colon]
    if not host:
        raise InvalidURL("missing host", url, host_start)
    _check_host(host, url, host_start)
    if port and (_PORT_RE.fullmatch(port) is None or int(port) > 65535):
        pos = host_start + len(host) + 1
        raise InvalidURL(f"invalid port {port!r}", url, pos)
    tail_start = lead + m.end(2)
    check_escapes(path, url, tail_start)
    if query is not None:
        check_escapes(query, url, lead + m.start(4))
    if fragment is not None:
        check_escapes(fragment, url, lead + m.start(5))
    return Parts(scheme, userinfo, host, port, path, query, fragment)


def split_url(url: str | bytes) -> URLParts:
    """The RFC 3986 components of an absolute URL with a host; raises :class:`InvalidURL`."""
    p = parse(as_text(url))
    return URLParts(
        scheme=p.scheme,
        userinfo=p.userinfo,
        host=p.host,
        port=int(p.port) if p.port else None,
        path=p.path,
        query=p.query,
        fragment=p.fragment,
    )
