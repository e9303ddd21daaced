"""Bytes → text for HTML: which encoding, decided the way browsers decide, never raising.

The order follows the WHATWG HTML "encoding sniffing algorithm" (§13.2.3.2), simplified:
a byte-order mark wins, then the ``charset`` of the Content-Type header, then a
``<meta charset>`` / ``<meta http-equiv=content-type>`` in the first 1024 bytes (the prescan),
then UTF-8 if the bytes are valid UTF-8, else windows-1252 (the spec's default for unknown
locales). Labels are mapped as the WHATWG Encoding standard maps them where Python's names
differ (``euc-kr`` is really windows-949, ``iso-8859-1`` is really windows-1252, …). An unknown
or non-text label (``rot13``, ``hex``, garbage) is ignored, and decoding uses ``replace``, so
no byte sequence can make extraction fail (CONVENTIONS §8).
"""

from __future__ import annotations

import codecs
import functools
import re

__all__ = ["decode_document", "decode_html", "sniff_encoding"]

# WHATWG Encoding §4.2 labels whose Python codec differs (the common ones on the Korean and
# Western web; everything else goes through Python's own label lookup).
_ALIASES = {
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "ksc5601": "cp949",
    "ks_c_5601-1989": "cp949",
    "korean": "cp949",
    "windows-949": "cp949",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "l1": "cp1252",
    "iso8859-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "ansi_x3.4-1968": "cp1252",
    "iso-8859-9": "cp1254",
    "shift_jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "big5": "big5hkscs",
    "tis-620": "cp874",
    "x-user-defined": "cp1252",
    "unicode": "utf-8",
    # Encoding §4.2 / HTML prescan: a meta tag naming UTF-16 means UTF-8 (the bytes were
    # ASCII-compatible or the prescan could not have read them).
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}

# Encoding §4.2: these labels name "gbk", whose decoder is gb18030's but whose encoder (used
# for the query of the page's links) writes no four-byte sequence.
_GBK_LABELS = frozenset(
    {
        "chinese",
        "csgb2312",
        "csiso58gb231280",
        "gb2312",
        "gb_2312",
        "gb_2312-80",
        "gbk",
        "iso-ir-58",
        "x-gbk",
    }
)

_NOT_WEB = frozenset(
    {
        "utf-7",
        "idna",
        "punycode",
        "raw-unicode-escape",
        "unicode-escape",
        "undefined",
        "utf-32",
        "utf-32-le",
        "utf-32-be",
        "mbcs",
        "oem",
    }
)
_CT_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^\s"';,]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([^\s"'/>;]+)""", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@functools.lru_cache(maxsize=512)
def _codec(label: str | bytes) -> str | None:
    """The Python codec for an encoding label, or None when it is not a usable text codec."""
    if isinstance(label, bytes):
        label = label.decode("ascii", "replace")
    name = label.strip().strip("\"'").lower()
    name = _ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    # bytes↔bytes and str↔str codecs (hex, rot13, zlib) are not text encodings, and Python's
    # own codecs that the Encoding standard does not define are failures there (§4.2): UTF-7
    # in particular is refused by browsers because it smuggles markup past filters.
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_WEB:
        return None
    return info.name


def _is_gbk(label: str | bytes) -> bool:
    if isinstance(label, bytes):
        label = label.decode("ascii", "replace")
    return label.strip().strip("\"'").lower() in _GBK_LABELS


def _sniff(body: bytes, content_type: str | None) -> tuple[str, int, str]:
    """``(codec, bom_length, url_encoding)``; ``codec`` is ``""`` when nothing declares one."""
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return bom_codec, len(bom), bom_codec
    if content_type:
        m = _CT_CHARSET.search(content_type)
        if m and (name := _codec(m.group(1))):
            return name, 0, "gbk" if _is_gbk(m.group(1)) else name
    m2 = _META_CHARSET.search(body[:1024])
    if m2 and (name := _codec(m2.group(1))):
        return name, 0, "gbk" if _is_gbk(m2.group(1)) else name
    return "", 0, ""


def sniff_encoding(body: bytes, content_type: str | None = None) -> tuple[str, int]:
    """``(codec, bom_length)`` for an HTML body; ``codec`` is ``""`` when nothing declares one."""
    name, skip, _ = _sniff(body, content_type)
    return name, skip


def _c1_controls(exc: UnicodeError) -> tuple[str, int]:
    # Encoding §9 index windows-1252: the five bytes Python's cp1252 leaves undefined
    # (0x81 0x8D 0x8F 0x90 0x9D) decode to the C1 controls of the same value; anything else
    # undecodable is U+FFFD, as with "replace".
    assert isinstance(exc, UnicodeDecodeError)
    byte = exc.object[exc.start]
    char = chr(byte) if byte in (0x81, 0x8D, 0x8F, 0x90, 0x9D) else "\ufffd"
    return char, exc.start + 1


codecs.register_error("dustless-windows-1252", _c1_controls)


def decode_document(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """``(text, encoding)``: the body decoded, never raising, and the encoding the page's
    links encode their query with (WHATWG URL "encoding-parse"; ``gbk`` for a page labelled
    gb2312 or gbk, which is decoded as gb18030)."""
    name, skip, url_encoding = _sniff(body, content_type)
    data = body[skip:] if skip else body
    if name:
        errors = "dustless-windows-1252" if name == "cp1252" else "replace"
        try:
            return data.decode(name, errors), url_encoding
        except Exception:  # a codec that fails outright (e.g. 'undefined'): fall through
            pass
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("cp1252", "dustless-windows-1252"), "cp1252"


def decode_html(body: bytes, content_type: str | None = None) -> str:
    """Decode an HTML body to text; never raises."""
    return decode_document(body, content_type)[0]
