"""Reference resolution the way browsers do it (WHATWG URL standard), then the rfc3986 form.

A link in a page means what a browser makes of it, so resolution follows WHATWG rather than
RFC 3986 §5.2 where they disagree (``http:g`` against an http base is relative for WHATWG;
backslashes are slashes; tabs and newlines are dropped). ``ada_url`` is the reference
implementation of that standard (used by Node.js), so it does the resolving.
"""

from __future__ import annotations

from dustless.errors import InvalidURL
from dustless.url._encoding import encode_query
from dustless.url._parse import BAD_ESCAPE_RE, as_text

__all__ = ["resolve"]


def resolve(base: str | None, reference: str, encoding: str = "utf-8") -> str:
    """Absolute URL of ``reference`` found in a page at ``base``; raises :class:`InvalidURL`.

    With no ``base`` (``None`` or ""), ``reference`` must itself be absolute. ``encoding`` is
    the page's (a label such as ``euc-kr``): the query of an http(s) link is encoded with it,
    the rest as UTF-8, as browsers do (WHATWG URL "encoding-parse"; see ``_encoding.py``).
    Surrogate escapes are read as the bytes they stand for (see ``as_text``).

    URLs with a host come back in their ``rfc3986`` form (what the crawler fetches, see
    ARCHITECTURE); a ``%`` that starts no escape is written ``%25`` (RFC 3986 §2.4). URLs
    without a host (``mailto:``, ``data:``, ``javascript:``, ``file:///``) have no RFC 3986
    authority to normalize: they come back as WHATWG serializes them, and
    :func:`~dustless.url.normalize` would refuse them.
    """
    import ada_url

    if not reference.isascii():
        reference = as_text(reference)
        if encoding != "utf-8":
            reference = encode_query(reference, base[: base.find(":")] if base else "", encoding)
    if base and not base.isascii():
        base = as_text(base)
    try:
        href: str = ada_url.join_url(base, reference) if base else ada_url.URL(reference).href
    except ValueError:
        raise InvalidURL(f"cannot resolve {reference!r} against {base!r}", reference) from None
    scheme_end = href.find(":")
    if not href.startswith("//", scheme_end + 1):
        return href
    host_start = scheme_end + 3
    if host_start >= len(href) or href[host_start] in "/?#":
        return href  # an empty host, as in file:///etc/hosts
    from dustless.url._normalize import normalize

    if "%" in href and BAD_ESCAPE_RE.search(href) is not None:
        # A "%" that starts no escape (`?q=100%`, `/foo%zz`): WHATWG keeps it and a browser
        # follows the link, sending the byte as it is; RFC 3986 §2.1 has no such URI. §2.4
        # writes a "%" meant as data as %25 — what a lenient server decodes the raw byte to,
        # and what a strict one (400 for a bad escape) needs. normalize() itself still refuses
        # such a string: given as a URL it is an error of the caller, found in a page it is
        # a link that browsers follow. (An http(s) host never holds "%" here: WHATWG decodes
        # it and refuses the host.)
        href = BAD_ESCAPE_RE.sub("%25", href)
    return normalize(href, "rfc3986")
