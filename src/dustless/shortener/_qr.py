"""QR codes of short URLs (``GET /{code}/qr``), drawn by segno.

The code holds the short URL, never the long one: scanning it goes through the service, so
the click is counted and an ended link answers 410. Error correction level M (15 % of the
symbol may be damaged), the usual choice for printed codes. Rendered codes are kept per
worker: a code is drawn once, then served from memory.
"""

from __future__ import annotations

import enum
import io
from collections import OrderedDict

import segno

__all__ = ["QrFormat", "QrRenderer"]


class QrFormat(enum.Enum):
    SVG = "svg"
    PNG = "png"

    @property
    def media_type(self) -> str:
        return "image/svg+xml" if self is QrFormat.SVG else "image/png"


class QrRenderer:
    """Short URL → QR image bytes, the most recent ``capacity`` kept."""

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._done: OrderedDict[tuple[str, QrFormat, int], bytes] = OrderedDict()

    def render(self, text: str, fmt: QrFormat, scale: int = 4) -> bytes:
        key = (text, fmt, scale)
        data = self._done.get(key)
        if data is None:
            out = io.BytesIO()
            qr = segno.make(text, error="m", micro=False)
            if fmt is QrFormat.SVG:
                # No XML declaration: the image is also inlined by the page as <img>.
                qr.save(out, kind="svg", scale=scale, border=4, xmldecl=False, svgns=True)
            else:
                qr.save(out, kind="png", scale=scale, border=4)
            data = out.getvalue()
            self._done[key] = data
            if len(self._done) > self._capacity:
                self._done.popitem(last=False)
        else:
            self._done.move_to_end(key)
        return data
