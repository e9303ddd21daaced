"""A PostgreSQL worker's directory given to a reading command: it names the crawl's DB in
its ``worker.json``, so the command says which ``--db`` to use — never "not a crawl
directory", and never a password (the file keeps none)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def worker_dir(small_web, pg_db, cli, tmp_path):
    w1 = tmp_path / "w1"
    proc = cli(
        "crawl", str(w1), small_web.seeds[0], *small_web.resolve_args,
        "--db", pg_db, "--worker", "w1", "--delay", "0", "--delay-factor", "0", "--quiet",
        "--max-pages", "5",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads((w1 / "worker.json").read_text())["worker"] == "w1"
    return w1


def test_reading_commands_name_the_db_of_a_worker_directory(worker_dir, pg_db, cli, tmp_path):
    where = pg_db.split("@", 1)[1]  # 127.0.0.1:PORT/DBNAME
    hint = f"postgresql://USER@{where}"
    for argv in (
        ["stats", "{dir}"],
        ["evaluate", "{dir}"],
        ["report", "{dir}", "-o", "{tmp}/r.html"],
        ["export", "{dir}", "--format", "wacz", "-o", "{tmp}/c.wacz"],
        ["changes", "{dir}"],
        ["rules", "learn", "{dir}", "-o", "{tmp}/r.xml"],
    ):
        proc = cli(*(a.format(dir=worker_dir, tmp=tmp_path) for a in argv))
        command = " ".join(argv[: argv.index("{dir}")])
        assert proc.returncode == 2, (argv, proc.stderr)
        assert proc.stderr == (
            f"dustless {command}: error: {worker_dir} is the directory of worker 'w1' of a "
            f"crawl shared on PostgreSQL ({where}): instead, give --db {hint}\n"
        ), argv
    # recrawl keeps DIR (this machine's worker) beside --db.
    proc = cli("recrawl", str(worker_dir))
    assert proc.returncode == 2
    assert proc.stderr.endswith(f"({where}): add --db {hint}\n")
    # The hint, with the user filled in, is the crawl.
    user = pg_db.split("://", 1)[1].split("@", 1)[0]
    ok = cli("stats", "--db", hint.replace("USER", user))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout


def test_the_library_reader_says_the_same(worker_dir, pg_db):
    from dustless.errors import InvalidOption
    from dustless.store import open_crawl

    with pytest.raises(InvalidOption, match=r"worker 'w1' .* read it with --db postgresql://"):
        open_crawl(worker_dir)
