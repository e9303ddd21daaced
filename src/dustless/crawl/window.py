"""The frontier's window onto the queue in the DB: a few dozen URLs per host in memory.

Queued URLs live in the DB (``urls``, state ``queued``); the frontier holds a window of them
per host, claimed in batches (ARCHITECTURE "batch-shaped"), so a million queued URLs cost
disk, not memory. A host whose window runs low is remembered and claimed for at the next
refill. A recrawl batch (issue 8) also looks up, per claimed window, the validators of the
copies it holds, so that its requests are conditional (RFC 9110 §13.1).
"""

from __future__ import annotations

import sys

from dustless.frontier import Frontier, HostState, QueuedURL
from dustless.recrawl._validators import Validator, validators_for
from dustless.store import SQLiteStore, StoredURL

__all__ = ["LOW", "WINDOW", "Window"]

WINDOW = 40  # URLs of one host held in memory; refilled below LOW
LOW = 8


class Window:
    """Which hosts need URLs from the DB, and the claims that bring them into the frontier."""

    def __init__(
        self,
        store: SQLiteStore,
        frontier: Frontier,
        db_queued: dict[str, int],
        *,
        conditional: bool,
    ) -> None:
        self.store = store
        self.frontier = frontier
        self.db_queued = db_queued  # host -> queued in the DB, unclaimed
        self.low: set[str] = set(db_queued)  # hosts whose window needs a claim
        self._conditional = conditional
        # Validators of the claimed URLs (a recrawl batch), dropped once a fetch is handled.
        self.validators: dict[int, Validator] = {}

    def queued(self, host: str) -> None:
        """One more URL of ``host`` was stored as queued."""
        self.db_queued[host] = self.db_queued.get(host, 0) + 1
        self.note_low(host)

    def note_low(self, host: str) -> None:
        """Remember ``host`` for the next claim if its window runs low and the DB has more."""
        if self.db_queued.get(host) and self.frontier.queued_for(host) < LOW:
            self.low.add(host)

    def refill(self, force: bool = False) -> bool:
        """Claim queued URLs from the DB for hosts whose window runs low; True if any came.

        ``force`` (the frontier is empty): look at every host the DB still has URLs for.
        """
        frontier = self.frontier
        hosts = self.db_queued if force else self.low
        want = [
            h
            for h in hosts
            if self.db_queued.get(h)
            and frontier.queued_for(h) < LOW
            and frontier.state(h) is not HostState.BLOCKED
        ]
        self.low.clear()
        if not want:
            return False
        claimed = self.store.claim_queued(len(want) * WINDOW, hosts=want, per_host=WINDOW)
        self.take(claimed)
        if not claimed and force:
            for h in want:  # the DB has nothing for them after all
                self.db_queued[h] = 0
        return bool(claimed)

    def take(self, claimed: list[StoredURL]) -> None:
        """Claimed URLs into the frontier's window."""
        frontier = self.frontier
        intern = sys.intern
        for u in claimed:
            self.db_queued[u.host] -= 1
            frontier.push(
                QueuedURL(u.url, intern(u.host), u.depth, u.priority, u.seed_id or 0, u.kind, u.id)
            )
        if self._conditional and claimed:
            self.validators.update(validators_for(self.store, [u.id for u in claimed]))
