"""What to fetch next (pure): per-host queues, priority classes, the politeness clock.

See ``docs/internals.md`` (section ``dustless.frontier``) for the contract.
"""

from dustless.frontier._frontier import (
    Frontier,
    FrontierStats,
    Politeness,
    QueuedURL,
    Ready,
    Wait,
)
from dustless.frontier._hoststate import (
    TRANSITIONS,
    HostEvent,
    HostState,
    IllegalTransition,
    next_state,
)

__all__ = [
    "TRANSITIONS",
    "Frontier",
    "FrontierStats",
    "HostEvent",
    "HostState",
    "IllegalTransition",
    "Politeness",
    "QueuedURL",
    "Ready",
    "Wait",
    "next_state",
]
