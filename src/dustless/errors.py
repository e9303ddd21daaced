"""The one exception tree of dustless.

Every exception dustless raises on purpose is one of these; third-party exceptions are
translated at the I/O edge (fetcher, stores, servers) so callers never see aiohttp's, httptools'
or sqlite3's classes. As in h11 (``LocalProtocolError`` / ``RemoteProtocolError``) the tree
separates *the caller misused us* from *the remote misbehaved*::

    DustlessError
    ├── UsageError               the caller (user, config, API call) gave something wrong
    │   ├── InvalidURL           a URL that cannot be parsed or normalized (also ValueError)
    │   ├── InvalidPolicy        unknown policy or step name, bad policy expression
    │   ├── InvalidOption        a bad option value (CLI flag, config field)
    │   └── ScriptError          a pattern script or rules file that does not validate;
    │                            carries the line number
    ├── RemoteError              a server or peer misbehaved
    │   └── FetchError           a fetch failed; carries the network state (004 Fig. 3)
    ├── StoreError               the crawl store or a WARC file is unusable
    │   ├── StoreCorrupt         data on disk does not match what the DB says
    │   ├── StoreLocked          another process owns what we wanted to write
    │   └── DatabaseAway         the DB across the network is away, and the caller asked
    │                            not to wait for it (the engine's loop): nothing applied
    └── InternalError            a bug of dustless (an illegal state transition, …): never
                                 the user's or the server's fault

The CLI turns a ``UsageError`` into one line on stderr and exit status 2, any other
``DustlessError`` into one line and exit status 1 — never a traceback. An ``InternalError``
met while crawling one URL is recorded as that URL's state ``iErr`` and counted in the
summary; under ``DUSTLESS_STRICT=1`` (the tests) it propagates and fails loudly.
"""

from __future__ import annotations

__all__ = [
    "DatabaseAway",
    "DustlessError",
    "FetchError",
    "InternalError",
    "InvalidOption",
    "InvalidPolicy",
    "InvalidURL",
    "RemoteError",
    "ScriptError",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "UsageError",
]


class DustlessError(Exception):
    """Root of every error dustless raises deliberately."""


class UsageError(DustlessError):
    """The caller gave us something wrong; fixing the input fixes the error."""


class InvalidURL(UsageError, ValueError):
    """A URL that cannot be parsed or normalized.

    The message says what is wrong and where: ``missing host``, ``invalid port '99999'``,
    ``bad percent-escape at 14``. ``position`` is the 0-based character offset when known.
    """

    def __init__(self, message: str, url: str = "", position: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.position = position


class InvalidPolicy(UsageError, ValueError):
    """An unknown policy or step name, or a policy expression that does not parse."""


class InvalidOption(UsageError, ValueError):
    """An option value that is out of range or of the wrong form."""


class ScriptError(UsageError):
    """A pattern script or learned-rules file that does not validate."""

    def __init__(self, message: str, path: str = "", line: int | None = None) -> None:
        where = f"{path}:{line}: " if path and line is not None else (f"{path}: " if path else "")
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line


class RemoteError(DustlessError):
    """A server or peer misbehaved."""


class FetchError(RemoteError):
    """A fetch failed; ``state`` is its network state name (seed 004 Fig. 3)."""

    def __init__(self, message: str, state: str) -> None:
        super().__init__(message)
        self.state = state


class StoreError(DustlessError):
    """The crawl store or a WARC file is unusable."""


class StoreCorrupt(StoreError):
    """Data on disk does not match what the store recorded."""


class StoreLocked(StoreError):
    """Another process owns the resource we wanted to write."""


class DatabaseAway(StoreError):
    """The DB across the network went away (a restart, a failover) and the call was made
    where nothing may wait for it (the engine's loop: ``PgConnection.impatient``). Nothing
    of the call was applied here: the caller keeps what it meant to do and does it again
    once the DB is reached. ``sent``: the call went out before the connection was lost, so
    the server may have committed it (its answer lost)."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


class InternalError(DustlessError, RuntimeError):
    """A bug of dustless: code drove a state machine or an API where it must never go."""
