"""Near-duplicate classes: which payloads of a crawl are "the same document" (pure).

Every fetched document has an exact identity (the SHA-1 of its payload) and most have a
near-duplicate fingerprint (``dustless.extract.content_fingerprint``: a b-bit MinHash of the
visible text). ``near_classes`` groups the SHA-1s whose fingerprints are near (estimated
resemblance ≥ 0.8) and names each group by its first SHA-1, so that every reader —
``evaluate``, ``stats``, ``rules learn`` — can swap the payload hash for the class and keep
its formulas: ``un(D_i)`` of seed 000 §3 then counts distinct *documents*, not distinct bytes.

Finding the near pairs among a million fingerprints without comparing all pairs is locality-
sensitive hashing (Indyk & Motwani 1998; the banding of Leskovec, Rajaraman & Ullman,
*Mining of Massive Datasets* §3.4): the 128 values are cut into 16 bands of 8; two sketches
that agree on a whole band are candidates, and a candidate pair is kept when its estimated
resemblance reaches the threshold. At resemblance 0.9 a pair is a candidate with probability
1 − (1 − 0.9⁸)¹⁶ > 0.9999; at 0.5 one in sixteen is checked and rejected. Groups are the
connected components of the kept pairs (union-find): near-duplication is not transitive,
and a chain of near pairs becomes one class — which the tests bound on a templated site.
Each band is keyed, bucketed and scanned by C-level ``map``/``dict``/``compress``: Python
only looks at the sketches that share a band with an earlier one (1,000,000 sketches: ~6 s).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import compress
from operator import itemgetter, ne

from dustless.extract import FINGERPRINT_BYTES, NEAR_THRESHOLD, similarity

__all__ = ["BANDS", "near_classes"]

BANDS = 16
_ROWS = (FINGERPRINT_BYTES - 1) // BANDS


def near_classes(
    fingerprints: Mapping[str, bytes] | Iterable[tuple[str, bytes]],
    threshold: float = NEAR_THRESHOLD,
) -> dict[str, str]:
    """``sha1 -> class``: the first SHA-1 (in the order given) of its near-duplicate group.

    Only SHA-1s whose class differs from themselves are in the result: a payload without a
    near twin (or without a fingerprint) is its own class.
    """
    items = fingerprints.items() if isinstance(fingerprints, Mapping) else fingerprints
    pairs = list(items)
    if not pairs:
        return {}
    shas = [p[0] for p in pairs]
    fps = [p[1] for p in pairs]
    del pairs
    # Distinct fingerprints in order of first appearance, and the first SHA-1 of each.
    blobs = list(dict.fromkeys(fps))
    first_sha = dict(zip(reversed(fps), reversed(shas), strict=True))
    n = len(blobs)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    full = [i for i, fp in enumerate(blobs) if len(fp) == FINGERPRINT_BYTES]
    sketches = [blobs[i] for i in full] if len(full) != n else blobs
    m = len(full)
    touched: set[int] = set()  # sketches joined to another group
    for band in range(BANDS):
        lo = 1 + band * _ROWS
        keys = list(map(itemgetter(slice(lo, lo + _ROWS)), sketches))
        first = dict(zip(reversed(keys), range(m - 1, -1, -1), strict=True))
        if len(first) == m:
            continue  # no two sketches share this band
        for k in compress(range(m), map(ne, map(first.__getitem__, keys), range(m))):
            i, j = full[k], full[first[keys[k]]]
            a, b = find(i), find(j)
            if a != b and similarity(blobs[j], blobs[i]) >= threshold:
                parent[max(a, b)] = min(a, b)  # the earlier one names the group
                touched.update((i, j))
    # The name of each sketch's group: its own first SHA-1 unless it was joined to another.
    renamed = {blobs[i]: first_sha[blobs[find(i)]] for i in touched}
    out: dict[str, str] = {}
    for sha, fp in zip(shas, fps, strict=True):
        name = renamed.get(fp) or first_sha[fp]
        if name != sha:
            out[sha] = name
    return out
