"""Path patterns and longest-match decisions (RFC 9309 §2.2.2–§2.2.3).

A pattern is matched from the start of the URL's path+query; ``*`` matches any run of
characters and a final ``$`` anchors the end (§2.2.3). Google's reference matcher keeps a set
of positions and costs O(path × pattern); we split the pattern at ``*`` and place each literal
piece at its leftmost possible position with ``str.find``. With ``*`` as the only wildcard the
leftmost placement never loses a match, so the answer is the same, in C-speed scans, and a
hostile pattern such as ``/*a*a*a*a*b`` cannot make it backtrack the way a regex would.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Rule", "compile_rule", "path_of"]


@dataclass(frozen=True, slots=True)
class Rule:
    allow: bool
    pattern: str  # as written (escaped), for explanations
    pieces: tuple[str, ...]  # the pattern split at '*', without a final '$'
    anchored: bool  # the pattern ended in '$'

    @property
    def priority(self) -> int:
        # §2.2.2: "the most specific match found MUST be used. The most specific match is the
        # match that has the most octets." Google counts the octets of the pattern as written.
        return len(self.pattern)

    def matches(self, path: str) -> bool:
        pieces = self.pieces
        first = pieces[0]
        if not path.startswith(first):
            return False
        if len(pieces) == 1:
            return len(path) == len(first) if self.anchored else True
        pos = len(first)
        for piece in pieces[1:-1]:
            if piece:
                found = path.find(piece, pos)
                if found < 0:
                    return False
                pos = found + len(piece)
        last = pieces[-1]
        if self.anchored:
            return len(path) - len(last) >= pos and path.endswith(last)
        return not last or path.find(last, pos) >= 0


def compile_rule(allow: bool, pattern: str) -> Rule:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    return Rule(allow, pattern, tuple(body.split("*")), anchored)


def path_of(url: str) -> str:
    """The path, params and query of ``url``, as Google's ``GetPathParamsQuery`` cuts it.

    The URL is used as given (the caller passes it percent-encoded, as the crawler fetches
    it); the fragment is dropped; an empty path is ``/`` (RFC 9309 §2.2.2).
    """
    start = 2 if url.startswith("//") else 0
    early_path = _find_first_of(url, "/?;", start)
    protocol_end = url.find("://", start)
    if protocol_end < 0 or (0 <= early_path < protocol_end):
        # No scheme, or the '://' sits inside the path or query: it does not end a scheme.
        protocol_end = start
    else:
        protocol_end += 3
    path_start = _find_first_of(url, "/?;", protocol_end)
    if path_start < 0:
        return "/"
    hash_at = url.find("#", start)
    if 0 <= hash_at < path_start:
        return "/"
    path = url[path_start : hash_at if hash_at >= 0 else len(url)]
    return path if path.startswith("/") else "/" + path


def _find_first_of(text: str, chars: str, start: int) -> int:
    best = -1
    for char in chars:
        found = text.find(char, start)
        if found >= 0 and (best < 0 or found < best):
            best = found
    return best
