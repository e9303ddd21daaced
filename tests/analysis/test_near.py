"""Near-duplicate classes: near fingerprints group, the first SHA-1 names the group."""

from __future__ import annotations

import random

from dustless.analysis._near import near_classes


def _sketch(rng: random.Random) -> bytes:
    return bytes([1, *(rng.randrange(256) for _ in range(128))])


def _near(fp: bytes, changed: int, rng: random.Random) -> bytes:
    out = bytearray(fp)
    for i in rng.sample(range(1, 129), changed):
        out[i] = (out[i] + 1) % 256
    return bytes(out)


def test_near_fingerprints_share_a_class_named_by_the_first_sha() -> None:
    rng = random.Random(3)
    a, b = _sketch(rng), _sketch(rng)
    fps = {
        "a1": a,
        "b1": b,
        "a2": _near(a, 10, rng),  # resemblance ~0.92: the same document
        "a3": a,  # the same text, other bytes
        "c1": _near(a, 60, rng),  # resemblance ~0.5: another document
        "short": b"\x01abc",  # not a full sketch: its own class
    }
    classes = near_classes(fps)
    assert classes == {"a2": "a1", "a3": "a1"}
    assert near_classes({}) == {}


def test_every_planted_near_pair_is_found_among_many() -> None:
    rng = random.Random(5)
    fps: dict[str, bytes] = {}
    for i in range(3000):
        fp = _sketch(rng)
        fps[f"p{i}"] = fp
        if i % 3 == 0:
            fps[f"q{i}"] = _near(fp, 12, rng)
    classes = near_classes(fps)
    assert classes == {f"q{i}": f"p{i}" for i in range(0, 3000, 3)}
