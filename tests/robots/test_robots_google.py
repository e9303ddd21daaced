"""Google's robots.txt suite (google/robotstxt robots_test.cc): every assertion, and the score."""

import json

import pytest

import support
from dustless.robots import Robots

GOOGLE_CASES = 145


@pytest.fixture(scope="module")
def cases():
    path = support.testdata("robots", "google_robotstxt_cases.json")
    return json.loads(path.read_text(encoding="utf-8"))["cases"]


def _decide(case):
    robots = Robots.parse(case["robots_txt"].encode("utf-8"))
    return robots.allowed(case["user_agent"], case["url"])


@pytest.mark.parametrize("index", range(GOOGLE_CASES))
def test_google_case(cases, index):
    case = cases[index]
    assert _decide(case) is case["allowed"], (
        case["test"],
        case["robots_txt"][:300],
        case["user_agent"],
        case["url"][:200],
    )


def test_google_score(cases, record_property, capsys):
    assert len(cases) == GOOGLE_CASES
    passed = sum(_decide(case) is case["allowed"] for case in cases)
    failed = sorted({c["test"] for c in cases if _decide(c) is not c["allowed"]})
    record_property("google_robots_score", f"{passed}/{len(cases)}")
    with capsys.disabled():
        print(f"\nGoogle robots.txt suite: {passed}/{len(cases)} assertions pass")
    assert passed == len(cases), failed
