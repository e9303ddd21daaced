"""The canonical URL a response declares (RFC 6596), from its ``Link`` header (pure).

RFC 6596 §3 defines the ``canonical`` link relation: the target is the preferred URI of the
context's content, where the page is "a duplicate or a superset" of it. A page declares it in
HTML with ``<link rel="canonical" href=…>`` (read by ``extract_links``, ``Extraction``'s
``canonical``) or in an HTTP header, ``Link: <https://h/a>; rel="canonical"`` (RFC 8288 §3,
the only way for a non-HTML representation such as a PDF). dustless records it per fetch as
*evidence* about the site's URL equivalences (``docs/learning.md``), never as an order: a
misconfigured site may declare every page canonical to its home page.

Two declarations that disagree say nothing (search engines ignore such hints, and RFC 6596
§6.1 warns against several canonicals): :func:`one_canonical` gives ``None`` for them.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["canonical_from_link_headers", "declared_canonical", "one_canonical"]

_OWS = " \t"


def _rel_is_canonical(params: str) -> bool:
    """Whether the link-params of one link-value (``; rel="canonical"; …``) say canonical.

    RFC 8288 §3.3: ``rel`` is a space-separated list of relation types, case-insensitive,
    quoted or as a token; only the first ``rel`` parameter counts.
    """
    for param in _split(params, ";"):
        name, eq, value = param.partition("=")
        if name.strip(_OWS).lower() != "rel" or not eq:
            continue
        value = value.strip(_OWS)
        if value[:1] == '"':
            value = value[1:].split('"', 1)[0]
        return "canonical" in value.lower().split()
    return False


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside double quotes and angle brackets."""
    out: list[str] = []
    start = 0
    quoted = angled = False
    i = 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "<":
            angled = True
        elif c == ">":
            angled = False
        elif c == sep and not angled:
            out.append(text[start:i])
            start = i + 1
        i += 1
    out.append(text[start:])
    return out


def canonical_from_link_headers(values: Iterable[str], base: str) -> str | None:
    """The canonical target of the ``Link`` header field values, resolved against ``base``
    (the request URL, RFC 8288 §3.2); ``None`` when there is none, or several disagree."""
    from dustless.url import resolve

    found: list[str] = []
    for value in values:
        for link in _split(value, ","):
            link = link.strip(_OWS)
            if not link.startswith("<") or ">" not in link:
                continue
            target, _, params = link[1:].partition(">")
            if not _rel_is_canonical(params):
                continue
            try:
                url = resolve(base, target.strip(_OWS))
            except ValueError:  # InvalidURL: a declaration no client could follow
                continue
            if url.startswith(("http://", "https://")):
                found.append(url.split("#", 1)[0])
    return one_canonical(found)


def one_canonical(urls: Iterable[str | None]) -> str | None:
    """The one canonical URL among declarations (``None`` entries: none made), or ``None``
    when there is none or they disagree."""
    distinct = {u for u in urls if u}
    return distinct.pop() if len(distinct) == 1 else None


def declared_canonical(
    headers: Iterable[tuple[str, str]], url: str, in_html: str | None
) -> str | None:
    """What a response at ``url`` declares canonical: its ``Link`` header's and its HTML's
    (``in_html``) declarations together, ``None`` when none is made or they disagree."""
    links = [v for k, v in headers if len(k) == 4 and k.lower() == "link"]
    if not links:
        return in_html
    return one_canonical((canonical_from_link_headers(links, url), in_html))
