"""The HTTP client edge: DNS cache, address policy, limits and network states (I/O).

Everything the remote side can do wrong ends as a ``FetchResult`` with a ``NetState`` (seed 004
Fig. 3); the parser's and the OS's exceptions are translated here and never leave the package.

Public names::

    NetState, STATE_TABLE, advance(current, new)   # the declared state machine
    FetchLimits, FetchResult, BodySink             # values in and out; a streamed body
    Resolver, parse_resolve                        # DNS cache, --resolve NAME:IP
    AddressPolicy, is_special_address              # --allow-ip/--deny-ip, private ranges
    Fetcher, HttpPool                              # HTTP/1.1, kept-alive connections, limits
    tls_context                                    # --ca-file: a private CA trusted too
    RobotsFetch, fetch_robots                      # robots.txt by RFC 9309's fetch rules
"""

from dustless.fetch._address import AddressPolicy, is_special_address
from dustless.fetch._client import Fetcher
from dustless.fetch._decode import ACCEPT_ENCODING, DecodeError, decode_payload
from dustless.fetch._dns import Resolver, normalize_host, parse_resolve
from dustless.fetch._http import HttpPool, tls_context
from dustless.fetch._result import DEFAULT_USER_AGENT, BodySink, FetchLimits, FetchResult
from dustless.fetch._robots_fetch import RobotsFetch, fetch_robots
from dustless.states import STATE_TABLE, NetState, Stage, StateInfo, advance

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_USER_AGENT",
    "STATE_TABLE",
    "AddressPolicy",
    "BodySink",
    "DecodeError",
    "FetchLimits",
    "FetchResult",
    "Fetcher",
    "HttpPool",
    "NetState",
    "Resolver",
    "RobotsFetch",
    "Stage",
    "StateInfo",
    "advance",
    "decode_payload",
    "fetch_robots",
    "is_special_address",
    "normalize_host",
    "parse_resolve",
    "tls_context",
]
