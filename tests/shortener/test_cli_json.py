"""``--json`` of the shortener's commands: stdout parses, and its keys are exactly those of the
command's table in docs/shortener.md (read from the doc, so output and doc cannot drift)."""

import json
import re
from pathlib import Path

import pytest

from dustless.cli.main import main
from dustless.shortener._auth import hash_key

DOC = Path(__file__).resolve().parents[2] / "docs" / "shortener.md"
_ROW = re.compile(r"^\| `([A-Za-z_\[\].]+)` \|")


def documented(heading: str) -> list[str]:
    """The keys in the first table after the line ``heading`` of docs/shortener.md."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    at = lines.index(heading)
    keys: list[str] = []
    for line in lines[at + 1 :]:
        if line.startswith("#"):
            break
        match = _ROW.match(line)
        if match:
            keys.append(match.group(1))
        elif keys and not line.startswith("|"):
            break
    assert keys, f"no table of keys after {heading!r}"
    return keys


def assert_schema(data: dict, keys: list[str]) -> None:
    """Top-level keys exactly (``x[].y`` names ``x``); every element of list ``x`` has exactly
    the ``x[].…`` keys."""
    assert set(data) == {k.split("[].")[0] for k in keys}
    for name in {k.split("[].")[0] for k in keys if "[]." in k}:
        inner = {k.split("[].")[1] for k in keys if k.startswith(f"{name}[].")}
        assert data[name], f"{name} is empty: its keys are not checked"
        for item in data[name]:
            assert set(item) == inner, name


def run_json(capsys, *args):
    code = main(["shortener", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def test_add_json(capsys, db_url):
    data, _ = run_json(capsys, "add", "https://example.com/j", "--db", db_url, "--max-visits", "3")
    assert_schema(data, documented("#### `add --json`"))
    assert data["created"] is True
    assert data["maxVisits"] == 3
    again, _ = run_json(capsys, "add", "https://example.com/j", "--db", db_url, "--max-visits", "3")
    assert again["code"] != data["code"]  # a limit asks for a link of its own
    plain, _ = run_json(capsys, "add", "https://example.com/p", "--db", db_url)
    same, _ = run_json(capsys, "add", "https://example.com/p", "--db", db_url)
    assert (same["code"], same["created"]) == (plain["code"], False)
    tagged, _ = run_json(
        capsys, "add", "https://example.com/t", "--tag", "b", "--tag", "a", "--db", db_url
    )
    assert tagged["tags"] == ["a", "b"]
    data, _ = run_json(capsys, "stats", tagged["code"], "--db", db_url)
    assert data["tags"] == ["a", "b"]


def test_stats_json(capsys, db_url):
    import asyncio

    from dustless.shortener import open_store
    from dustless.shortener._model import ClickKey

    made, _ = run_json(capsys, "add", "https://example.com/s", "--db", db_url)

    async def click():
        store = await open_store(db_url)
        try:
            link = await store.get(made["code"])
            await store.add_clicks({ClickKey(link.id, "2026-01-01", "a.example", "curl"): 2})
        finally:
            await store.close()

    asyncio.run(click())
    data, _ = run_json(capsys, "stats", made["code"], "--db", db_url)
    assert_schema(data, documented("#### `stats --json`"))
    assert data["clicks"] == data["potentialBotClicks"] == 2


def test_key_create_list_and_revoke_json(capsys, db_url):
    made, err = run_json(capsys, "key", "create", "alice", "--db", db_url)
    assert_schema(made, documented("#### `key create --json`"))
    assert made["key"].startswith("dls_")
    assert "only time it is shown" in err
    run_json(capsys, "key", "create", "ops", "--admin", "--db", db_url)
    listed, _ = run_json(capsys, "key", "list", "--db", db_url)
    assert_schema(listed, documented("#### `key list --json`"))
    assert [(k["name"], k["admin"], k["active"]) for k in listed["keys"]] == [
        ("alice", False, True),
        ("ops", True, True),
    ]
    text = json.dumps(listed)
    assert made["key"] not in text
    assert hash_key(made["key"]) not in text
    revoked, _ = run_json(capsys, "key", "revoke", "alice", "--db", db_url)
    assert_schema(revoked, documented("#### `key revoke --json`"))
    assert revoked["active"] is False
    assert revoked["revokedAt"] is not None


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_import_json(capsys, tmp_path, db_url, kind):
    run_json(capsys, "key", "create", "alice", "--db", db_url)
    run_json(capsys, "add", "https://example.com/i", "--db", db_url)
    path = tmp_path / f"dump.{kind}"
    assert main(["shortener", "export", "--db", db_url, "--format", kind, "-o", str(path)]) == 0
    capsys.readouterr()
    other = f"sqlite:///{tmp_path / 'other.db'}"
    data, _ = run_json(capsys, "import", str(path), "--db", other)
    assert_schema(data, documented("#### `import --json`"))
    assert data["format"] == kind
    assert data["linksAdded"] == 1
    assert data["keysAdded"] == (1 if kind == "jsonl" else 0)
