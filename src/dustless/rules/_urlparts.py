"""Just enough URL splitting for the rules, without depending on ``dustless.url``.

The rules run inside the normalizer's ``site-rules`` step, on URLs the normalizer has
already parsed, and must never raise (an ``apply`` that throws would lose a URL). So this
module uses RFC 3986 Appendix B's regular expression, which matches *every* string, and
never validates: a string that is not an absolute URL simply has no scheme or authority.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

__all__ = [
    "Parts",
    "encode_unsafe",
    "query_pieces",
    "replace_host",
    "split",
    "split_authority",
]

# RFC 3986 Appendix B: "^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?"
_APPENDIX_B = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)
# RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")

# RFC 3986 §2.2 reserved + §2.3 unreserved + "%" (an escape already made): what a URI may hold.
_URI_CHARS = ":/?#[]@!$&'()*+,;=%-._~"


@dataclass(frozen=True, slots=True)
class Parts:
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
        """A hierarchical absolute URL (``scheme://authority…``): what url patterns match."""
        return (
            self.scheme is not None
            and self.authority is not None
            and _SCHEME.fullmatch(self.scheme) is not None
        )

    @property
    def host(self) -> str:
        """Lowercased host without userinfo and port ("" when there is no authority)."""
        return split_authority(self.authority or "")[0]

    @property
    def port(self) -> str | None:
        return split_authority(self.authority or "")[1]


def split(url: str) -> Parts:
    """Split any string into its RFC 3986 components; never raises."""
    m = _APPENDIX_B.fullmatch(url)
    assert m is not None  # Appendix B's expression matches every string
    scheme, authority, path, query, fragment = m.groups()
    return Parts(scheme, authority, path or "", query, fragment)


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


def encode_unsafe(text: str) -> str:
    """Percent-encode (as UTF-8) what may not appear in a URI; keep everything else as is.

    The same as the normalizer's ``encode-unsafe`` step, so that a script written with
    Korean text in it (seed 002 Fig. 7) matches the URLs the normalizer produces.
    Idempotent: an already-encoded string comes back unchanged.
    """
    return quote(text, safe=_URI_CHARS)


def query_pieces(query: str) -> list[tuple[str, str | None]]:
    """``a=1&b&c=`` → [("a", "1"), ("b", None), ("c", "")]; empty pieces are skipped."""
    out: list[tuple[str, str | None]] = []
    for piece in query.split("&"):
        if not piece:
            continue
        name, eq, value = piece.partition("=")
        out.append((name, value if eq else None))
    return out
