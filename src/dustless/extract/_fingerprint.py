"""A near-duplicate fingerprint of a document's visible text (pure: bytes in, bytes out).

Two fetches are "the same document" for a reader when their text is (nearly) the same, even
if their bytes differ: a clock, a request nonce, a CSRF field, a rotating ad, or links that
name the host they were served from. A SHA-1 calls all of those different (seed 000 §3
counts distinct payload hashes); this fingerprint does not.

The method is MinHash over word shingles (Broder, "On the resemblance and containment of
documents", 1997: the resemblance of two documents is the Jaccard similarity of their sets
of w-word shingles, w = 3 here; Broder et al. WWW 1997 cluster the web at a resemblance
threshold). What is hashed:

* the text of the main content (``_maincontent``): the site's template — header,
  navigation, sidebars, footer, copyright line, lists of links — is not the document, so a
  printer, mobile or AMP page of an article is the article, and two short articles in one
  heavy template are not alike;
* visible text only: markup, comments, ``<script>``, ``<style>``, ``<noscript>``,
  ``<template>`` and attribute values (CSRF tokens, URLs) are not text;
* words of letters only, lower-cased: a token with a digit in it (a date, a time, a counter,
  a session or request id) is the part of a page that changes between two requests, so it
  is left out, as near-duplicate detectors strip such noise before shingling;
* shingles within a block, never across two (version 3): a listing's items, a table's cells,
  a heading and its paragraph are each their own run of words, so the same titles sorted
  the other way, or shown as a grid instead of a list, are the same set of shingles (the
  consecutive-word shingles of version 2 put such listings at J ≈ 0.1–0.35). An article
  loses only the windows that spanned two paragraphs; a block's first and last two words
  give a window each, a one-word block one window whole.

The sketch is 128 MinHash values (``rensa``'s R-MinHash, a Rust implementation; written in
Python it cost ~4× as much per page: bench/fingerprint_bench.py), each kept as its lowest
8 bits: a b-bit MinHash (Li & König, WWW 2010), 128 bytes a fetch. Two sketches agree in a
position with probability J + (1 − J)/256, so ``similarity`` unbiases the share of agreeing
positions; its standard error is about √(J(1 − J)/128), 0.02 at J = 0.95.

Near-duplicate: estimated resemblance ≥ :data:`NEAR_THRESHOLD` (0.8). A page whose rotating
ad swaps 6 of 260 words keeps J ≈ 0.94; two short articles of a templated site whose
boilerplate is twice their text had J ≈ 0.5 by their whole text, ≈ 0 by their main content.
"""

from __future__ import annotations

import sys
from array import array
from itertools import compress, repeat
from operator import ne

from rensa import RMinHash as _RMinHash
from selectolax.lexbor import LexborHTMLParser

from dustless.extract._charset import decode_document, decode_html
from dustless.extract._guard import DEFAULT_MAX_TAGS
from dustless.extract._maincontent import BLOCK_BREAK
from dustless.extract._prepare import prepare
from dustless.extract._visible import all_text, tree_text

__all__ = [
    "FINGERPRINT_BYTES",
    "NEAR_THRESHOLD",
    "content_fingerprint",
    "fingerprint_text",
    "is_near",
    "main_text",
    "similarity",
    "visible_text",
]

# The first byte of every fingerprint: a later scheme never compares with this one. 4: the
# main content leaves out what one template of a page has and another not (a masthead, a
# tool line of links, a sidebar's listing before the heading); 3: the shingles are taken
# within each block of the main content; 2 ran them across blocks; 1 hashed the whole
# visible text.
VERSION = 4
PERMUTATIONS = 128
FINGERPRINT_BYTES = 1 + PERMUTATIONS
NEAR_THRESHOLD = 0.8
SHINGLE = 3
_SEED = 20070508  # fixed: fingerprints of two crawls compare (Manku et al., WWW 2007's date)
_CHANCE = 1.0 / 256  # two random 8-bit values agree this often
_VERSION_BYTE = bytes((VERSION,))

# ASCII punctuation becomes a space before the text is split (one byte table, C speed): "end."
# and "(see" give "end" and "see"; non-ASCII text passes through untouched.
_ASCII_PUNCT = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_SPACES = bytes.maketrans(_ASCII_PUNCT, b" " * len(_ASCII_PUNCT))
_TEXT_TYPES = frozenset({"text/plain"})
# A block break becomes this word twice (``_shingles``): upper-case ASCII, which the
# lower-cased text never holds, and letters, which the word filter keeps.
_MARK = b"Q"
_BREAK_WORDS = b" Q Q "
_BREAK = BLOCK_BREAK.encode()
_NBSP = "\xa0".encode()  # str.split() splits at it, bytes.split() does not


def _parse(body: bytes, content_type: str | None) -> tuple[LexborHTMLParser, str]:
    # parsed as link extraction parses it (the same decoding, the same budget of tags)
    text, _encoding = decode_document(body, content_type)
    text, _flattened, _over = prepare(text, DEFAULT_MAX_TAGS)
    return LexborHTMLParser(text), text


def visible_text(body: bytes, content_type: str | None = None) -> str:
    """The text a browser shows for an HTML document (``extract._visible``), template and
    all."""
    parser, text = _parse(body, content_type)
    return all_text(parser, text.lower())


def main_text(body: bytes, content_type: str | None = None) -> str:
    """The text of an HTML document's main content (``extract._maincontent``): what its
    fingerprint hashes, and what the crawl reads from extraction's tree
    (``Extraction.text``), so the two agree."""
    parser, _text = _parse(body, content_type)
    return tree_text(parser, "")


def _tokens(text: str) -> list[str]:
    """Words of letters only, lower-cased: "9f2c" and "12:05" give nothing (not "f", "c")."""
    spaced = text.lower().encode("utf-8", "replace").translate(_SPACES).decode("utf-8")
    return [w for w in spaced.split() if w.isalpha()]


def _shingles(text: str) -> list[bytes]:
    """The ``SHINGLE``-word shingles of ``text`` (UTF-8), none across a :data:`BLOCK_BREAK`.

    Each break becomes a marker word twice, and a window whose middle word is a marker is
    left out, so every window kept holds words of one block only: ``a b Q``, ``Q c d``
    (where a block ends and starts, two words each), ``Q a Q`` (a one-word block whole),
    while ``b Q Q`` and ``Q Q c`` (one word, as common to other pages as "the": they put
    64 pairs of different real documents over the threshold) and nothing that pairs two
    blocks are taken. One pass over the words (a loop per block cost 35 %
    more), on UTF-8 bytes (splitting and joining them costs less than a ``str`` with any
    non-ASCII in it); a word with non-ASCII bytes is read as text to tell whether it is
    letters only."""
    spaced = text.lower().encode("utf-8", "replace").translate(_SPACES)
    blocks = _BREAK in spaced
    if blocks:
        # a break after the last of several blocks too (version 4): its last words make a
        # window as every block's do, so a listing's windows are the same whichever item
        # comes last (version 3 left it out, and a sorted listing agreed only through the
        # tool line of links after it, which version 4's main content leaves out). A page
        # of one block (an article's one paragraph) gives the windows it gave before blocks:
        # its last words are no more window than they were.
        many = spaced.count(_BREAK) > 1
        spaced = spaced.replace(_BREAK, _BREAK_WORDS) + (_BREAK_WORDS if many else b"")
    if spaced.isascii():
        words = list(filter(bytes.isalpha, spaced.split()))  # a C loop, not a Python one
    else:
        if _NBSP in spaced:
            spaced = spaced.replace(_NBSP, b" ")
        words = [
            w
            for w in spaced.split()
            if w.isalpha() or (not w.isascii() and w.decode("utf-8", "replace").isalpha())
        ]
    windows = zip(words, words[1:], words[2:], strict=False)
    if blocks:
        return list(map(b" ".join, compress(windows, map(ne, words[1:], repeat(_MARK)))))
    if len(words) < SHINGLE:
        return [b" ".join(words)] if words else []
    return list(map(b" ".join, windows))


def fingerprint_text(text: str) -> bytes | None:
    """The fingerprint of a text; ``None`` when it has no word (nothing to compare).

    Shingles run within a block, never across two (``_maincontent`` marks where one ends):
    a listing's items, a table's cells, in any order or layout, give one set of shingles,
    so a listing sorted another way or shown as a grid is the same document. An article
    loses only the few shingles that spanned two paragraphs."""
    shingles = _shingles(text)
    if not shingles:
        return None
    sketch = _RMinHash(num_perm=PERMUTATIONS, seed=_SEED)
    sketch.update(shingles)
    # The lowest byte of each 32-bit value: every 4th byte of the little-endian array.
    digest = sketch.digest()
    if array("I").itemsize != 4:
        return _VERSION_BYTE + bytes(v & 0xFF for v in digest)
    values = array("I", digest)
    if sys.byteorder == "big":
        values.byteswap()
    return _VERSION_BYTE + values.tobytes()[::4]


def content_fingerprint(
    body: bytes, mime: str | None, content_type: str | None = None
) -> bytes | None:
    """The fingerprint of a fetched document, or ``None`` when it has no comparable text.

    ``mime`` is the response's media type (``None`` counts as HTML, as the crawler treats
    it); ``content_type`` the whole header (its charset decides the decoding). Documents of
    other types (images, PDF) have no fingerprint: their content identity is their SHA-1.
    """
    if mime is None or mime in ("text/html", "application/xhtml+xml"):
        return fingerprint_text(main_text(body, content_type))
    if mime in _TEXT_TYPES:
        return fingerprint_text(decode_html(body, content_type))
    return None


def similarity(a: bytes, b: bytes) -> float:
    """Estimated Jaccard resemblance of the two documents' shingle sets (0 … 1)."""
    if len(a) != FINGERPRINT_BYTES or len(b) != FINGERPRINT_BYTES or a[0] != b[0]:
        return 1.0 if a == b else 0.0
    # XOR of the two as integers: a zero byte is an agreeing position (the version byte
    # always agrees and is taken off).
    diff = (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(FINGERPRINT_BYTES, "big")
    agree = (diff.count(0) - 1) / PERMUTATIONS
    return max(0.0, min(1.0, (agree - _CHANCE) / (1.0 - _CHANCE)))


def is_near(a: bytes, b: bytes, threshold: float = NEAR_THRESHOLD) -> bool:
    """Whether two fingerprints are near-duplicates (estimated resemblance ≥ threshold)."""
    return a == b or similarity(a, b) >= threshold
