"""Crash safety (docs/storage.md): a writer killed with SIGKILL mid-batch loses nothing it
committed, and every WARC pointer in the DB reads back intact after the resume."""

from __future__ import annotations

import gzip
import hashlib
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from dustless.store import SQLiteStore, WarcWriter, iter_records, read_record

WORKER = Path(__file__).with_name("crash_worker.py")


def _run_until_killed(outdir: Path, commits: int, rng: random.Random) -> int:
    """Start the worker, let it commit ``commits`` times (plus a random few lines), SIGKILL it;
    the last fetch count it reported as committed."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    last = 0
    with subprocess.Popen(
        [sys.executable, str(WORKER), str(outdir)], stdout=subprocess.PIPE, text=True, env=env
    ) as proc:
        assert proc.stdout is not None
        try:
            for _ in range(commits + rng.randrange(3)):
                line = proc.stdout.readline()
                assert line.startswith("committed "), line
                last = int(line.split()[1])
        finally:
            proc.send_signal(signal.SIGKILL)  # mid-batch: the worker never pauses
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return last


def _check(outdir: Path, committed: int) -> int:
    # Reopening the writer is the resume step: it repairs a torn tail.
    with SQLiteStore(outdir) as store:
        WarcWriter(outdir / "warc", committed_ends=store.warc_ends()).close()
        rows = list(store.iter_fetches())
        assert len(rows) >= committed
        for row in rows:
            assert row.warc is not None
            rec = read_record(outdir / "warc", row.warc)
            assert rec.type == "response"
            assert rec.target_uri == row.url
            assert hashlib.sha1(rec.payload).hexdigest() == row.content_sha1
        # every URL marked done has its fetch; identities stayed unique
        done = store.query("SELECT count(*) FROM urls WHERE state = 'done'")[0][0]
        fetched = store.query("SELECT count(DISTINCT url_id) FROM fetches")[0][0]
        assert done == fetched
    for f in sorted((outdir / "warc").iterdir()):
        list(iter_records(f))  # every file is whole records only
    return len(rows)


def _tear(outdir: Path) -> None:
    """Append half a record to the newest WARC file: what a kill inside ``write`` leaves.

    A record is one ``write`` call, so a real SIGKILL rarely lands inside one; this makes
    sure every run exercises the torn-tail path of the resume.
    """
    newest = max((outdir / "warc").iterdir())
    member = gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 5000\r\n\r\n" * 40)
    with open(newest, "ab") as f:
        f.write(member[: len(member) // 2])


def test_sigkill_mid_batch_then_resume(tmp_path: Path) -> None:
    rng = random.Random(4)
    total = 0
    for round_ in range(3):
        committed = _run_until_killed(tmp_path, commits=3, rng=rng)
        if round_ == 1:
            _tear(tmp_path)
        now = _check(tmp_path, committed)
        assert now >= total  # a resume never loses committed work
        total = now
    assert total >= 9
