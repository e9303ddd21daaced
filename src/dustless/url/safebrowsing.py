"""Google Safe Browsing / Web Risk URL canonicalization and lookup expressions.

Its own pipeline, not a set of steps: Google's rules differ from RFC 3986 on purpose (they
undo every escape, repeatedly, because malware URLs hide behind layers of escaping), so a
URL must be canonicalized exactly as Google does before its hash prefix is looked up.

Sources: the Safe Browsing v4 "URLs and Hashing" documentation (canonicalization and
suffix/prefix expressions, with its table of examples, which are our tests) and the v5
additions for IPv6 hosts (RFC 5952 form; IPv4-mapped and NAT64 addresses become IPv4).
"""

from __future__ import annotations

import ipaddress
import re

from dustless.errors import InvalidURL
from dustless.url._host import ascii_lower

__all__ = ["safebrowsing_canonicalize", "safebrowsing_expressions"]

_ESCAPE_RE = re.compile(rb"%([0-9A-Fa-f]{2})")
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix


def _unescape_fully(data: bytes) -> bytes:
    # "Repeatedly percent-unescape the URL until it has no more percent-escapes."
    while True:
        out = _ESCAPE_RE.sub(lambda m: bytes.fromhex(m.group(1).decode("ascii")), data)
        if out == data:
            return out
        data = out


def _escape(data: bytes, also: bytes = b"") -> str:
    # "Percent-escape all characters that are <= ASCII 32, >= 127, "#", or "%".
    # The escapes should use uppercase hex characters."
    special = b"#%" + also
    return "".join(f"%{b:02X}" if b <= 0x20 or b >= 0x7F or b in special else chr(b) for b in data)


# Google's rules would leave ":" "/" "?" "@" unescaped in a host they decoded ("a%40b.com"),
# and the result would then read as a different host: we escape those four in the host too, so
# that canonicalizing twice gives the same URL. Likewise "[" and "]" outside an IPv6 literal
# ("[x]]y" would read back as the literal "[x]"). No DNS name contains them, so no real lookup
# changes.
_HOST_DELIMITERS = b":/?@[]"


def _ipv4(host: str) -> str | None:
    """inet_aton's reading: 1–4 parts, each decimal, 0x-hex or 0-octal; the last part fills
    the remaining bytes ("3279880203" → 195.127.0.11, "0x7f.1" → 127.0.0.1)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        try:
            if part[:2].lower() == "0x":
                values.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                values.append(int(part, 8))
            else:
                values.append(int(part, 10) if part.isascii() and part.isdigit() else -1)
        except ValueError:
            return None
        if values[-1] < 0:
            return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for i, v in enumerate(head):
        number |= v << (8 * (3 - i))
    return str(ipaddress.IPv4Address(number))


def _canonical_host(host: str, text: bool = True) -> str:
    """``text``: the host's bytes were UTF-8 (else ``host`` is their Latin-1 reading, bytes
    that name no characters: no IDNA, and only ASCII letters are lowercased)."""
    if host.startswith("[") and host.endswith("]"):
        try:
            addr = ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return host.lower()
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        if addr in _NAT64:
            return str(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
        return f"[{addr.compressed}]"
    if text and not host.isascii():
        # "If the URL uses an internationalized domain name, the client should convert
        # the URL to the ASCII Punycode representation." First, as browsers do (WHATWG
        # "host parser"): the mapping can yield digits ("¹" → "1") and dots ("。" → ".").
        import ada_url

        ascii_host = ada_url.idna_to_ascii(host).decode("ascii")
        # A "%" in the ASCII form (punycode moves "%2😀5"'s "%2" and "5" together; UTS #46
        # maps "％" to "%") would read as a new escape when canonicalizing again. Such a
        # host is no DNS name (WHATWG refuses "%" in a domain): its UTF-8 bytes are escaped
        # instead, which canonicalizing again gives back unchanged.
        if ascii_host and "%" not in ascii_host:
            host = ascii_host
    # "Remove all leading and trailing dots. Replace consecutive dots with a single dot."
    # Lowercasing only ASCII letters: str.lower() on what IDNA could not convert (or on
    # bytes read as Latin-1) would change other bytes, and the next pass would read them
    # differently ("Ã" → "ã" turns \xc3\xbc\x80 into valid UTF-8).
    host = re.sub(r"\.{2,}", ".", ascii_lower(host).strip("."))
    ip = _ipv4(host)
    return host if ip is None else ip


def _remove_dots_and_slashes(path: str) -> str:
    # "Resolve the sequences /../ and /./ in the path […] Replace runs of consecutive
    # slashes with a single slash." (Not applied to the query.)
    from dustless.url._pathquery import remove_dot_segments

    return remove_dot_segments(re.sub("/{2,}", "/", path))


def _split(url: str) -> tuple[str, str, str, str | None]:
    """scheme, host, path, query — with Google's leniency: tabs/CR/LF removed, surrounding
    spaces trimmed, the fragment dropped, a missing scheme meaning http, no port, no
    userinfo, and a missing path meaning "/"."""
    url = url.replace("\t", "").replace("\r", "").replace("\n", "").strip(" ")
    url = url.partition("#")[0]
    m = _SCHEME_RE.match(url)
    if m is not None:
        scheme, rest = m.group(1).lower(), url[m.end() :]
    else:
        scheme, rest = "http", url
    cut = len(rest)
    for sep in "/?":
        i = rest.find(sep)
        if 0 <= i < cut:
            cut = i
    authority, tail = rest[:cut], rest[cut:]
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        host = host[: host.find("]") + 1] if "]" in host else host
    else:
        host = host.partition(":")[0]  # a reg-name has no ":"; the rest is the port
    path, qmark, query = tail.partition("?")
    return scheme, host, path or "/", (query if qmark else None)


def safebrowsing_canonicalize(url: str | bytes) -> str:
    """The canonical form Safe Browsing hashes (v4 canonicalization + v5 IPv6 rules).

    Bytes that are not UTF-8 are kept, escaped: ``b"http://\x01\x80.com/"`` gives
    ``http://%01%80.com/`` (Google's example, which its table writes in raw bytes)."""
    from dustless.url._parse import as_text

    url = as_text(url)
    scheme, host, path, query = _split(url)
    raw_host = _unescape_fully(host.encode("utf-8", "surrogatepass"))
    try:
        canonical_host = _canonical_host(raw_host.decode("utf-8"))
        host_bytes = canonical_host.encode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        # Not UTF-8 once unescaped: Google escapes the raw bytes (its "\x01\x80.com" example).
        canonical_host = _canonical_host(raw_host.decode("latin-1"), text=False)
        host_bytes = canonical_host.encode("latin-1")
    if not canonical_host:
        raise InvalidURL("missing host", url)
    is_literal = canonical_host.startswith("[") and canonical_host.endswith("]")
    host_out = _escape(host_bytes, b"" if is_literal else _HOST_DELIMITERS)
    raw_path = _unescape_fully(path.encode("utf-8", "surrogatepass"))
    path_out = _escape(_remove_dots_and_slashes(raw_path.decode("latin-1")).encode("latin-1"))
    out = f"{scheme}://{host_out}{path_out}"
    if query is not None:
        out += "?" + _escape(_unescape_fully(query.encode("utf-8", "surrogatepass")))
    return out


def safebrowsing_expressions(url: str | bytes) -> list[str]:
    """The host-suffix × path-prefix expressions Google documents for lookups, in its order.

    Hosts: the exact host, then up to four formed from the last five components by removing
    the leading one each time, never the top-level domain alone (none for an IP address).
    Paths: the exact path with the query, without it, then up to four prefixes from "/"
    adding one component each time with a trailing slash. ``a.b.c/1/2.html?param=1`` gives
    ``a.b.c/1/2.html?param=1, a.b.c/1/2.html, a.b.c/, a.b.c/1/, b.c/1/2.html?param=1, …``.
    """
    canonical = safebrowsing_canonicalize(url)
    rest = canonical.split("://", 1)[1]
    slash = rest.find("/")
    host, path_query = rest[:slash], rest[slash:]
    path, qmark, _query = path_query.partition("?")

    hosts = [host]
    is_ip = host.startswith("[") or _ipv4(host) == host
    if not is_ip:
        labels = host.split(".")
        for k in range(min(5, len(labels) - 1), 1, -1):
            candidate = ".".join(labels[-k:])
            if candidate != host:
                hosts.append(candidate)

    paths = [path_query] if qmark else []
    paths.append(path)
    segments = path.split("/")[1:-1]  # directories of the path, without the last segment
    prefix = "/"
    prefixes = [prefix]
    for seg in segments[:3]:
        prefix += seg + "/"
        prefixes.append(prefix)
    for p in prefixes:
        if p not in paths:
            paths.append(p)

    return [h + p for h in hosts for p in paths]
