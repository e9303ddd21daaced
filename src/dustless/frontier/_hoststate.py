"""A host's crawl state, declared once as a table (CONVENTIONS §2, h11 ``_state.py`` style).

::

    ROBOTS_PENDING ──robots-loaded──▶ READY ◀──fetched── BACKING_OFF   (robots-expired: back
                                                                        to ROBOTS_PENDING)
          │  ▲                          │ ──failed──────────▶ │  ▲ failed
          │  └─robots-unavailable       │                     │  │
          └──────── block / give-up ────┴──── block / give-up ┴──┴─▶ BLOCKED

``ROBOTS_PENDING``: robots.txt is not known yet, so only the robots.txt request may go out
(RFC 9309 §2.3: rules must be known before crawling). A 5xx or unreachable robots.txt means
"disallow all, retry later" (RFC 9309 §2.3.1.4): the host stays pending, with back-off.
``READY``: fetch when the politeness clock allows. ``BACKING_OFF``: the server answered with
trouble (timeouts, 5xx, connection errors); the delay grows until a fetch succeeds.
``BLOCKED``: nothing more is fetched from the host (robots.txt forbids everything, the host
has no address, or it failed too often); its queue is handed back to the caller to record.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from dustless.errors import UsageError

__all__ = ["TRANSITIONS", "HostEvent", "HostState", "IllegalTransition", "next_state"]


class HostState(enum.Enum):
    ROBOTS_PENDING = "robots-pending"
    READY = "ready"
    BACKING_OFF = "backing-off"
    BLOCKED = "blocked"


class HostEvent(enum.Enum):
    ROBOTS_LOADED = "robots-loaded"  # robots.txt answered 2xx or 4xx (RFC 9309 §2.3.1)
    ROBOTS_UNAVAILABLE = "robots-unavailable"  # 5xx or unreachable: disallow all, retry later
    FETCHED = "fetched"  # a fetch ended without server trouble
    FAILED = "failed"  # server trouble: timeout, 5xx, connection error
    GIVE_UP = "give-up"  # too many failures in a row
    BLOCK = "block"  # the caller decided: no address, robots disallow all, …
    ROBOTS_EXPIRED = "robots-expired"  # the cached rules are too old (RFC 9309 §2.4: 24 h)


class IllegalTransition(UsageError, RuntimeError):
    """The caller drove a host through a transition the table does not have."""


_S, _E = HostState, HostEvent

TRANSITIONS: Mapping[tuple[HostState, HostEvent], HostState] = MappingProxyType(
    {
        (_S.ROBOTS_PENDING, _E.ROBOTS_LOADED): _S.READY,
        (_S.ROBOTS_PENDING, _E.ROBOTS_UNAVAILABLE): _S.ROBOTS_PENDING,
        (_S.ROBOTS_PENDING, _E.GIVE_UP): _S.BLOCKED,
        (_S.ROBOTS_PENDING, _E.BLOCK): _S.BLOCKED,
        # robots.txt is re-read every 24 h (RFC 9309 §2.4): a reload is legal when ready too.
        (_S.READY, _E.ROBOTS_LOADED): _S.READY,
        (_S.READY, _E.ROBOTS_EXPIRED): _S.ROBOTS_PENDING,
        (_S.READY, _E.FETCHED): _S.READY,
        (_S.READY, _E.FAILED): _S.BACKING_OFF,
        (_S.READY, _E.GIVE_UP): _S.BLOCKED,
        (_S.READY, _E.BLOCK): _S.BLOCKED,
        (_S.BACKING_OFF, _E.ROBOTS_LOADED): _S.BACKING_OFF,
        (_S.BACKING_OFF, _E.ROBOTS_EXPIRED): _S.ROBOTS_PENDING,
        (_S.BACKING_OFF, _E.FETCHED): _S.READY,
        (_S.BACKING_OFF, _E.FAILED): _S.BACKING_OFF,
        (_S.BACKING_OFF, _E.GIVE_UP): _S.BLOCKED,
        (_S.BACKING_OFF, _E.BLOCK): _S.BLOCKED,
        # A fetch that was in flight when the host got blocked still ends.
        (_S.BLOCKED, _E.FETCHED): _S.BLOCKED,
        (_S.BLOCKED, _E.FAILED): _S.BLOCKED,
        (_S.BLOCKED, _E.ROBOTS_LOADED): _S.BLOCKED,
        (_S.BLOCKED, _E.ROBOTS_UNAVAILABLE): _S.BLOCKED,
        (_S.BLOCKED, _E.GIVE_UP): _S.BLOCKED,
        (_S.BLOCKED, _E.BLOCK): _S.BLOCKED,
        (_S.BLOCKED, _E.ROBOTS_EXPIRED): _S.BLOCKED,
        (_S.ROBOTS_PENDING, _E.ROBOTS_EXPIRED): _S.ROBOTS_PENDING,
    }
)


def next_state(state: HostState, event: HostEvent, host: str = "") -> HostState:
    try:
        return TRANSITIONS[state, event]
    except KeyError:
        raise IllegalTransition(
            f"host {host!r}: no transition from {state.value} on {event.value}"
        ) from None
