"""The many-machine batching as one strategy chosen from the store (crawl/_batching.py)."""

from __future__ import annotations

import math
from types import SimpleNamespace

from dustless.crawl._batching import BACKLOG_PAGES, Batching


def _held(b: Batching, now: float, **kw: object) -> float | None:
    args: dict[str, object] = {
        "done": 3,
        "in_flight": True,
        "stopping": False,
        "next_maintain": 100.0,
    }
    args.update(kw)
    return b.held_for(now, **args)  # type: ignore[arg-type]


def test_the_store_chooses_the_strategy() -> None:
    local = Batching.of(SimpleNamespace(shared=False), 7)  # type: ignore[arg-type]
    shared = Batching.of(SimpleNamespace(shared=True), 7)  # type: ignore[arg-type]
    assert (local.backlog_pages, local.alone) == (7, True)
    assert (shared.backlog_pages, shared.alone) == (BACKLOG_PAGES, False)
    assert Batching.local(0).backlog_pages == 1


def test_one_machine_never_holds_asks_ahead_or_fences() -> None:
    b = Batching.local(4)
    b.done_began(0.0)
    assert _held(b, 0.1) is None
    assert not b.asks_ahead([object()])
    assert b.payloads([]) is None
    assert not b.starts_first(stopping=False)
    assert not b.lost(SimpleNamespace(holds=lambda h: False), "h.test")  # type: ignore[arg-type]


def test_many_machines_hold_a_small_batch_for_company() -> None:
    b = Batching.shared()
    b.reset_hold()
    b.done_began(10.0)
    assert math.isclose(_held(b, 10.1) or 0, 0.4)
    # Nothing in flight, a stop, a full batch, or the lease round due: handled now.
    assert _held(b, 10.1, in_flight=False) is None
    assert _held(b, 10.1, stopping=True) is None
    assert _held(b, 10.1, done=128) is None
    assert _held(b, 10.1, next_maintain=10.0) is None
    # The lease round less than another hold later: the batch waits for it.
    assert math.isclose(_held(b, 10.1, next_maintain=10.8) or 0, 0.7)
    # Nothing ready until a fetch ends: held briefly; the links are the only work: not held.
    b.hold(math.inf)
    assert math.isclose(_held(b, 10.1) or 0, 0.2)
    b.hold(None)
    assert _held(b, 10.1) is None
    b.reset_hold()
    b.hold(2.0, links_pending=True)
    assert _held(b, 10.1) is None
    assert b.asks_ahead([object()])
    assert not b.asks_ahead([])
