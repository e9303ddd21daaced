"""Links from HTML (pure): every URL a document points to, with seed 004's link kinds.

``extract_links(body, url, content_type)`` decodes the bytes (BOM, Content-Type, ``<meta>``;
bad encodings never raise), parses them with selectolax (Lexbor), honours ``<base href>``,
resolves each reference with ``dustless.url.resolve`` and keeps only http(s) URLs, counting
them per kind (004 Table 13: ``f`` frame, ``a`` anchor, ``h`` everything else).
``content_fingerprint`` is a document's near-duplicate identity (MinHash of its visible text).
"""

from __future__ import annotations

from dustless.extract._canonical import (
    canonical_from_link_headers,
    declared_canonical,
    one_canonical,
)
from dustless.extract._charset import decode_html, sniff_encoding
from dustless.extract._fingerprint import (
    FINGERPRINT_BYTES,
    NEAR_THRESHOLD,
    content_fingerprint,
    fingerprint_text,
    is_near,
    main_text,
    similarity,
    visible_text,
)
from dustless.extract._guard import DEFAULT_MAX_TAGS, MAX_DEPTH
from dustless.extract._links import extract_links, parse_refresh
from dustless.extract._types import Extraction, Link, LinkKind

__all__ = [
    "DEFAULT_MAX_TAGS",
    "FINGERPRINT_BYTES",
    "MAX_DEPTH",
    "NEAR_THRESHOLD",
    "Extraction",
    "Link",
    "LinkKind",
    "canonical_from_link_headers",
    "content_fingerprint",
    "declared_canonical",
    "decode_html",
    "extract_links",
    "fingerprint_text",
    "is_near",
    "main_text",
    "one_canonical",
    "parse_refresh",
    "similarity",
    "sniff_encoding",
    "visible_text",
]
