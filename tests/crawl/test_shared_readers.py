"""The reading commands on a crawl shared by workers: ``stats``, ``evaluate``, ``report``,
``export``, ``changes``, ``recrawl`` and ``rules learn`` take ``--db postgresql://…`` and read
each worker's WARC files from its directory.

One crawl of a small test web by three workers (processes, as on three machines) against
the throwaway PostgreSQL server, and one SQLite crawl of the same web: what the commands say
about the two must be the same, but for what only timing decides (rates, which worker
fetched what, the WARC files' names and sizes).
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dustless.cli.main import main
from dustless.crawl import run_crawl
from dustless.crawl.config import CrawlConfig
from dustless.export import check_wacz
from dustless.store import PostgresCrawlStore
from testweb_fixture import TestWeb, start_testweb

WEB: dict[str, Any] = {"profile": "clean", "sites": 5, "pages_per_site": 16}


@dataclass
class Shared:
    web: TestWeb
    sqlite: Path  # one SQLite crawl of the web
    db: str  # the same web crawled by three workers
    dirs: list[Path]  # their directories


def _resolve(web: TestWeb) -> tuple[str, ...]:
    args = web.resolve_args
    return tuple(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--resolve")


@pytest.fixture(scope="module")
def shared(
    postgres: Any,
    _testweb_pool: dict[tuple[Any, ...], TestWeb],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Shared]:
    key = tuple(sorted(WEB.items()))
    web = _testweb_pool.get(key)
    if web is None or web.process is None or web.process.poll() is not None:
        web = _testweb_pool[key] = start_testweb(tmp_path_factory.mktemp("testweb"), **WEB)
    web.reset()
    root = tmp_path_factory.mktemp("shared")
    config = CrawlConfig(
        seeds=tuple(web.seeds), resolve=_resolve(web), delay=0.0, delay_factor=0.0, progress=False
    )
    assert run_crawl(config, root / "sqlite").finished
    web.reset()
    db = postgres.new_database()
    dirs = [root / f"w{i}" for i in (1, 2, 3)]

    def worker(d: Path) -> list[str]:
        return [
            sys.executable, "-m", "dustless", "crawl", str(d), *web.seeds, *web.resolve_args,
            "--db", db, "--worker", d.name, "--delay", "0", "--delay-factor", "0",
            "--lease-ttl", "5", "--quiet",
        ]  # fmt: skip

    logs = [root / f"{d.name}.log" for d in dirs]
    procs = []
    for d, log in zip(dirs, logs, strict=True):
        with log.open("wb") as err:  # a file, not a pipe: nothing waits on a full pipe
            procs.append(subprocess.Popen(worker(d), stdout=subprocess.DEVNULL, stderr=err))
    for proc, log in zip(procs, logs, strict=True):
        assert proc.wait(timeout=120) == 0, log.read_text()[-2000:]
    yield Shared(web, root / "sqlite", db, dirs)
    postgres.drop_database(db)


def _workers_with_records(db: str) -> set[str]:
    """The workers whose WARC files hold a fetch's record: which of them fetched what is
    the workers' share, timing's choice (one may have fetched everything before another
    started), so the tests below ask the DB rather than expect each worker to have a share."""
    with PostgresCrawlStore(db, worker="check") as store:
        rows = store.query("SELECT DISTINCT worker FROM fetches WHERE warc_file IS NOT NULL")
    return {worker for (worker,) in rows}


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert main([*args, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


# What only timing and the workers' share decide, left out of the comparison: rates and
# times, the WARC files (names, and compressed sizes: each record names its worker's file),
# and the internal links of a page, counted against the links its process had not met yet.
_TIMING = {"directory", "duration", "pages_per_second", "started_at", "ended_at", "time_line",
           "storage", "stored_bytes", "top_hosts", "first_fetch", "last_fetch", "timeline",
           "internal_links", "links_per_document"}  # fmt: skip


def _drop_timing(stats: Any) -> Any:
    if isinstance(stats, dict):
        return {k: _drop_timing(v) for k, v in stats.items() if k not in _TIMING}
    if isinstance(stats, list):
        return [_drop_timing(v) for v in stats]
    return stats


def test_stats_of_three_workers_equal_those_of_one_sqlite_crawl(
    shared: Shared, capsys: pytest.CaptureFixture[str]
) -> None:
    pg = _json(capsys, "stats", "--db", shared.db)
    lite = _json(capsys, "stats", str(shared.sqlite))
    assert pg["fetches"] > 50
    assert _drop_timing(pg) == _drop_timing(lite)
    # Fig. 4 counts every worker's WARC files; the documents they hold are the same.
    assert sum(f["records"] for f in pg["storage"]) == sum(f["records"] for f in lite["storage"])
    assert {f["file"].split("-")[1] for f in pg["storage"]} <= {"w1", "w2", "w3"}
    assert main(["stats", "--db", shared.db]) == 0
    assert "127.0.0.1" in capsys.readouterr().out  # named by host:port/db, no password


def test_evaluate_reads_a_shared_crawl(shared: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    pg = _json(capsys, "evaluate", "--db", shared.db, "--truth", str(shared.web.truth_path))
    lite = _json(capsys, "evaluate", str(shared.sqlite), "--truth", str(shared.web.truth_path))
    assert pg["rows"] == lite["rows"]
    assert pg["recommended_policy"] == lite["recommended_policy"]


def test_report_of_a_shared_crawl(
    shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    assert main(["report", "--db", shared.db, "-o", str(out)]) == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "seed 000 Table 1" in text
    workers = _workers_with_records(shared.db)
    assert workers
    for worker in workers:  # every worker's WARC files
        assert f"dustless-{worker}-" in text, worker


def test_export_reads_each_workers_directory(
    shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = tmp_path / "files"
    assert main(["export", "--db", shared.db, "-o", str(files)]) == 0, capsys.readouterr().err
    assert "exported" in capsys.readouterr().out
    lite = tmp_path / "lite"
    assert main(["export", str(shared.sqlite), "-o", str(lite)]) == 0
    capsys.readouterr()

    def documents(root: Path) -> list[str]:
        return sorted(p.read_text(encoding="utf-8").split("<file>")[0] for p in root.rglob("*.xml"))

    assert len(documents(files)) == len(documents(lite)) > 50
    wacz = tmp_path / "crawl.wacz"
    assert main(["export", "--db", shared.db, "--format", "wacz", "-o", str(wacz)]) == 0
    assert check_wacz(wacz) == []
    with zipfile.ZipFile(wacz) as z:
        archived = {n.split("/")[1].split("-")[1] for n in z.namelist() if n.startswith("archive/")}
    # Every worker's WARC records (a worker that fetched only a robots.txt adds its file).
    assert set() < _workers_with_records(shared.db) <= archived <= {"w1", "w2", "w3"}
    # A worker's directory elsewhere on this machine: --worker-dir says where.
    with PostgresCrawlStore(shared.db, worker="check") as store:
        ((busiest,),) = store.query(
            "SELECT worker FROM fetches GROUP BY worker ORDER BY count(*) DESC, worker LIMIT 1"
        )
    home = next(d for d in shared.dirs if d.name == busiest)
    moved = tmp_path / "moved"
    home.rename(moved)
    try:
        assert main(["export", "--db", shared.db, "-o", str(tmp_path / "f2")]) == 0
        assert "unreadable WARC records skipped" in capsys.readouterr().out
        again = ["export", "--db", shared.db, "-o", str(tmp_path / "f3"), "--worker-dir",
                 f"{busiest}={moved}"]  # fmt: skip
        assert main(again) == 0
        assert "skipped" not in capsys.readouterr().out
        assert (
            main(["export", "--db", shared.db, "--format", "wacz", "-o", str(tmp_path / "x")]) == 2
        )
        assert "--worker-dir" in capsys.readouterr().err
    finally:
        moved.rename(home)


def test_rules_learn_reads_a_shared_crawl(
    shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pg, lite = tmp_path / "pg.xml", tmp_path / "lite.xml"
    assert main(["rules", "learn", "--db", shared.db, "-o", str(pg)]) == 0
    assert main(["rules", "learn", str(shared.sqlite), "-o", str(lite)]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("wrote")]
    assert said[: len(said) // 2] == said[len(said) // 2 :]  # the same fetches, documents, rules
    assert "fetches" in said[0]
    assert pg.read_text(encoding="utf-8") == lite.read_text(encoding="utf-8")


def test_recrawl_then_changes_on_a_shared_crawl(
    shared: Shared, postgres: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    # On a copy of the crawl's DB: the other tests read the one crawl.
    copy = postgres.new_database()
    postgres.drop_database(copy)
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        admin.execute(
            f"CREATE DATABASE {copy.rsplit('/', 1)[1]} TEMPLATE {shared.db.rsplit('/', 1)[1]}"
        )
    try:
        shared.web.reset()
        shared.web.set_day(1)
        worker = tmp_path / "r1"
        assert (
            main(["recrawl", str(worker), "--db", copy, "--quiet", "--delay", "0",
                  "--batch-time", "2030-01-01T00:00:00Z"])
            == 0
        ), capsys.readouterr().err  # fmt: skip
        with PostgresCrawlStore(copy, worker="check") as store:
            batches = store.batches()
            assert [b.number for b in batches] == [1, 2]
            assert batches[-1].ended_at is not None
            (n,) = store.query("SELECT count(*) FROM fetches WHERE batch = 2")[0]
            (m,) = store.query("SELECT count(*) FROM fetches WHERE batch = 1")[0]
        assert n >= m > 50
        rep = _json(capsys, "changes", "--db", copy)
        assert len(rep["batches"]) == 2
        assert main(["changes", "--db", copy]) == 0
        assert "2 batches" in capsys.readouterr().out
        # evaluate --fetch: one more worker, its probe batch in the DB, its WARC files in DIR.
        probe = tmp_path / "probe"
        fetch = ["evaluate", str(probe), "--db", copy, "--fetch", *shared.web.resolve_args]
        assert main([*fetch, "--json"]) == 0, capsys.readouterr().err
        assert "normalized forms" in capsys.readouterr().err
        with PostgresCrawlStore(copy, worker="check") as store:
            last = store.batches()[-1]
            assert '"evaluate-fetch"' in last.config
            assert last.ended_at is not None
            names = [w.name for w in store.workers() if w.name.startswith("evaluate-")]
        assert len(names) == 1
        assert (probe / "warc").is_dir()
        assert main(["evaluate", "--db", copy, "--fetch"]) == 2
        assert "give it as DIR" in capsys.readouterr().err
    finally:
        shared.web.set_day(0)
        postgres.drop_database(copy)


def test_a_reading_command_names_one_crawl(
    shared: Shared, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats"]) == 2
    assert "give the crawl directory DIR" in capsys.readouterr().err
    assert main(["stats", str(shared.sqlite), "--db", shared.db]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["stats", "--db", "sqlite:///x.db"]) == 2
    assert "PostgreSQL URL" in capsys.readouterr().err
    port = shared.db.rsplit(":", 1)[1].split("/")[0]
    assert main(["stats", "--db", f"postgresql://postgres:pw@127.0.0.1:{port}/nope"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err
    assert "pw" not in err
    assert len(err.strip().splitlines()) == 1
