"""Content-Encoding decoders with a decompression-bomb guard.

A few kilobytes of gzip or brotli can expand to gigabytes. Every decoder here is fed one
network chunk at a time and told how many output bytes may still come (``room``); it never
produces more than ``room`` bytes per call, so memory stays bounded by the size limit
whatever the input. Exceeding ``room`` is ``TooBig``; a corrupt stream is ``DecodeError``.
"""

from __future__ import annotations

import zlib
from typing import Protocol

__all__ = [
    "ACCEPT_ENCODING",
    "DecodeError",
    "Decoder",
    "TooBig",
    "decode_payload",
    "is_identity",
    "make_decoder",
]

try:  # brotli is optional: advertise "br" only when we can decode it.
    import brotli as _brotli  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

ACCEPT_ENCODING = "gzip, deflate, br" if _brotli is not None else "gzip, deflate"


class DecodeError(Exception):
    """The encoded body is corrupt or uses an encoding we did not offer."""


class TooBig(Exception):
    """Decoding would produce more than the room left; ``partial`` is what fitted."""

    def __init__(self, partial: bytes = b"") -> None:
        super().__init__("decoded body exceeds the limit")
        self.partial = partial


class Decoder(Protocol):
    def feed(self, data: bytes, room: int) -> bytes: ...

    def flush(self, room: int) -> bytes: ...


class _Identity:
    def feed(self, data: bytes, room: int) -> bytes:
        if len(data) > room:
            raise TooBig(data[:room])
        return data

    def flush(self, room: int) -> bytes:
        return b""


class _Zlib:
    """gzip (RFC 1952, several members allowed) and deflate (zlib RFC 1950, or raw RFC 1951)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._inflater: zlib._Decompress | None = (
            zlib.decompressobj(16 + zlib.MAX_WBITS) if gzip else None
        )

    def _start_deflate(self, data: bytes) -> zlib._Decompress:
        # RFC 9110 §8.4.1.2 says "deflate" is the zlib format, but servers have long sent raw
        # deflate; a zlib header is recognisable by its check bits (RFC 1950 §2.2).
        is_zlib = len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
        return zlib.decompressobj(zlib.MAX_WBITS if is_zlib else -zlib.MAX_WBITS)

    def feed(self, data: bytes, room: int) -> bytes:
        if self._inflater is None:
            if not data:
                return b""
            self._inflater = self._start_deflate(data)
        out = bytearray()
        try:
            while data:
                inflater = self._inflater
                chunk = inflater.decompress(data, room - len(out) + 1)
                out += chunk
                if len(out) > room:
                    raise TooBig(bytes(out[:room]))
                if inflater.unconsumed_tail:
                    data = inflater.unconsumed_tail
                    continue
                if inflater.eof and inflater.unused_data and self._gzip:
                    # Another gzip member follows (RFC 1952 §2.2).
                    data = inflater.unused_data
                    self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    continue
                break
        except zlib.error as exc:
            kind = "gzip" if self._gzip else "deflate"
            raise DecodeError(f"corrupt {kind} data: {exc}") from None
        return bytes(out)

    def flush(self, room: int) -> bytes:
        if self._inflater is None:
            return b""
        try:
            tail = self._inflater.flush()
        except zlib.error as exc:  # pragma: no cover - flush rarely fails after decompress
            raise DecodeError(str(exc)) from None
        if len(tail) > room:
            raise TooBig(tail[:room])
        return tail


class _Brotli:
    def __init__(self) -> None:
        assert _brotli is not None
        self._decompressor = _brotli.Decompressor()

    def feed(self, data: bytes, room: int) -> bytes:
        try:
            # output_buffer_limit stops the output growing past room + 1 bytes: a bomb is
            # noticed after one bounded step, never after inflating it.
            out: bytes = self._decompressor.process(data, output_buffer_limit=room + 1)
        except _brotli.error as exc:
            raise DecodeError(f"corrupt brotli data: {exc}") from None
        if len(out) > room or not self._decompressor.can_accept_more_data():
            # More output than room, or output pending that did not fit in room + 1 bytes.
            raise TooBig(out[:room])
        return out

    def flush(self, room: int) -> bytes:
        return b""


def make_decoder(content_encoding: str | None) -> Decoder:
    """The decoder for a Content-Encoding header value (one coding; ``identity`` or none)."""
    codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return _Identity()
    if len(codings) > 1:
        raise DecodeError(f"stacked content-codings {content_encoding!r} are not supported")
    coding = codings[0]
    if coding in ("gzip", "x-gzip"):
        return _Zlib(gzip=True)
    if coding == "deflate":
        return _Zlib(gzip=False)
    if coding == "br" and _brotli is not None:
        return _Brotli()
    raise DecodeError(f"unsupported content-coding {coding!r}")


def is_identity(decoder: Decoder) -> bool:
    """Does ``decoder`` hand the bytes on unchanged (no content-coding)?"""
    return isinstance(decoder, _Identity)


def decode_payload(content_encoding: str | None, data: bytes, max_bytes: int) -> bytes:
    """A stored payload as sent (``content_encoding``: its HTTP head's Content-Encoding),
    decoded, for the readers of an as-sent WARC record (export, …): at most ``max_bytes``
    (a bomb stays a bomb when read back). A stream cut short (a truncated capture) gives
    what its bytes hold; a corrupt or unknown coding is ``DecodeError``."""
    decoder = make_decoder(content_encoding)
    try:
        out = decoder.feed(data, max_bytes)
        return out + decoder.flush(max_bytes - len(out))
    except TooBig as exc:
        return exc.partial
