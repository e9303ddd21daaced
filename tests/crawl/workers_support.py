"""What the many-worker tests share: workers are other processes (nothing of theirs to await),
so a test waits for a condition it can read, and judges a crawl by its URLs' final states."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

from dustless.store import CrawlStore

__all__ = ["fetched_twice", "final_states", "finish", "until"]


def until(cond: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Wait for ``cond`` to return a true value (polled every 50 ms); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def finish(*procs: subprocess.Popen[bytes]) -> list[str]:
    """Wait for each worker; each must exit 0. Their stderr texts."""
    errs = []
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
        errs.append(err.decode())
    return errs


def final_states(store: CrawlStore) -> set[tuple[str, str, str | None]]:
    """Every URL with its state and the state of its fetch."""
    rows = store.query(
        "SELECT u.url, u.state, f.state FROM urls u LEFT JOIN fetches f ON f.url_id = u.id"
    )
    return {(url, state, fetched) for url, state, fetched in rows}


def fetched_twice(store: CrawlStore) -> list[Any]:
    """URLs with more than one fetch row."""
    return store.query("SELECT url_id FROM fetches GROUP BY url_id HAVING count(*) > 1")
