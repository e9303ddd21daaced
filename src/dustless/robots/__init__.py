"""robots.txt decisions (RFC 9309), pure: bytes and ``now`` in, answers out.

Why our own matcher and not protego: protego 0.7 passes 131 of the 145 assertions of Google's
suite; the gaps are in its parser (group boundaries around non-rule lines, ``*`` followed by
text, lines without a colon, typos Google accepts, the ``index.html`` rule, long lines) and
its user-agent matching, and closing them would mean overriding most of its private
methods. RFC 9309 needs ~250 lines of plain code; ours follows Google's reference
(``robots.cc``) where the RFC leaves room, passes all 145 assertions, never raises on any
bytes, and compiles each agent's rules once, so a crawl asking the same file thousands of
times pays the parse once.

Public names::

    Robots.parse(body) / Robots.allow_all() / Robots.disallow_all()
    Robots.allowed(agent, url) / Robots.crawl_delay(agent) / Robots.sitemaps
    robots_for_response(status, body)             # the fetch rules of §2.3.1
    RobotsCache(...).get(key, now) / .put(key, status, body, now)
    robots_key(url) / robots_url(url) / product_token(user_agent)
"""

from dustless.robots._policy import (
    ROBOTS_CACHE_SECONDS,
    ROBOTS_MAX_BYTES,
    ROBOTS_MAX_REDIRECTS,
    ROBOTS_RETRY_SECONDS,
    CachedRobots,
    RobotsCache,
    RobotsKey,
    RobotsOutcome,
    classify_response,
    robots_for_response,
    robots_key,
    robots_url,
)
from dustless.robots._robots import Robots, product_token

__all__ = [
    "ROBOTS_CACHE_SECONDS",
    "ROBOTS_MAX_BYTES",
    "ROBOTS_MAX_REDIRECTS",
    "ROBOTS_RETRY_SECONDS",
    "CachedRobots",
    "Robots",
    "RobotsCache",
    "RobotsKey",
    "RobotsOutcome",
    "classify_response",
    "product_token",
    "robots_for_response",
    "robots_key",
    "robots_url",
]
