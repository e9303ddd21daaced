"""Which clicks are people: User-Agent families, the ones counted as potential bots, and the
operating system family beside the browser's.

Link previews (Slack, Facebook, X/Twitter, LinkedIn, Discord, Telegram, WhatsApp), search
crawlers, scripts (curl, python-requests) and headless browsers fetch a short link without a
person behind it; counted with the people they would make a link look more read than it is.
Shlink counts them apart as ``potentialBot``; so do we, from the User-Agent family alone.
"""

from __future__ import annotations

import functools
import re

__all__ = ["BOT_FAMILIES", "OS_FAMILIES", "UNKNOWN_OS", "is_bot_family", "os_family", "ua_family"]

# Ordered, first match wins. Link-preview fetchers, crawlers, scripts and headless browsers
# come first: their User-Agents often imitate a browser's ("… Chrome/120 Safari/537.36").
# Edge and Opera also say "Chrome", Chrome also says "Safari".
_FAMILIES = (
    ("Slackbot", re.compile(r"Slackbot|Slack-ImgProxy", re.I)),
    ("facebookexternalhit", re.compile(r"facebookexternalhit|facebookcatalog", re.I)),
    ("Twitterbot", re.compile(r"Twitterbot", re.I)),
    ("LinkedInBot", re.compile(r"LinkedInBot", re.I)),
    ("Discordbot", re.compile(r"Discordbot", re.I)),
    ("TelegramBot", re.compile(r"TelegramBot", re.I)),
    ("WhatsApp", re.compile(r"WhatsApp/", re.I)),
    ("Googlebot", re.compile(r"Googlebot|Google-InspectionTool|APIs-Google", re.I)),
    ("bingbot", re.compile(r"bingbot|BingPreview", re.I)),
    ("HeadlessChrome", re.compile(r"HeadlessChrome|PhantomJS|Puppeteer|Playwright")),
    ("bot", re.compile(r"bot\b|crawl|spider|slurp|preview|scraper|archiver", re.I)),
    ("curl", re.compile(r"^curl/")),
    ("Wget", re.compile(r"^Wget/", re.I)),
    ("python-requests", re.compile(r"python-requests", re.I)),
    ("Python", re.compile(r"python|aiohttp|httpx|urllib", re.I)),
    ("Go-http-client", re.compile(r"Go-http-client")),
    ("Java", re.compile(r"^Java/|okhttp|Apache-HttpClient", re.I)),
    ("Edge", re.compile(r"\bEdg(e|A|iOS)?/")),
    ("Opera", re.compile(r"\bOPR/|\bOpera\b")),
    ("Samsung Internet", re.compile(r"SamsungBrowser/")),
    ("Firefox", re.compile(r"\b(Firefox|FxiOS)/")),
    ("Chrome", re.compile(r"\b(Chrome|Chromium|CriOS)/")),
    ("Safari", re.compile(r"\bSafari/")),
)
# The families counted as potentialBot (Shlink's name): not a person reading the link. A
# request without a User-Agent is one too: every browser sends the header. The decision is a
# function of the family, which each worker computes once per distinct User-Agent string, so
# telling bots apart costs the redirect path nothing and needs no column of its own.
BOT_FAMILIES = frozenset(
    {
        "Slackbot",
        "facebookexternalhit",
        "Twitterbot",
        "LinkedInBot",
        "Discordbot",
        "TelegramBot",
        "WhatsApp",
        "Googlebot",
        "bingbot",
        "HeadlessChrome",
        "bot",
        "curl",
        "Wget",
        "python-requests",
        "Python",
        "Go-http-client",
        "Java",
        "(none)",
    }
)


@functools.lru_cache(maxsize=4096)
def ua_family(user_agent: str) -> str:
    """The browser family of a ``User-Agent`` header: ``Chrome``, ``Firefox``, … or ``other``."""
    if not user_agent:
        return "(none)"
    for name, pattern in _FAMILIES:
        if pattern.search(user_agent):
            return name
    return "other"


# Ordered, first match wins. iPhones and iPads say "like Mac OS X", Android and ChromeOS say
# "Linux": the specific ones come first. An iPad asking for the desktop site sends a Mac's
# User-Agent and is counted as macOS (nothing in the header tells them apart).
_OPERATING_SYSTEMS = (
    ("iOS", re.compile(r"iPhone|iPad|iPod|\biOS\b|CFNetwork/.* Darwin/")),
    ("Android", re.compile(r"Android")),
    ("ChromeOS", re.compile(r"\bCrOS\b")),
    ("Windows", re.compile(r"Windows|\bWin(32|64|NT)\b")),
    ("macOS", re.compile(r"Macintosh|Mac OS X|\bmacOS\b")),
    ("Linux", re.compile(r"Linux|Ubuntu|Fedora|Debian")),
)
# What stats may show: these, "other" (a User-Agent naming none of them, or none at all), and
# "(unknown)" for clicks counted before the family was recorded (schema version 3 and older).
OS_FAMILIES = ("Windows", "macOS", "iOS", "Android", "Linux", "ChromeOS", "other")
UNKNOWN_OS = "(unknown)"


@functools.lru_cache(maxsize=4096)
def os_family(user_agent: str) -> str:
    """The operating system family of a ``User-Agent``: one of ``OS_FAMILIES``."""
    for name, pattern in _OPERATING_SYSTEMS:
        if pattern.search(user_agent):
            return name
    return "other"


def is_bot_family(family: str) -> bool:
    """True for a User-Agent family counted as a potential bot, not a person."""
    return family in BOT_FAMILIES
