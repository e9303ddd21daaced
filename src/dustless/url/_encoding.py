"""The query of a link in a page that is not UTF-8: WHATWG URL's "encoding-parse".

A browser parses a link with the page's encoding (HTML "encoding-parsing a URL"): the query
of a special URL (http, https, ftp, file; not ws, wss) is encoded with that encoding, the path
and the fragment are always UTF-8 (WHATWG URL, "query state"). The bytes are percent-encoded
with the special-query percent-encode set, and a character the encoding cannot represent
becomes ``&#NNNN;`` written ``%26%23NNNN%3B`` ("percent-encode after encoding"; Chromium
sends the same): ``<a href="/search?q=한국">`` in an EUC-KR page is requested as
``?q=%C7%D1%B1%B9``, not as UTF-8's ``?q=%ED%95%9C%EA%B5%AD``, and in a windows-1252 page as
``?q=%26%2354620%3B%26%2344397%3B``. A crawler that requested the UTF-8 form would get
another page, or an error.

``ada_url`` parses as UTF-8 only, so :func:`encode_query` writes the query's non-ASCII
characters as the escapes of their bytes first; ada keeps escapes as they are and does the
rest. ASCII is the same in every encoding the web uses for URLs, so only non-ASCII runs need
it.
"""

from __future__ import annotations

import codecs
import functools
import re

__all__ = ["encode_query", "url_codec"]

# WHATWG URL §4.4 "special scheme"; ws and wss are special but their query is always UTF-8.
_ENCODED_QUERY_SCHEMES = frozenset({"http", "https", "ftp", "file"})
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+\-.]*):")
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]+")
_STRIP = "".join(chr(c) for c in range(0x21))  # C0 controls and space (WHATWG "strip")
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")

# Encoding standard §4.3 "get an output encoding": UTF-16 and the replacement encoding
# (labels such as iso-2022-kr and hz-gb-2312) encode URLs as UTF-8.
_UTF8_OUTPUT = frozenset({"iso2022_kr", "hz"})

# Where Python's codec and the Encoding standard's encoder disagree on a character the
# standard can encode (its indexes, §5): windows-1252 maps 0x81 0x8D 0x8F 0x90 0x9D to the C1
# controls of the same value; gbk writes U+20AC as 0x80; Big5 has U+20AC at 0xA3E1; gb18030
# follows GB18030-2022 (eighteen characters moved out of the Private Use Area, U+1E3F at
# 0xA8BC and U+E7C7 in the four-byte ranges, §10.2). The Japanese encodings are built from
# index jis0208 below. tests/extract/test_link_encoding.py checks all this against Chromium.
_FE_TRAILS = b"Yafgm~\x90\xa0"  # U+9FB4…U+9FBB at 0xFE59, 0xFE61 …
_A6_TRAILS = b"\xd9\xdb\xda\xdc\xdd\xde\xdf\xec\xed\xf3"  # U+FE10…U+FE19 at 0xA6D9 …
_GB18030_2022: dict[str, bytes] = {
    "\u1e3f": b"\xa8\xbc",
    **{chr(0x9FB4 + i): bytes((0xFE, t)) for i, t in enumerate(_FE_TRAILS)},
    **{chr(0xFE10 + i): bytes((0xA6, t)) for i, t in enumerate(_A6_TRAILS)},
}
_FIXUPS: dict[str, dict[str, bytes]] = {
    "cp1252": {chr(b): bytes((b,)) for b in (0x81, 0x8D, 0x8F, 0x90, 0x9D)},
    "gb18030": {**_GB18030_2022, "\ue7c7": b"\x81\x35\xf4\x37"},
    "gbk": {**_GB18030_2022, "\u20ac": b"\x80"},
    "big5hkscs": {
        "\u20ac": b"\xa3\xe1",
        # index Big5 where Python's big5hkscs table differs (its first pointer outside
        # HKSCS, §11.1.2), found by comparing with Chromium over every BMP character
        "\u00af": b"\xa1\xc2",
        "\u2027": b"\xa1\x45",
        "\u256d": b"\xa2\x7e",
        "\u256e": b"\xa2\xa1",
        "\u256f": b"\xa2\xa3",
        "\u2570": b"\xa2\xa2",
        "\u4edd": b"\xc6\xdf",
        "\u5605": b"\xfb\x48",
        "\u5ed0": b"\xfb\xf9",
        "\u5ef4": b"\xc6\xcf",
        "\u60a4": b"\xfc\x6c",
        "\u65e0": b"\xc6\xd3",
        "\u732a": b"\xfe\x52",
        "\u7676": b"\xc6\xd5",
        "\u96b6": b"\xc6\xd7",
        "\uff0f": b"\xa1\xfe",
        "\uff3c": b"\xa2\x40",
        "\uff5e": b"\xa1\xe3",
        "\uffe0": b"\xa2\x46",
        "\uffe1": b"\xa2\x47",
        "\uffe5": b"\xa2\x44",
        "\u2215": b"\xa2\x41",
        "\u2295": b"\xa1\xf2",
        "\u2299": b"\xa1\xf3",
        "\ufe51": b"\xa1\x4e",
        "\ufe68": b"\xa2\x42",
        "\u2421": b"\xa3\xe0",
        **{chr(0x2400 + i): bytes((0xA3, 0xC0 + i)) for i in range(0x20)},  # control pictures
    },
}
# Characters Python's codec encodes but the standard's index has not (§5 indexes).
_NO_POINTER: dict[str, frozenset[str]] = {
    # §10.2.2: gb18030 cannot encode U+E5E5; U+E7C7 is four bytes in GB18030-2022, so not gbk
    "gb18030": frozenset("\ue5e5"),
    "gbk": frozenset("\ue5e5\ue7c7"),
    "big5hkscs": frozenset("\u00a2\u00a3\u00a5\u2022\u203e\u223c\u2609\u2641\uff64"),
}
_PRIVATE_USE = range(0xE000, 0xF900)

# The special-query percent-encode set (WHATWG URL §1.3): C0 controls, space, '"', "#", "'",
# "<", ">", and every byte above 0x7E.
_PERCENT = [f"%{b:02X}" if b <= 0x20 or b >= 0x7F or b in b"\"#'<>" else chr(b) for b in range(256)]


def _labels(names: str, codec: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), codec)


# Encoding §4.2: labels whose encoding Python names differently (or whose Python codec of
# the same name is another table: Python's "shift_jis" lacks Windows-31J's extensions, its
# "latin-1" is not windows-1252).
_LABELS: dict[str, str] = {
    **_labels("csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis", "cp932"),
    **_labels(
        "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 "
        "ksc_5601 windows-949",
        "cp949",
    ),
    **_labels(
        "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk",
        "gbk",
    ),
    **_labels("big5 big5-hkscs cn-big5 csbig5 x-x-big5", "big5hkscs"),
    **_labels("cseucpkdfmtjapanese euc-jp x-euc-jp", "euc_jp"),
    **_labels(
        "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 "
        "iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
        "cp1252",
    ),
    **_labels(
        "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
        "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
        "cp1254",
    ),
    **_labels("dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874", "cp874"),
}
# The same for Python's own codec names (what extract passes when it decoded a page).
_PYTHON_NAMES = {
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "gb2312": "gbk",
    "big5": "big5hkscs",
    "iso8859-9": "cp1254",
    "tis-620": "cp874",
    "iso8859-11": "cp874",
}


@functools.lru_cache(maxsize=64)
def url_codec(encoding: str) -> str | None:
    """The Python codec a page in ``encoding`` encodes URL queries with; None for UTF-8.

    ``encoding`` is an Encoding-standard label or a Python codec name; an unknown one is
    UTF-8 (the URL parser's default)."""
    label = encoding.strip().lower()
    name = _LABELS.get(label)
    if name is None:
        try:
            name = codecs.lookup(label).name
        except LookupError:
            return None
        name = _PYTHON_NAMES.get(name, name)
    if name.startswith("utf") or name in _UTF8_OUTPUT:
        return None
    return name


@functools.cache
def _jis0208() -> tuple[dict[str, int], dict[str, int]]:
    """Index jis0208 (Encoding §5) as the encoders read it: ``(pointer, shift_jis_pointer)``
    per character, the first pointer of a character that has several; the Shift_JIS one
    leaves out pointers 8272–8835 (NEC-selected IBM extensions, §13.3 "index Shift_JIS
    pointer"). Python's cp932 decoder holds the same table (Windows-31J), plus the
    user-defined area that the standard's decoder maps to the Private Use Area."""
    pointer: dict[str, int] = {}
    shift_jis: dict[str, int] = {}
    for lead in (*range(0x81, 0xA0), *range(0xE0, 0xFD)):
        for trail in (*range(0x40, 0x7F), *range(0x80, 0xFD)):
            try:
                char = bytes((lead, trail)).decode("cp932")
            except UnicodeDecodeError:
                continue
            if ord(char) in _PRIVATE_USE:
                continue
            row = lead - (0x81 if lead < 0xA0 else 0xC1)
            p = row * 188 + trail - (0x40 if trail < 0x7F else 0x41)
            pointer.setdefault(char, p)
            if not 8272 <= p <= 8835:
                shift_jis.setdefault(char, p)
    return pointer, shift_jis


def _japanese(char: str, codec: str) -> bytes | None:
    """The Shift_JIS (§13.3.2) and EUC-JP (§12.1.2) encoders."""
    code = ord(char)
    if code == 0xA5:
        return b"\x5c"
    if code == 0x203E:
        return b"\x7e"
    if 0xFF61 <= code <= 0xFF9F:  # halfwidth katakana: one byte (after 0x8E in EUC-JP)
        single = bytes((code - 0xFF61 + 0xA1,))
        return single if codec == "cp932" else b"\x8e" + single
    if code == 0x2212:
        char = "\uff0d"
    pointer, shift_jis = _jis0208()
    if codec == "cp932":
        p = shift_jis.get(char)
        if p is None:
            return None
        lead, trail = divmod(p, 188)
        lead += 0x81 if lead < 0x1F else 0xC1
        return bytes((lead, trail + (0x40 if trail < 0x3F else 0x41)))
    p = pointer.get(char)
    if p is None:
        return None
    return bytes((p // 94 + 0xA1, p % 94 + 0xA1))


def _encode_char(char: str, codec: str) -> bytes | None:
    """The bytes of ``char`` in the standard's encoder for ``codec``; None for an error."""
    fixed = _FIXUPS.get(codec, {}).get(char)
    if fixed is not None:
        return fixed
    if codec in ("cp932", "euc_jp"):
        return _japanese(char, codec)
    if char in _NO_POINTER.get(codec, ()):
        return None
    gb = codec in ("gb18030", "gbk")
    if ord(char) in _PRIVATE_USE and not gb:
        # Python's codecs map the Private Use Area to vendor "user-defined" bytes; the
        # standard's encoders have no such pointers (§5 indexes).
        return None
    # gbk is gb18030 without its four-byte sequences (§10.2.2, "is GBK"); Python's own gbk
    # codec lacks characters of gb18030's two-byte table.
    encoder = "gb18030" if gb else codec
    try:
        data = char.encode(encoder)
        # A "best fit" of Python's codec (big5's U+00A2 as the fullwidth cent sign's bytes)
        # is no mapping of the standard's index: the bytes must decode back to the char.
        if data.decode(encoder) != char:
            return None
    except UnicodeError:
        return None
    if (codec == "gbk" and len(data) == 4) or (
        # Big5's encoder leaves out HKSCS, whose lead bytes are below 0xA1 (§11.1.2)
        codec == "big5hkscs" and data[0] < 0xA1
    ):
        return None
    return data


def _iso2022_jp(query: str) -> str:
    """The ISO-2022-JP encoder (§12.2.2) over a whole query, percent-encoded after encoding:
    a stateful encoder, whose escape sequences depend on what came before."""
    import unicodedata

    pointer = _jis0208()[0]
    out: list[str] = []
    state = "ascii"
    for char in query:
        code = ord(char)
        if state != "jis0208" and code in (0x0E, 0x0F, 0x1B):
            out.append("%26%2365533%3B")  # an error with U+FFFD: no escape can be smuggled
            continue
        if code < 0x80 and (state == "ascii" or (state == "roman" and code not in (0x5C, 0x7E))):
            out.append(_PERCENT[code])
            continue
        if state == "roman" and code in (0xA5, 0x203E):
            out.append("%5C" if code == 0xA5 else "~")
            continue
        if code < 0x80:
            out.append("%1B(B" + _PERCENT[code])
            state = "ascii"
            continue
        if code in (0xA5, 0x203E):
            out.append("%1B(J" + ("%5C" if code == 0xA5 else "~"))
            state = "roman"
            continue
        if code == 0x2212:
            char = "\uff0d"
        elif 0xFF61 <= code <= 0xFF9F:  # index ISO-2022-JP katakana: halfwidth → fullwidth
            char = {"\uff9e": "\u309b", "\uff9f": "\u309c"}.get(char) or unicodedata.normalize(
                "NFKC", char
            )
        p = pointer.get(char)
        if p is None:
            if state == "jis0208":
                out.append("%1B(B")
                state = "ascii"
            out.append(f"%26%23{code}%3B")
            continue
        if state != "jis0208":
            out.append("%1B$B")
            state = "jis0208"
        out.append(_PERCENT[p // 94 + 0x21] + _PERCENT[p % 94 + 0x21])
    if state != "ascii":
        out.append("%1B(B")
    return "".join(out)


def _encode_run(run: str, codec: str) -> str:
    """Percent-encode after encoding (WHATWG URL §1.3) a run of non-ASCII characters with a
    stateless encoder: a character the encoding cannot represent becomes ``%26%23NNNN%3B``,
    its ``&#NNNN;`` percent-encoded whole, as the standard's algorithm and browsers write it."""
    out: list[str] = []
    for char in run:
        data = _encode_char(char, codec)
        if data is None:
            out.append(f"%26%23{ord(char)}%3B")
        else:
            out.extend([_PERCENT[b] for b in data])
    return "".join(out)


def encode_query(reference: str, base_scheme: str, encoding: str) -> str:
    """``reference`` with the non-ASCII characters of its query written as the escapes of
    their bytes in ``encoding`` — when the link is a special URL and the encoding is not
    UTF-8; otherwise ``reference`` unchanged. ``base_scheme`` is the scheme of the base URL
    (a relative reference has the base's)."""
    codec = url_codec(encoding)
    if codec is None or reference.isascii():
        return reference
    # What the URL parser reads (WHATWG URL §4.4: strip C0 controls and space, remove tabs
    # and newlines); the result is the reference ada would have read.
    text = reference.strip(_STRIP).translate(_TAB_NEWLINE)
    m = _SCHEME_RE.match(text)
    scheme = m.group(1).lower() if m is not None else base_scheme.lower()
    if scheme not in _ENCODED_QUERY_SCHEMES:
        return reference
    # The query is what follows the first "?" up to the first "#": a "?" ends the authority
    # and the path alike, and nothing before it can hold one.
    start = text.find("?")
    hash_at = text.find("#")
    if start < 0 or 0 <= hash_at < start:
        return reference
    end = hash_at if hash_at >= 0 else len(text)
    query = text[start + 1 : end]
    if query.isascii():
        return reference
    if codec == "iso2022_jp":
        encoded = _iso2022_jp(query)
    else:
        encoded = _NON_ASCII_RE.sub(lambda r: _encode_run(r.group(), codec), query)
    return text[: start + 1] + encoded + text[end:]
