"""Codes: base62 (seed 003 ch. 8) of a keyed permutation — never colliding, not guessable."""

import itertools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.shortener._codes import (
    ALPHABET,
    CODE_LENGTH,
    MAX_ID,
    ROUNDS,
    Codec,
    base62_decode,
    base62_encode,
    is_code_shape,
)

KEY = bytes(range(32))
CODEC = Codec(KEY)


def test_base62_follows_the_seed_worked_example():
    # Seed 003 ch. 8 (base-62 변환): 11157 = 2×62² + 55×62 + 59 → [2, T, X].
    assert base62_encode(11157, width=0) == "2TX"
    assert base62_decode("2TX") == 11157
    assert ALPHABET[10] == "a"
    assert ALPHABET[36] == "A"
    assert ALPHABET[61] == "Z"


def test_seven_characters_cover_the_seed_ten_year_estimate():
    # Seed 003 표 8-1: 62**7 ≈ 3.5 trillion ≥ 365 billion records for ten years.
    assert MAX_ID + 1 == 62**7 >= 365_000_000_000
    assert CODEC.encode(0) != CODEC.encode(MAX_ID)
    assert len(CODEC.encode(MAX_ID)) == CODE_LENGTH
    with pytest.raises(ValueError, match="outside"):
        CODEC.encode(MAX_ID + 1)
    with pytest.raises(ValueError, match="outside"):
        CODEC.encode(-1)


@settings(max_examples=2000, deadline=None)
@given(st.integers(min_value=0, max_value=MAX_ID))
def test_decode_inverts_encode_over_the_whole_domain(n):
    code = CODEC.encode(n)
    assert len(code) == CODE_LENGTH
    assert is_code_shape(code)
    assert CODEC.decode(code) == n


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=7, max_size=7))
def test_every_code_is_the_code_of_exactly_one_id(code):
    # Surjective as well as injective: decode is defined on every 7-character code.
    assert CODEC.encode(CODEC.decode(code)) == code


@pytest.mark.parametrize("radices", [(62, 62), (37, 1001), (238, 250)])
def test_the_same_feistel_code_is_a_bijection_on_small_domains_exhaustively(radices):
    # The proof (each round (L, R) → (R, L + F(R) mod a) is invertible whatever F is) does
    # not depend on the sizes, so checking the very same code exhaustively on small mixed
    # radices checks the structure: every value is hit exactly once.
    codec = Codec(KEY, radices)
    domain = codec.domain
    image = [codec.permute(i) for i in range(domain)]
    assert sorted(image) == list(range(domain))
    assert all(codec.unpermute(m) == i for i, m in enumerate(image))


def test_each_round_is_invertible_for_any_round_function_value():
    # The algebra behind the proof: for fixed R and any F(R), L ↦ (L + F(R)) mod a is a
    # bijection of Z_a, so the round can be undone: L = (R' − F(R)) mod a.
    a = 62**3
    for f in (0, 1, a - 1, 123_456_789):
        image = {(left + f) % a for left in range(a)}
        assert len(image) == a
    assert ROUNDS % 2 == 0  # an even number of rounds brings the halves back to (Z_a, Z_b)


@pytest.mark.slow
def test_millions_of_ids_give_distinct_codes():
    # Codes never collide, checked over millions of ids. A permutation cannot
    # collide (the tests above check the structure that makes it one); this checks the
    # implementation itself on the ids a service hands out first, 1..1,000,000, plus
    # 1,000,000 ids spread over the whole domain up to 62**7 - 1 (~12 s here).
    ids = set(range(1, 1_000_001)) | set(range(MAX_ID, 0, -(MAX_ID // 1_000_000)))
    codes = {CODEC.encode(i) for i in ids}
    assert len(codes) == len(ids) > 1_990_000
    assert all(len(c) == CODE_LENGTH for c in codes)


def test_consecutive_ids_give_unrelated_codes():
    # Seed 003's security remark: with plain base62 of a counter the next code is guessable.
    codes = [CODEC.encode(i) for i in range(1, 2001)]
    same_first = sum(a[0] == b[0] for a, b in itertools.pairwise(codes))
    same_last = sum(a[-1] == b[-1] for a, b in itertools.pairwise(codes))
    # 1/62 expected by chance: ~32 of 1999; a counter would share almost every prefix.
    assert same_first < 100
    assert same_last < 100
    # And no code is plain base62 of its id plus a constant.
    diffs = {base62_decode(c) - i for i, c in enumerate(codes, start=1)}
    assert len(diffs) > 1900


def test_the_key_changes_every_code():
    other = Codec(os.urandom(32))
    same = sum(CODEC.encode(i) == other.encode(i) for i in range(1, 1001))
    assert same <= 1


def test_bad_codes_and_keys_are_refused():
    with pytest.raises(ValueError, match="base62"):
        CODEC.decode("abc")
    with pytest.raises(ValueError, match="base62"):
        CODEC.decode("abc-efg")
    with pytest.raises(ValueError, match="16 bytes"):
        Codec(b"short")
