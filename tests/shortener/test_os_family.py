"""The operating system family beside the browser's: read from the User-Agent, counted per
click like the browser family, shown by the stats API and ``stats`` (JSON and text)."""

import asyncio

import pytest

from dustless.cli.main import main
from dustless.shortener._bots import OS_FAMILIES, os_family

# Real User-Agent strings as the browsers of each system send them.
_AGENTS = [
    (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/124.0.0.0 Safari/537.36",
        "Windows",
    ),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like "
        "Gecko) Version/17.4 Safari/605.1.15",
        "macOS",
    ),
    (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, "
        "like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
        "iOS",
    ),
    (
        "Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1",
        "iOS",
    ),
    (
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/124.0.6367.82 Mobile Safari/537.36",
        "Android",
    ),
    (
        "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/124.0.0.0 Safari/537.36",
        "ChromeOS",
    ),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", "Linux"),
    ("Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", "Linux"),
    ("Mozilla/5.0 (X11; FreeBSD amd64; rv:125.0) Gecko/20100101 Firefox/125.0", "other"),
    ("curl/8.5.0", "other"),
    ("", "other"),
]


@pytest.mark.parametrize(("agent", "family"), _AGENTS)
def test_os_families(agent, family):
    assert os_family(agent) == family
    assert family in OS_FAMILIES


async def test_stats_count_operating_systems_beside_browsers(service, db_url, capsys):
    _, body = await service.shorten("https://example.com/os")
    code = body["code"]
    for agent, _ in _AGENTS:
        await service.get("/" + code, headers={"User-Agent": agent})
    await service.app.clicks.flush()
    async with service.session.get(f"{service.base}/api/v1/{code}/stats") as resp:
        stats = await resp.json()
    assert stats["operatingSystems"] == [
        {"key": "other", "clicks": 3},
        {"key": "Linux", "clicks": 2},
        {"key": "iOS", "clicks": 2},
        {"key": "Android", "clicks": 1},
        {"key": "ChromeOS", "clicks": 1},
        {"key": "Windows", "clicks": 1},
        {"key": "macOS", "clicks": 1},
    ]
    # Browsers are counted as before: the OS is a second dimension, not a split of them.
    assert sum(u["clicks"] for u in stats["userAgents"]) == len(_AGENTS)
    assert {"key": "Chrome", "clicks": 4, "potentialBot": False} in stats["userAgents"]
    code_, out = await asyncio.to_thread(_stats_text, capsys, code, db_url)
    assert code_ == 0
    assert "operating systems:\n  other\t3\n  Linux\t2\n  iOS\t2\n" in out


def _stats_text(capsys, code, db_url):
    status = main(["shortener", "stats", code, "--db", db_url])
    return status, capsys.readouterr().out
