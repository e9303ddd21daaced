"""Reference resolution the way browsers do it (WHATWG URL standard), then the rfc3986 form.

A link in a page means what a browser makes of it, so resolution follows WHATWG rather than
RFC 3986 §5.2 where they disagree (``http:g`` against an http base is relative for WHATWG;
backslashes are slashes; tabs and newlines are dropped). ``ada_url`` is the reference
implementation of that standard (used by Node.js), so it does the resolving.
"""

from __future__ import annotations

from dustless.errors import InvalidURL

__all__ = ["resolve"]


def resolve(base: str | None, reference: str) -> str:
    """Absolute URL of ``reference`` found in a page at ``base``; raises :class:`InvalidURL`.

    With no ``base`` (``None`` or ""), ``reference`` must itself be absolute.

    URLs with a host come back in their ``rfc3986`` form (what the crawler fetches, see
    ARCHITECTURE). URLs without one (``mailto:``, ``data:``, ``javascript:``, ``file:///``)
    have no RFC 3986 authority to normalize: they come back as WHATWG serializes them, and
    :func:`~dustless.url.normalize` would refuse them.
    """
    import ada_url

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

    return normalize(href, "rfc3986")
