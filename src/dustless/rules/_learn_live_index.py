"""Content classes as pages arrive: which documents of a site are "the same document".

The offline learner reads a finished crawl and groups its payloads once (``analysis._near``:
locality-sensitive hashing over all fingerprints, then union-find). During a crawl the same
question is asked one page at a time, so the index here is incremental: a document's class is
the class of the first earlier document with the same payload (SHA-1), or whose fingerprint is
near its own (estimated resemblance ≥ ``NEAR_THRESHOLD``), found through the same banding —
16 bands of 8 values, Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets* §3.4 — and
checked against that class's first fingerprint; otherwise a new class. A page costs 16 slices,
16 dictionary lookups and, where a band matches, a similarity or two.

Unlike union-find, a class is never joined to another later: a chain of near pairs does not
grow one class (on a templated site, a chain of near pages links documents that are not
near at all, and a union would merge them), and a class once given to a page never changes,
so the learner's counts stay valid.
"""

from __future__ import annotations

from dustless.extract import FINGERPRINT_BYTES, NEAR_THRESHOLD, similarity

__all__ = ["BANDS", "ContentIndex"]

BANDS = 16
_ROWS = (FINGERPRINT_BYTES - 1) // BANDS


class ContentIndex:
    """Payloads and fingerprints seen on one site, each with its class (an ``int`` ≥ 0).

    Bounded by ``capacity`` documents: past it, a document that matches no known one gets no
    class (``None``: not evidence), so memory stays bounded on a large site while the pages
    already classed keep their meaning.
    """

    __slots__ = ("_bands", "_next", "_reps", "_sha1s", "capacity")

    def __init__(self, capacity: int = 4000) -> None:
        self.capacity = capacity
        self._sha1s: dict[str, int] = {}
        self._bands: dict[bytes, int] = {}  # band bytes + band number -> class
        self._reps: dict[int, bytes] = {}  # class -> its first fingerprint
        self._next = 0

    def __len__(self) -> int:
        return self._next

    def classify(self, sha1: str | None, fp: bytes | None) -> int | None:
        """The class of a document with payload ``sha1`` and fingerprint ``fp``."""
        if sha1 is not None:
            cls = self._sha1s.get(sha1)
            if cls is not None:
                return cls
        full = fp is not None and len(fp) == FINGERPRINT_BYTES
        keys: list[bytes] = []
        cls = None
        if full:
            assert fp is not None
            reps, bands = self._reps, self._bands
            tried: set[int] = set()
            for band in range(BANDS):
                lo = 1 + band * _ROWS
                key = fp[lo : lo + _ROWS] + bytes((band,))
                keys.append(key)
                other = bands.get(key)
                if cls is None and other is not None and other not in tried:
                    tried.add(other)
                    rep = reps.get(other)
                    if rep is not None and similarity(rep, fp) >= NEAR_THRESHOLD:
                        cls = other
        if cls is None:
            if self._next >= self.capacity:
                return None
            cls = self._next
            self._next += 1
            if full:
                assert fp is not None
                self._reps[cls] = fp
        if sha1 is not None:
            self._sha1s[sha1] = cls
        for key in keys:
            self._bands.setdefault(key, cls)
        return cls
