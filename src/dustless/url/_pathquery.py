"""Path and query steps (RFC 3986 §5.2.4, §6.2; seed 000 §4; seed 001 "의미를 변경하는 정규화")."""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

__all__ = [
    "add_trailing_slash",
    "collapse_slashes",
    "lower_path",
    "remove_default_document",
    "remove_default_query_values",
    "remove_dot_segments",
    "remove_query_params",
    "remove_trailing_slash",
    "sort_query",
    "upper_path",
]


# A dot segment may be spelled with escapes: "%2E" is "." (RFC 3986 §2.3, §6.2.2.3), so that
# the step gives the same result whether or not decode-unreserved ran first (WHATWG agrees).
_DOT_SEGMENT_RE = re.compile(r"(?:^|/)(?:\.|%2[eE]){1,2}(?:/|$)")
_ONE_DOT = frozenset({".", "%2e", "%2E"})
_TWO_DOTS = frozenset(a + b for a in _ONE_DOT for b in _ONE_DOT)


def remove_dot_segments(path: str, _o: object = None) -> str:
    """RFC 3986 §5.2.4, written as the segment-stack equivalent of its loop: "." segments go,
    ".." removes the segment before it, and a trailing "." or ".." leaves a trailing "/"."""
    if ("." not in path and "%2" not in path) or _DOT_SEGMENT_RE.search(path) is None:
        return path
    if ".." not in path and "%" not in path and not path.endswith("/."):
        # Only "/./" segments: dropping them is all §5.2.4 does (repeated, for "/././").
        while "/./" in path:
            path = path.replace("/./", "/")
        return path
    segments = path.split("/")
    absolute = not segments[0]
    floor = 1 if absolute else 0  # the leading "" of an absolute path is the root
    out: list[str] = []
    for seg in segments:
        if seg in _ONE_DOT:
            continue
        if seg in _TWO_DOTS:
            # ".." never climbs above the root (§5.2.4 step 2C on "/..").
            if len(out) > floor:
                out.pop()
            continue
        out.append(seg)
    if segments[-1] in _ONE_DOT or segments[-1] in _TWO_DOTS:
        out.append("")
    result = "/".join(out)
    if absolute and not result.startswith("/"):
        result = "/" + result
    return result


def collapse_slashes(path: str, _o: object = None) -> str:
    """``/foo//bar.html`` → ``/foo/bar.html`` (001: 중복 슬래시 제거)."""
    if "//" not in path:
        return path
    return re.sub("/{2,}", "/", path)


_ESCAPE_SPLIT_RE = re.compile(r"(%[0-9A-Fa-f]{2})")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _case_outside_escapes(path: str, table: dict[int, int]) -> str:
    # Escapes keep their hex as it is (upper case after uppercase-percent-hex): lowercasing
    # "%2F" to "%2f" would undo §6.2.2.1 and break idempotence.
    if "%" not in path:
        return path.translate(table)
    parts = _ESCAPE_SPLIT_RE.split(path)
    return "".join(p if i % 2 else p.translate(table) for i, p in enumerate(parts))


def lower_path(path: str, _o: object = None) -> str:
    """000 §4.1 method (2): the recommended one (coverage loss 0.01)."""
    if "%" not in path and path.isascii():
        return path.lower()  # the same as the ASCII table here, and several times faster
    return _case_outside_escapes(path, _ASCII_LOWER)


def upper_path(path: str, _o: object = None) -> str:
    """000 §4.1 method (3), for measurement only (coverage loss 0.11)."""
    if "%" not in path and path.isascii():
        return path.upper()
    return _case_outside_escapes(path, _ASCII_UPPER)


def remove_default_document(path: str, names: tuple[str, ...]) -> str:
    """``/a/index.html`` → ``/a/`` when the last segment is one of ``names`` (000 §4.4)."""
    slash = path.rfind("/")
    if slash >= 0 and path[slash + 1 :] in names:
        return path[: slash + 1]
    return path


def add_trailing_slash(path: str, _o: object = None) -> str:
    """``/pubs`` → ``/pubs/`` (000 §4.2 method (2)), only when the last segment has no
    extension: ``/a/paper.pdf`` names a file, not a directory a server would redirect."""
    if not path or path.endswith("/"):
        return path
    last = path[path.rfind("/") + 1 :]
    if "." in last:
        return path
    return path + "/"


def remove_trailing_slash(path: str, _o: object = None) -> str:
    """``/pubs/`` → ``/pubs`` (000 §4.2 method (3)); the root ``/`` stays. All trailing
    slashes go at once, so that the step is idempotent on ``/a//``."""
    if len(path) <= 1 or not path.endswith("/"):
        return path
    return path.rstrip("/") or "/"


@lru_cache(maxsize=64)
def _param_matcher(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # Names or shell-style patterns ("utm_*"), compiled once into one regex per option tuple.
    if not patterns:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def _name(param: str) -> str:
    eq = param.find("=")
    return param if eq < 0 else param[:eq]


def remove_query_params(query: str, patterns: tuple[str, ...]) -> str | None:
    """Drop parameters whose *name* matches (001: 사용되지 않는 쿼리 변수 제거); every other
    parameter keeps its bytes and its place. A query left empty is dropped with its "?"."""
    if not query:
        return query
    match = _param_matcher(patterns).match
    params = query.split("&")
    kept = [p for p in params if not (p and match(_name(p)))]
    if len(kept) == len(params):
        return query
    result = "&".join(kept)
    return result if result.strip("&") else None


def remove_default_query_values(
    query: str, defaults: tuple[tuple[str, str], ...], drop_blank: bool
) -> str | None:
    """001's example ``?id=&sort=ascending`` → nothing: parameters with a blank value
    (``id=``, when ``drop_blank``) and parameters whose value is a configured default."""
    if not query:
        return query
    pairs = {f"{k}={v}" for k, v in defaults}
    params = query.split("&")
    kept = [
        p
        for p in params
        if not (
            p in pairs or (drop_blank and p and (p.endswith("=") and p.find("=") == len(p) - 1))
        )
    ]
    if len(kept) == len(params):
        return query
    result = "&".join(kept)
    return result if result.strip("&") else None


def sort_query(query: str, _o: object = None) -> str:
    """Parameters in order of their name, compared as written (001: 조회 매개 변수 정렬).

    The sort is stable, so repeated names (``a=2&a=1``, whose order a server may read as a
    list) keep their relative order; each parameter keeps its exact bytes (``a=`` and ``a``
    stay different, ``%20`` and ``+`` untouched). Empty pieces (``&&``) name no parameter and
    are dropped.
    """
    if not query or "&" not in query:
        return query
    params = [p for p in query.split("&") if p]
    params.sort(key=_name)
    return "&".join(params)
