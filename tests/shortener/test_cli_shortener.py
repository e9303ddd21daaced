"""``dustless shortener`` admin commands: add, stats, export/import, and bad input."""

import json
import socket
import subprocess
import sys

import pytest

from dustless.cli.main import main


def run(capsys, *args):
    code = main(["shortener", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["shortener", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert "dustless shortener serve" in out
    for action in ("serve", "add", "stats", "export", "import"):
        assert action in out
    with pytest.raises(SystemExit):
        main(["shortener", "serve", "--help"])
    out = capsys.readouterr().out
    for option in ("--db", "--workers", "--redirect", "--base-url", "--blocklist", "--rate-limit"):
        assert option in out


def test_add_then_stats(capsys, db_url):
    code, out, err = run(capsys, "add", "https://example.com/x", "--db", db_url)
    assert code == 0, err
    short = out.strip()
    assert short.startswith("http://127.0.0.1:8000/")
    code, again, err = run(capsys, "add", "HTTPS://EXAMPLE.COM:443/x", "--db", db_url)
    assert again.strip() == short
    assert "already had" in err
    code, out, _ = run(capsys, "add", "https://e.org/", "--alias", "cli-alias", "--db", db_url)
    assert out.strip().endswith("/cli-alias")
    code, out, err = run(capsys, "stats", short.rsplit("/", 1)[1], "--db", db_url)
    assert code == 0, err
    assert "https://example.com/x" in out
    assert "0 clicks" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "javascript:alert(1)"], "scheme 'javascript' is not allowed"),
        (["add", "https://u:p@example.com/"], "credentials"),
        (["add", "https://example.com/", "--alias", "a"], "--slug must be 3 to 64"),
        (["add", "https://example.com/", "--expires", "2001-01-01T00:00:00Z"], "in the past"),
        (["stats", "nothere"], "no link 'nothere'"),
        (["import", "/nonexistent/links.csv"], "cannot read"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(capsys, db_url, args, message):
    code, _out, err = run(capsys, *args, "--db", db_url)
    assert code == 2
    assert err.count("\n") == 1
    assert message in err
    assert "Traceback" not in err


def test_bad_db_urls_are_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "stats", "abc", "--db", "mysql://x")
    assert (code, err.count("\n")) == (2, 1)
    assert "expected sqlite:///PATH or postgresql://" in err
    code, _, err = run(capsys, "stats", "abc", "--db", f"sqlite:///{tmp_path}/no/such/dir/x.db")
    assert (code, err.count("\n")) == (1, 1)
    assert "does not exist" in err


def test_export_import_round_trip_keeps_codes(capsys, tmp_path, db_url):
    codes = []
    for i in range(3):
        _, out, _ = run(capsys, "add", f"https://example.com/{i}", "--db", db_url)
        codes.append(out.strip().rsplit("/", 1)[1])
    run(
        capsys,
        "add",
        "https://example.com/a",
        "--alias",
        "keep",
        "--redirect",
        "301",
        "--db",
        db_url,
    )
    csv_path = tmp_path / "links.csv"
    code, _, err = run(capsys, "export", "--format", "csv", "--db", db_url, "-o", str(csv_path))
    assert code == 0
    assert "exported 4 links" in err
    text = csv_path.read_text()
    assert text.splitlines()[0] == (
        "code,long_url,redirect,created_at,expires_at,alias,max_visits,visits"
    )
    other = f"sqlite:///{tmp_path / 'other.db'}"
    code, _, err = run(capsys, "import", str(csv_path), "--db", other)
    assert code == 0, err
    assert "imported 4 links" in err
    for c in [*codes, "keep"]:
        code, out, _ = run(capsys, "stats", c, "--db", other)
        assert code == 0
    assert "redirect 301" in run(capsys, "stats", "keep", "--db", other)[1]


def test_a_bad_csv_row_names_its_line_and_imports_nothing(capsys, tmp_path, db_url):
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "code,long_url,redirect,created_at,expires_at,alias\n"
        "abcdefg,https://example.com/ok,302,2026-01-01T00:00:00+00:00,,0\n"
        "hijklmn,javascript:alert(1),302,2026-01-01T00:00:00+00:00,,0\n"
    )
    code, _, err = run(capsys, "import", str(bad), "--db", db_url)
    assert code == 2
    assert f"{bad}:3:" in err
    code, _out, err = run(capsys, "export", "--db", db_url)
    assert "exported 0 links" in err


def test_serve_refuses_bad_options_with_one_line(tmp_path):
    def serve(*args):
        return subprocess.run(
            [sys.executable, "-m", "dustless", "shortener", "serve", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    proc = serve("--blocklist", str(tmp_path / "missing.txt"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "no such file" in proc.stderr
    proc = serve("--blocklist", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "is a directory" in proc.stderr
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b"evil.example/\n# caf\xe9\nbad.example/\n")
    proc = serve("--blocklist", str(latin1), "--db", f"sqlite:///{tmp_path}/x.db")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "error:" in proc.stderr
    assert f"{latin1}:2: not UTF-8" in proc.stderr
    proc = serve("--trust-proxy", "not-an-ip", "--db", f"sqlite:///{tmp_path}/x.db")
    assert proc.returncode == 2
    assert "not an IP address" in proc.stderr
    proc = serve("--rate-limit", "-1")
    assert proc.returncode == 2
    assert "must be >= 0" in proc.stderr
    proc = serve("--click-interval", "0")
    assert proc.returncode == 2
    assert "--click-interval: must be a number of seconds > 0" in proc.stderr
    proc = serve("--policy", "no-such-policy", "--db", f"sqlite:///{tmp_path}/x.db")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        proc = serve("--port", port, "--db", f"sqlite:///{tmp_path}/x.db")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in proc.stderr


def test_serve_options_reach_the_workers_config(monkeypatch, tmp_path):
    from dustless.shortener import _server as server

    seen = []
    monkeypatch.setattr(server, "serve", lambda config, *rest: seen.append((config, rest)))
    db = f"sqlite:///{tmp_path}/x.db"
    argv = ["shortener", "serve", "--db", db, "--click-interval", "2.5", "--rate-limit", "0"]
    assert main([*argv, "--port", "8123", "--workers", "3"]) == 0
    (config, rest) = seen[0]
    assert (config.click_interval, config.rate_limit, config.db) == (2.5, 0.0, db)
    assert rest[:3] == ("127.0.0.1", 8123, 3)


def test_export_reports_bad_rows_and_goes_on(capsys, tmp_path, db_url):
    import sqlite3

    for i in range(4):
        assert run(capsys, "add", f"https://example.com/b/{i}", "--db", db_url)[0] == 0
    conn = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    # Values a request could store before expiries were checked, and a row that is no link.
    conn.execute("UPDATE links SET expires_at = 1e300 WHERE long_url LIKE '%/0'")
    conn.execute("UPDATE links SET expires_at = ? WHERE long_url LIKE '%/1'", (float("inf"),))
    conn.execute("UPDATE links SET redirect = 7 WHERE long_url LIKE '%/2'")
    conn.commit()
    conn.close()
    out = tmp_path / "backup.csv"
    code, _, err = run(capsys, "export", "--format", "csv", "--db", db_url, "-o", str(out))
    assert code == 1  # something was left out: a script must notice
    assert "Traceback" not in err
    lines = out.read_text().splitlines()
    assert len(lines) == 4  # the header and three links: only the non-link is missing
    assert err.count("warning:") == 3
    assert "exported 3 links, 1 left out" in err
    # The backup imports again, and the links that never ended still never end.
    other = f"sqlite:///{tmp_path / 'restored.db'}"
    assert run(capsys, "import", str(out), "--db", other)[0] == 0
    code, out_text, _ = run(capsys, "stats", lines[1].split(",")[0], "--db", other, "--json")
    assert json.loads(out_text)["validUntil"] is None


def _subcommands(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                yield from ((f"{name} {n}", s) for n, s in _subcommands(sub))


def test_every_subcommand_has_a_description_real_metavars_and_an_example(capsys):
    import argparse

    from dustless.shortener.cli import configure

    parser = argparse.ArgumentParser(prog="dustless shortener")
    configure(parser)
    walked = []
    for name, sub in _subcommands(parser):
        walked.append(name)
        with pytest.raises(SystemExit) as exc:
            main(["shortener", *name.split(), "--help"])
        assert exc.value.code == 0
        text = capsys.readouterr().out
        assert sub.description, name
        assert "examples:" in text, name
        assert "dustless shortener " + name.split()[0] in text.split("examples:", 1)[1], name
        for action in sub._actions:
            if action.option_strings and action.help is None:
                raise AssertionError(f"{name} {action.option_strings[0]} has no help")
            # argparse's fallback metavar is the dest in capitals (BASE_URL, RATE_LIMIT).
            if action.option_strings and action.nargs != 0:
                assert action.metavar is not None or action.choices, (name, action.dest)
    assert {"serve", "add", "stats", "export", "import", "key create", "key revoke"} <= set(walked)
    with pytest.raises(SystemExit):
        main(["shortener", "add", "--help"])
    assert "--redirect 301|302" in capsys.readouterr().out


async def test_stats_json_has_the_apis_shape(db_url, run_app, capsys):
    import asyncio

    from dustless.shortener import create_app
    from shortener.helpers import open_config

    async with run_app(create_app(open_config(db=db_url, base_url="https://sho.rt"))) as srv:
        _, made = await srv.shorten("https://example.com/same-shape")
        await srv.get("/" + made["code"], headers={"User-Agent": "curl/8"})
        await srv.get("/" + made["code"], headers={"Referer": "https://news.example/a"})
        await srv.app.clicks.flush()
        async with srv.session.get(f"{srv.base}/api/v1/{made['code']}/stats") as resp:
            api = await resp.json()
    code = await asyncio.to_thread(
        main,
        [
            "shortener",
            "stats",
            made["code"],
            "--json",
            "--db",
            db_url,
            "--base-url",
            "https://sho.rt",
        ],
    )
    assert code == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli == api
    assert isinstance(cli["byDay"], list)
    assert {"key": "(direct)", "clicks": 1} in cli["referrers"]
