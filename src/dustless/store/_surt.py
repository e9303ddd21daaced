"""SURT keys: the sort key of a CDXJ line, as web archives compute it.

A replay tool (pywb, OpenWayback, the Wayback Machine) looks a URL up by canonicalizing it
and reversing its host into a SURT ("Sort-friendly URI Reordering Transform"):
``http://www.Example.com:8080/A/b/?q=2&p=1#x`` → ``com,example:8080)/a/b?p=1&q=2``. Our key
must equal theirs, or a replay finds nothing; the steps are the Internet Archive's default
canonicalization, which pywb applies through the ``surt`` package:

* Google's safe-browsing clean-up: drop the fragment, unescape percent-escapes repeatedly,
  then escape once what is outside printable ASCII (and ``%``, ``#``); resolve ``.`` and
  ``..`` path segments; lowercase the host; dotted IPv4 forms as four decimals;
* then the IA's: strip ``www``/``wwwN.``, user info and the default port; lowercase path and
  query; drop ``jsessionid``/``phpsessid``/``sid``/ASP session ids; drop a trailing slash
  (but not the root's); sort the query's ``name=value`` pairs.

``tests/store/test_cdxj.py`` checks ours against the ``surt`` package on a list of URLs.
"""

from __future__ import annotations

import contextlib
import re
from urllib.parse import quote_from_bytes, unquote_to_bytes

from dustless.url import port_number, split_authority, split_lenient

__all__ = ["surt_key"]

_SAFE = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~"
_WWW = re.compile(rb"www\d*\.")
_SPACES = re.compile(rb"[\t\r\n]")
_QUERY_SESSION = [
    re.compile(rb"^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$", re.I),
    re.compile(rb"^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$", re.I),
    re.compile(rb"^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$", re.I),
    re.compile(rb"^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$", re.I),
    re.compile(rb"^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$", re.I),
]
_PATH_SESSION = [
    re.compile(rb"^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$", re.I),
    re.compile(rb"^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$", re.I),
]
_DEFAULT_PORT = {b"http": 80, b"https": 443}


def _unescape(data: bytes) -> bytes:
    while True:
        un = unquote_to_bytes(data)
        if un == data:
            return data
        data = un


def _escape(data: bytes) -> bytes:
    return quote_from_bytes(data, safe=_SAFE).encode("ascii")


def _dot_segments(path: bytes) -> bytes:
    kept: list[bytes] = []
    for seg in path.split(b"/")[1:]:
        if seg == b".":
            continue
        if seg == b"..":
            if kept:
                kept.pop()
            else:
                kept.append(seg)
            continue
        kept.append(seg)
    if not kept:
        return b"/"
    # Empty segments collapse, except the last one (a trailing slash).
    return b"/" + b"".join(s + b"/" for s in kept[:-1] if s) + kept[-1]


def _sorted_query(query: bytes) -> bytes:
    pairs = sorted(tuple(arg.split(b"=", 1)) for arg in query.split(b"&"))
    return b"&".join(b"=".join(p) for p in pairs)


def surt_key(url: str) -> str:
    """The SURT key of ``url`` (no scheme, as CDXJ keys are written)."""
    # UTF-8 bytes seen as latin-1 text: the escaping below works on bytes, and this round-trips.
    raw = _SPACES.sub(b"", url.strip().encode("utf-8")).decode("latin-1")
    parts = split_lenient(raw)
    hostname, port_text = split_authority(parts.authority or "")
    try:
        port = port_number(port_text)
    except ValueError:
        return url
    # Most URLs a crawl stores are printable ASCII without a percent sign or a space: for them
    # unescaping and escaping change nothing (``_SAFE`` keeps every other printable character),
    # and skipping the two passes saves about a third of the key's time.
    plain = raw.isascii() and raw.isprintable() and "%" not in raw and " " not in raw
    scheme = (parts.scheme or "").lower().encode("latin-1")
    host = hostname.removeprefix("[").removesuffix("]").encode("latin-1")
    if not host:
        return url
    # Google canonicalization: host.
    if not plain:
        host = _unescape(host)
        try:
            host.decode("ascii")
        except UnicodeDecodeError:
            with contextlib.suppress(UnicodeError):
                host = host.decode("utf-8", "ignore").encode("idna")
    host = host.replace(b"..", b".").strip(b".")
    if host.isdigit():
        n = int(host) & 0xFFFFFFFF
        host = b".".join(str(n >> s & 255).encode() for s in (24, 16, 8, 0))
    else:
        host = host.lower() if plain else _escape(host.lower())
    # Google canonicalization: path and query.
    path = parts.path.encode("latin-1")
    query = (parts.query or "").encode("latin-1")
    if plain:
        path = _dot_segments(path)
    else:
        path = _escape(_dot_segments(_unescape(path)))
        query = _escape(_unescape(query)) if query else b""
    # IA canonicalization.
    if m := _WWW.match(host):
        host = host[m.end() :]
    if port == _DEFAULT_PORT.get(scheme):
        port = None
    path = path.lower()
    # (Each session pattern needs its mark in the text: most URLs skip the regex passes.)
    for pattern in _PATH_SESSION if b"(" in path else ():
        if pm := pattern.match(path):
            path = pm.group(1) + pm.group(3)
    if len(path) > 1 and path.endswith(b"/"):
        path = path[:-1]
    if query:
        query = query.lower()  # (the session patterns ignore case)
        marked = b"sid" in query or b"sessionid" in query or b"cfid" in query
        for pattern in _QUERY_SESSION if marked else ():
            if qm := pattern.match(query):
                query = qm.group(1) + (qm.group(2) or b"")
        if len(query) > 1:
            query = _sorted_query(query)
    key = b",".join(reversed(host.split(b".")))
    if port is not None:
        key += b":%d" % port
    key += b")" + path
    if query:
        key += b"?" + query
    return key.decode("utf-8", "replace")
