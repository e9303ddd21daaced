"""What the many-worker tests share: workers are other processes (nothing of theirs to await),
so a test waits for a condition it can read, and judges a crawl by its URLs' final states."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from dustless.store import CrawlStore, PostgresCrawlStore

__all__ = ["fetched_twice", "final_states", "finish", "started_and_connected", "until"]


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


def started_and_connected(
    db: str,
    names: Sequence[str],
    start: Callable[[str], subprocess.Popen[bytes]],
    workers: list[subprocess.Popen[bytes]],
    timeout: float = 60.0,
    *,
    hold: bool = True,
) -> list[subprocess.Popen[bytes]]:
    """Workers started one after another (``start(name)``; each added to ``workers`` at once),
    the test going on only when every one is past its first connection to the DB (registered
    in it). A worker rides out an outage once connected, but its first connection is not
    waited for (a wrong --db gets its line at once): a test that stops the server must not
    stop it before a worker on a loaded machine has even started. Each registered worker is
    held (SIGSTOP) until the last one has registered, so that no worker can have crawled the
    whole web alone before the others start — unless ``hold`` is false: a pause longer than
    the lease is a stall of its own, which a test of something else must not add."""

    def registered(name: str, proc: subprocess.Popen[bytes]) -> bool:
        assert proc.poll() is None, f"worker {name} exited {proc.returncode} before connecting"
        with PostgresCrawlStore(db, worker="check") as store:
            return bool(store.query("SELECT 1 FROM workers WHERE name = ?", (name,)))

    procs: list[subprocess.Popen[bytes]] = []
    try:
        for name in names:
            proc = start(name)
            workers.append(proc)
            procs.append(proc)
            until(partial(registered, name, proc), timeout=timeout)
            if hold and name != names[-1]:
                proc.send_signal(signal.SIGSTOP)
    finally:
        for proc in procs[:-1] if hold else ():
            proc.send_signal(signal.SIGCONT)
    return procs
