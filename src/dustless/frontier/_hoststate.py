"""A host's crawl state, declared once as a table (CONVENTIONS §2, h11 ``_state.py`` style).

::

    READY ◀──fetched── BACKING_OFF
      │ ──failed──────────▶ │  ▲ failed
      └── block / give-up ──┴──┴─▶ BLOCKED

``READY``: fetch when the politeness clock allows. ``BACKING_OFF``: the server answered with
trouble (timeouts, 5xx, connection errors, an unreachable robots.txt — RFC 9309 §2.3.1.4
"disallow all, retry later"); the delay grows until a request succeeds. ``BLOCKED``: nothing
more is fetched from the host (it has no address, the address policy refuses it, or it failed
too often); its queue is handed back to the caller to record. Which origins' robots.txt is
known is the crawl's host table's to track (``crawl/hosts.py``), per scheme, host and port.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from dustless.errors import InternalError

__all__ = ["TRANSITIONS", "HostEvent", "HostState", "IllegalTransition", "next_state"]


class HostState(enum.Enum):
    READY = "ready"
    BACKING_OFF = "backing-off"
    BLOCKED = "blocked"


class HostEvent(enum.Enum):
    FETCHED = "fetched"  # a fetch ended without server trouble
    FAILED = "failed"  # server trouble: timeout, 5xx, connection error
    GIVE_UP = "give-up"  # too many failures in a row
    BLOCK = "block"  # the caller decided: no address, refused address, …


class IllegalTransition(InternalError):
    """The caller drove a host through a transition the table does not have."""


_S, _E = HostState, HostEvent

TRANSITIONS: Mapping[tuple[HostState, HostEvent], HostState] = MappingProxyType(
    {
        (_S.READY, _E.FETCHED): _S.READY,
        (_S.READY, _E.FAILED): _S.BACKING_OFF,
        (_S.READY, _E.GIVE_UP): _S.BLOCKED,
        (_S.READY, _E.BLOCK): _S.BLOCKED,
        (_S.BACKING_OFF, _E.FETCHED): _S.READY,
        (_S.BACKING_OFF, _E.FAILED): _S.BACKING_OFF,
        (_S.BACKING_OFF, _E.GIVE_UP): _S.BLOCKED,
        (_S.BACKING_OFF, _E.BLOCK): _S.BLOCKED,
        # A fetch that was in flight when the host got blocked still ends.
        (_S.BLOCKED, _E.FETCHED): _S.BLOCKED,
        (_S.BLOCKED, _E.FAILED): _S.BLOCKED,
        (_S.BLOCKED, _E.GIVE_UP): _S.BLOCKED,
        (_S.BLOCKED, _E.BLOCK): _S.BLOCKED,
    }
)


def next_state(state: HostState, event: HostEvent, host: str = "") -> HostState:
    try:
        return TRANSITIONS[state, event]
    except KeyError:
        raise IllegalTransition(
            f"host {host!r}: no transition from {state.value} on {event.value}"
        ) from None
