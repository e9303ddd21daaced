"""The test web: a synthetic web with real server behaviour and known truth.

``dustless testweb`` serves it on loopback; tests use the ``testweb`` pytest fixture
(``tests/conftest.py``). Generation is pure (:func:`build_web`); :class:`TestWebServer` is
the aiohttp edge. See ``docs/testweb.md`` for every URL pattern.
"""

from dustless.testweb._core import (
    Action,
    Link,
    Outcome,
    Page,
    Profile,
    Site,
    WebConfig,
    change_count,
    changed_on,
)
from dustless.testweb._html import render_page
from dustless.testweb._personality import PERSONALITIES, Personality, Www
from dustless.testweb._server import TestWebServer, serve_forever
from dustless.testweb._truth import TruthWriter, rates_path, read_rates, read_truth
from dustless.testweb._web import TruthRow, Web, build_web

__all__ = [
    "PERSONALITIES",
    "Action",
    "Link",
    "Outcome",
    "Page",
    "Personality",
    "Profile",
    "Site",
    "TestWebServer",
    "TruthRow",
    "TruthWriter",
    "Web",
    "WebConfig",
    "Www",
    "build_web",
    "change_count",
    "changed_on",
    "rates_path",
    "read_rates",
    "read_truth",
    "render_page",
    "serve_forever",
]
