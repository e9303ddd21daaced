"""What spellings and learning decide the admission must do: values, applied by the engine.

Spellings (``crawl/spellings.py``) and learning (``crawl/learn.py``) decide that links waiting
for admission change identity, that identities are no longer stored, that URLs are admitted
again, or that a fallback spelling is queued. They *return* these orders instead of calling
the admission (issue 27: no object holds a reference set after construction, so the
admission ↔ spellings ↔ learning cycle is gone); the engine hands them, in the order given,
to :meth:`Admission.apply <dustless.crawl.admission.Admission.apply>`. The order matters: a
re-key applies to what an earlier re-admission put in the pending links.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dustless.crawl.discover import Candidate
from dustless.frontier import QueuedURL
from dustless.store import AdmitURL

__all__ = ["Fallback", "Forget", "Order", "Readmit", "Rekey"]


@dataclass(frozen=True, slots=True)
class Forget:
    """Identities no longer stored: a link to them is admitted again, not dropped."""

    identities: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Readmit:
    """URLs admitted again with the next flush (a retracted or distrusted rule's merges)."""

    urls: tuple[AdmitURL, ...]


@dataclass(frozen=True, slots=True)
class Rekey:
    """The pending links on ``hosts`` take the identity ``identity`` gives them (None: kept)."""

    hosts: frozenset[str]
    identity: Callable[[AdmitURL], str | None]


@dataclass(frozen=True, slots=True)
class Fallback:
    """The next spelling of ``item``'s identity, queued under its derived identity."""

    candidate: Candidate
    item: QueuedURL


Order = Forget | Readmit | Rekey | Fallback
