"""The URL filter (seed 003 ch. 9 "URL 필터", seed 004 §3): which discovered URLs are worth a
request at all. Pure: a URL string and its depth in, a reason (or ``None``) out.

Checks, cheapest first: scheme (http and https only), length (004 §3 capped document URLs at
255 characters), depth (``--max-depth``, breadth-first from the party's seed, 004 §2), file
extension deny list, repeated path segments (the classic spider trap ``/a/b/a/b/a/b/…`` and
relative-link loops), deny patterns. Content types are checked once the response headers are
known (:meth:`UrlFilter.allows_mime`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dustless.errors import InvalidOption

__all__ = ["DEFAULT_DENY_EXTENSIONS", "DEFAULT_DENY_MIME_PREFIXES", "UrlFilter"]

# Binary and media files: a crawler for pages gains nothing from them (003 ch. 9 "특정한
# 콘텐츠 타입이나 파일 확장자를 갖는 URL"). Lowercase, without the dot.
DEFAULT_DENY_EXTENSIONS = frozenset(
    [
        "7z",
        "aac",
        "apk",
        "avi",
        "bin",
        "bmp",
        "bz2",
        "class",
        "css",
        "deb",
        "dmg",
        "doc",
        "docx",
        "eot",
        "exe",
        "flac",
        "flv",
        "gif",
        "gz",
        "ico",
        "iso",
        "jar",
        "jpeg",
        "jpg",
        "js",
        "m4a",
        "m4v",
        "mkv",
        "mov",
        "mp3",
        "mp4",
        "mpeg",
        "mpg",
        "msi",
        "odp",
        "ods",
        "odt",
        "ogg",
        "otf",
        "pdf",
        "png",
        "ppt",
        "pptx",
        "ps",
        "rar",
        "rpm",
        "rss",
        "svg",
        "swf",
        "tar",
        "tgz",
        "tif",
        "tiff",
        "ttf",
        "wav",
        "webm",
        "webp",
        "wma",
        "wmv",
        "woff",
        "woff2",
        "xls",
        "xlsx",
        "xz",
        "zip",
    ]
)
# Response types that are never parsed for links nor kept as documents.
DEFAULT_DENY_MIME_PREFIXES = ("image/", "audio/", "video/", "font/")


@dataclass(frozen=True, slots=True)
class UrlFilter:
    max_length: int = 255  # seed 004 §3: "문서 URL은 최대 255문자까지 허용"
    max_depth: int = 5
    deny_extensions: frozenset[str] = DEFAULT_DENY_EXTENSIONS
    deny_mime_prefixes: tuple[str, ...] = DEFAULT_DENY_MIME_PREFIXES
    deny_patterns: tuple[str, ...] = ()  # regular expressions searched in the whole URL
    max_segment_repeats: int = 2  # a path segment seen more often than this is a trap
    schemes: frozenset[str] = field(default=frozenset({"http", "https"}))
    _deny: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_length < 10:
            raise InvalidOption(f"max URL length must be >= 10, not {self.max_length}")
        if self.max_depth < 0:
            raise InvalidOption(f"max depth must be >= 0, not {self.max_depth}")
        if self.max_segment_repeats < 1:
            raise InvalidOption(f"max segment repeats must be >= 1, not {self.max_segment_repeats}")
        for pattern in self.deny_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InvalidOption(f"deny pattern {pattern!r}: {exc}") from None
        if self.deny_patterns:
            joined = re.compile("|".join(f"(?:{p})" for p in self.deny_patterns))
            object.__setattr__(self, "_deny", joined)

    def reject(self, url: str, depth: int) -> str | None:
        """Why ``url`` (absolute, found at ``depth``) must not be fetched, or ``None``."""
        colon = url.find(":")
        if colon < 0 or url[:colon].lower() not in self.schemes:
            return "scheme"
        if len(url) > self.max_length:
            return "length"
        if depth > self.max_depth:
            return "depth"
        # The path: after the authority, before query and fragment.
        start = url.find("/", url.find("//") + 2) if "//" in url else -1
        if start >= 0:
            end = len(url)
            for sep in "?#":
                pos = url.find(sep, start)
                if 0 <= pos < end:
                    end = pos
            path = url[start:end]
            last = path.rfind("/")
            name = path[last + 1 :]
            dot = name.rfind(".")
            if dot > 0 and name[dot + 1 :].lower() in self.deny_extensions:
                return "extension"
            if path.count("/") > self.max_segment_repeats + 1 and _repeats(
                path, self.max_segment_repeats
            ):
                return "trap"
        deny = self._deny
        if deny is not None and deny.search(url):
            return "pattern"
        return None

    def allows_mime(self, mime: str | None) -> bool:
        return mime is None or not mime.lower().startswith(self.deny_mime_prefixes)


def _repeats(path: str, limit: int) -> bool:
    """A non-empty segment occurring more than ``limit`` times: ``/a/b/a/b/a/b`` (limit 2)."""
    seen: dict[str, int] = {}
    for seg in path.split("/"):
        if seg:
            n = seen.get(seg, 0) + 1
            if n > limit:
                return True
            seen[seg] = n
    return False
