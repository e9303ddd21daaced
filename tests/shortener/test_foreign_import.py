"""``import --from shlink|yourls``: the CSV Shlink's web client exports and YOURLS's
``yourls_url`` table as CSV keep their codes, long URLs, creation times, titles, tags and visit
counts; a bad row names its line and nothing is written; importing twice adds nothing."""

import json

from dustless.cli.main import main

# shlink-web-component's ExportShortUrlsBtn: createdAt, domain, shortCode, shortUrl, longUrl,
# title, tags (joined by "|"), visits.
SHLINK = """\
createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits
2023-05-01T20:34:16+02:00,s.test,12Kb3,https://s.test/12Kb3,https://shlink.io/,Shlink,shlink|docs,1029
2024-01-02T03:04:05+00:00,s.test,my-slug,https://s.test/my-slug,https://example.com/a?b=1,,,0
"""
# The yourls_url table: keyword, url, title, timestamp, ip, clicks.
YOURLS = """\
keyword,url,title,timestamp,ip,clicks
1,https://yourls.org/,"YOURLS, your own",2015-03-04 05:06:07,127.0.0.1,42
ab,https://example.com/b,,2016-01-01 00:00:00,10.0.0.1,0
"""


def _run(capsys, *args):
    code = main(["shortener", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _stats(capsys, code, db):
    status, out, err = _run(capsys, "stats", code, "--db", db, "--json")
    assert status == 0, err
    return json.loads(out)


def test_shlink_and_yourls_exports_import(capsys, tmp_path, db_url):
    shlink = tmp_path / "short_urls.csv"
    shlink.write_text(SHLINK)
    yourls = tmp_path / "yourls_url.csv"
    yourls.write_text(YOURLS)
    status, out, err = _run(
        capsys, "import", "--from", "shlink", str(shlink), "--db", db_url, "--json"
    )
    assert status == 0, err
    assert json.loads(out)["linksAdded"] == 2
    status, _, err = _run(capsys, "import", "--from", "yourls", str(yourls), "--db", db_url)
    assert status == 0, err

    s = _stats(capsys, "12Kb3", db_url)
    assert (s["longUrl"], s["title"], s["tags"], s["createdAt"]) == (
        "https://shlink.io/",
        "Shlink",
        ["docs", "shlink"],
        "2023-05-01T18:34:16Z",
    )
    assert s["clicks"] == 1029
    assert s["byDay"] == [{"key": "2023-05-01", "clicks": 1029}]
    assert s["userAgents"] == [{"key": "(imported)", "clicks": 1029, "potentialBot": False}]
    s = _stats(capsys, "my-slug", db_url)
    assert (s["title"], s["tags"], s["clicks"]) == (None, [], 0)
    s = _stats(capsys, "1", db_url)  # YOURLS codes may be one character
    assert (s["longUrl"], s["title"], s["createdAt"], s["clicks"]) == (
        "https://yourls.org/",
        "YOURLS, your own",
        "2015-03-04T05:06:07Z",
        42,
    )
    assert _stats(capsys, "ab", db_url)["longUrl"] == "https://example.com/b"

    # Twice: nothing added, no clicks counted again.
    status, out, _ = _run(
        capsys, "import", "--from", "yourls", str(yourls), "--db", db_url, "--json"
    )
    assert (status, json.loads(out)["linksAdded"], json.loads(out)["linksPresent"]) == (0, 0, 2)
    assert _stats(capsys, "1", db_url)["clicks"] == 42


def test_a_bad_row_names_its_line_and_writes_nothing(capsys, tmp_path, db_url):
    bad = tmp_path / "bad.csv"
    bad.write_text(YOURLS + "api,https://example.com/c,,2016-01-01 00:00:00,::1,0\n")
    status, _, err = _run(capsys, "import", "--from", "yourls", str(bad), "--db", db_url)
    assert status == 2
    assert f"{bad}:4: customSlug 'api' is reserved" in err
    bad.write_text("keyword,url\n1,https://example.com/\n")
    status, _, err = _run(capsys, "import", "--from", "yourls", str(bad), "--db", db_url)
    assert (status, err.strip()) == (
        2,
        f"dustless shortener import: error: {bad}: not a yourls export: no column timestamp",
    )
    status, _, _ = _run(capsys, "stats", "1", "--db", db_url)
    assert status != 0
