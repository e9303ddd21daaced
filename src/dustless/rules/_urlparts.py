"""The rules' own readings of URL text: a script's literal text encoded as the normalizer
writes URLs, and a query's pieces as a pattern matches them.

The URL itself is split by ``dustless.url.split_lenient``: the rules run inside the
normalizer's ``site-rules`` step and must never raise (an ``apply`` that throws would lose
a URL), and that reading never does.
"""

from __future__ import annotations

from urllib.parse import quote

__all__ = ["encode_unsafe", "query_pieces"]

# RFC 3986 §2.2 reserved + §2.3 unreserved + "%" (an escape already made): what a URI may hold.
_URI_CHARS = ":/?#[]@!$&'()*+,;=%-._~"


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
