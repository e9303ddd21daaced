"""Helpers shared by the tests (importable as ``support``; see pytest ``pythonpath``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# The public conformance data lives beside the repository, never inside it.
TESTDATA = Path(os.environ.get("DUSTLESS_TESTDATA", REPO.parent / "shared" / "testdata"))


def require(condition: object, reason: str) -> None:
    """Skip the calling test when ``condition`` is false — or fail it under CI.

    CI sets ``DUSTLESS_REQUIRE_ALL=1``: there a missing service, browser or data file is a
    failure, so a skipped test can never pass for a green one.
    """
    if condition:
        return
    if os.environ.get("DUSTLESS_REQUIRE_ALL") == "1":
        pytest.fail(f"required but missing: {reason}", pytrace=False)
    pytest.skip(reason)


def testdata(*parts: str) -> Path:
    """Path to a file of ``../shared/testdata``; skips (or fails under CI) when absent."""
    path = TESTDATA.joinpath(*parts)
    require(path.exists(), f"test data not found: {path}")
    return path


# Debian's Chromium, headless, kept off the network: without the background-networking flags
# it keeps trying to reach Google's hosts, which this machine's closed network refuses.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str:
    """The path of Debian's ``chromium`` (never a browser downloaded by a test tool)."""
    path = shutil.which("chromium")
    require(path, "Debian's chromium is not installed (apt-get install chromium)")
    assert path is not None
    return path
