"""Percent-encoding: the three safe steps of RFC 3986 §6.2.2.1–6.2.2.2 and the "clean" tests.

Written by hand rather than with ``urllib.parse.quote``/``unquote``: those decode *every*
escape (turning ``%2F`` into ``/`` changes the path's structure, RFC 3986 §2.2), and they know
nothing of the per-component character sets below. One table lookup per escape is also faster.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "clean_path",
    "clean_query",
    "decode_unreserved",
    "encode_path",
    "encode_query",
    "encode_userinfo",
    "upper_hex",
]

_SUB_DELIMS = "!$&'()*+,;="  # §2.2

# RFC 3986 §2.3: escapes of unreserved characters (ALPHA %41-%5A %61-%7A, DIGIT %30-%39,
# "-" %2D, "." %2E, "_" %5F, "~" %7E), in either hex case. Only these are ever decoded, so
# reserved characters (%2F %3F %23 %25 %26 %3D …) always stay encoded.
_UNRESERVED_ESCAPE_RE = re.compile(
    r"%(?:3[0-9]|4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa]|2[DdEe]|5[Ff]|7[Ee])"
)
_LOWER_ESCAPE_RE = re.compile(r"%(?:[a-f][0-9A-Fa-f]|[0-9A-F][a-f])")


# "7e" / "7E" / … -> "~": the unreserved character each escape of one stands for.
_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
_DECODE: dict[str, str] = {}
for _c in _UNRESERVED:
    for _pair in {f"{ord(_c):02X}", f"{ord(_c):02x}", f"{ord(_c):02X}".capitalize()}:
        _DECODE[_pair] = _c
        _DECODE[_pair.swapcase()] = _c
del _c, _pair


def _upper_one(m: re.Match[str]) -> str:
    return m.group().upper()


# The functions below take an unused second argument so that they serve directly as step
# functions ``(value, options) -> value`` without a wrapper call per URL.


def upper_hex(text: str, _o: object = None) -> str:
    """``%2f`` → ``%2F`` (RFC 3986 §6.2.2.1)."""
    if "%" not in text or _LOWER_ESCAPE_RE.search(text) is None:
        return text
    return _LOWER_ESCAPE_RE.sub(_upper_one, text)


def decode_unreserved(text: str, _o: object = None) -> str:
    """``%7E`` → ``~``, ``%41`` → ``A``; any other escape is left exactly as it was (§6.2.2.2)."""
    if "%" not in text or _UNRESERVED_ESCAPE_RE.search(text) is None:
        return text
    # Splitting on "%" and looking up the two hex digits after each one is about twice as
    # fast as re.sub with a callback (escapes were validated when the URL was parsed).
    pieces = text.split("%")
    out = [pieces[0]]
    for piece in pieces[1:]:
        char = _DECODE.get(piece[:2])
        out.append(char + piece[2:] if char is not None else "%" + piece)
    return "".join(out)


# Characters each component may hold unencoded (RFC 3986 §3.2.1, §3.3, §3.4, §3.5), plus "%"
# which check_escapes has already validated.
_USERINFO_OK = "A-Za-z0-9\\-._~" + re.escape(_SUB_DELIMS) + ":%"
_PATH_OK = "A-Za-z0-9\\-._~" + re.escape(_SUB_DELIMS) + ":@/%"
_QUERY_OK = _PATH_OK + "?"


# The escape of every ASCII character, computed once; others are encoded as they come.
_ASCII_ESCAPES = {chr(b): f"%{b:02X}" for b in range(128)}


def _escape_char(char: str) -> str:
    escape = _ASCII_ESCAPES.get(char)
    if escape is None:
        # Characters outside the URI character set are percent-encoded as UTF-8 (RFC 3986
        # §2.5, RFC 3987 §3.1). No surrogate gets here: as_text wrote escaped bytes as %XX.
        escape = "".join(f"%{b:02X}" for b in char.encode("utf-8"))
    return escape


def _quote(m: re.Match[str]) -> str:
    return "".join([_escape_char(c) for c in m.group()])


def _encoder(allowed: str) -> Callable[[str, object], str]:
    bad = re.compile(f"[^{allowed}]+")
    search = bad.search
    sub = bad.sub

    def encode(text: str, _o: object = None) -> str:
        if search(text) is None:
            return text
        return sub(_quote, text)

    return encode


encode_userinfo = _encoder(_USERINFO_OK)
encode_path = _encoder(_PATH_OK)
encode_query = _encoder(_QUERY_OK)  # also fragments: §3.5 has the same character set

# A component that contains no escape and no character needing one is left unchanged by
# encode-unsafe, uppercase-percent-hex and decode-unreserved: the fast path of Normalizer.
clean_path = re.compile("[A-Za-z0-9\\-._~" + re.escape(_SUB_DELIMS) + ":@/]*").fullmatch
clean_query = re.compile("[A-Za-z0-9\\-._~" + re.escape(_SUB_DELIMS) + ":@/?]*").fullmatch
clean_tail = re.compile(
    "[A-Za-z0-9\\-._~"
    + re.escape(_SUB_DELIMS)
    + ":@/?]*(?:#[A-Za-z0-9\\-._~"
    + re.escape(_SUB_DELIMS)
    + ":@/?]*)?"
).fullmatch
