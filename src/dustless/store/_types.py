"""The values that cross the store boundary: what the engine writes and what readers get back.

All frozen dataclasses with slots (docs/internals.md): the engine builds them, the store copies
them into rows. Times are seconds since the epoch (``float``), passed in by the caller: the store
never reads the clock for data it records, so tests and recrawls (``--batch-time``) control time.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from dustless.kinds import LinkKind
from dustless.states import NetState

__all__ = [
    "DB_NAME",
    "PROBE_KIND",
    "PROBE_PREFIX",
    "URL_KINDS",
    "AdmitResult",
    "AdmitURL",
    "Admitted",
    "Batch",
    "ContentRef",
    "FetchRecord",
    "FetchRow",
    "HostInfo",
    "HostLease",
    "Limits",
    "NewSeed",
    "NewURL",
    "RobotsRow",
    "SeedRow",
    "SeedUpdate",
    "StoredURL",
    "URLDate",
    "URLLabel",
    "URLState",
    "Verdict",
    "WarcRef",
    "WorkLeft",
    "WorkerRow",
]

# The crawl DB's file in a crawl directory (OUTDIR/crawl.db): defined here, beside the other
# values readers share with the writer, so that the store and ``analysis`` name it alike.
DB_NAME = "crawl.db"
# How a URL was found (``dustless.kinds.LinkKind``): the letters stored in ``urls.kind``.
URL_KINDS = frozenset(k.value for k in LinkKind)
# ``evaluate --fetch`` requests the normalized forms a crawl never fetched, in a batch of its
# own whose config JSON is ``{"kind": PROBE_KIND, …}``, under URL identities
# ``PROBE_PREFIX + url`` that never collide with the crawl's (a normalized URL has no space).
PROBE_KIND = "evaluate-fetch"
PROBE_PREFIX = "probe "


class URLState(enum.Enum):
    """Where a URL is in its life; a small table, as CONVENTIONS §2 asks.

    ``queued`` → ``in-flight`` (claimed by a worker) → ``done`` (a fetch was recorded).
    ``skipped`` URLs were discovered and recorded (for statistics and seeds.out.txt) but are
    never to be fetched (out of scope, filtered). A crash leaves ``in-flight`` rows behind;
    ``requeue_in_flight`` returns them to ``queued`` on resume. ``merged``: a queued URL that a
    rule learned during the crawl found to be another spelling of a stored one; not fetched,
    and ``queued`` again if the rule is retracted (docs/learning.md).
    """

    QUEUED = "queued"
    IN_FLIGHT = "in-flight"
    DONE = "done"
    SKIPPED = "skipped"
    MERGED = "merged"


@dataclass(frozen=True, slots=True)
class Batch:
    """One crawl run of the collection: 004's "일괄 수집" (a batch); a resume continues it."""

    number: int  # 1, 2, … ; every fetch row carries it (recrawl batches are never mixed)
    started_at: float
    batch_time: float  # the batch's nominal time (wall clock, or --batch-time)
    config: str  # the crawl settings as JSON, so a recrawl can reuse them
    ended_at: float | None = None


@dataclass(frozen=True, slots=True)
class NewURL:
    """A discovered URL to record (``add_urls``)."""

    url: str  # the spelling that will be fetched (its rfc3986 form)
    identity: str  # the policy's normal form: what URL-seen compares (UNIQUE in the DB)
    host: str
    depth: int  # 0 for a seed, parent depth + 1 otherwise (004 §2: breadth-first by depth)
    kind: LinkKind = LinkKind.ANCHOR
    seed_id: int | None = None  # the party (004 §2) this URL belongs to
    parent_id: int | None = None  # url id of the page it was discovered on
    priority: int = 0  # larger is fetched sooner (pattern scripts fill it later)
    state: URLState = URLState.QUEUED

    def __post_init__(self) -> None:
        kind: object = self.kind
        if not isinstance(kind, LinkKind):  # a letter, from a test or an old caller
            object.__setattr__(self, "kind", LinkKind(kind))


@dataclass(frozen=True, slots=True)
class StoredURL:
    """A URL row as the store keeps it (``claim_queued``, ``queued``, ``urls_by_id``)."""

    id: int
    url: str
    identity: str
    host: str
    depth: int
    kind: LinkKind
    seed_id: int | None
    parent_id: int | None
    priority: int
    state: URLState


@dataclass(frozen=True, slots=True)
class WarcRef:
    """Where a WARC record lives: file name (relative to ``OUTDIR/warc``), offset, length.

    ``offset`` is the first byte of the record's gzip member and ``length`` the member's
    compressed size, so ``(offset, length)`` can be served with a byte-range read (WARC 1.1
    Annex D.2: one gzip member per record).
    """

    file: str
    offset: int
    length: int
    record_id: str = ""  # WARC-Record-ID, '<urn:uuid:…>' (WARC 1.1 §5.2)

    @property
    def end(self) -> int:
        return self.offset + self.length


@dataclass(frozen=True, slots=True)
class FetchRecord:
    """One fetch to record (``record_fetches``). Every fetch is kept, never overwritten.

    ``state`` is the network state of seed 004 Fig. 3 (``OK``, ``cErr``, ``dTim``, … plus
    ours: ``robots``, ``tooBig``, ``filtered``, ``iErr``).
    """

    url_id: int
    fetched_at: float  # when the request started
    state: NetState
    status: int | None = None
    mime: str | None = None
    size_raw: int | None = None  # payload bytes as received (after decompression)
    size_stored: int | None = None  # compressed bytes in the WARC (the records' lengths)
    elapsed: float | None = None  # seconds from request start to last byte
    connect_time: float | None = None  # seconds to connect (DNS excluded)
    ttfb: float | None = None  # seconds to the first response byte
    content_sha1: str | None = None  # hex SHA-1 of the payload: content identity (003)
    revisit_of: int | None = None  # fetch id whose payload this one repeats
    links_h: int = 0  # link counts per kind, 004 Table 13
    links_a: int = 0
    links_f: int = 0
    links_internal: int = 0  # inside the party (004 §2) / external (candidate seeds)
    links_external: int = 0
    location: str | None = None  # absolute redirect target for 3xx
    etag: str | None = None  # validators, for conditional recrawls
    last_modified: str | None = None
    warc: WarcRef | None = None  # the response (or revisit) record
    warc_request: WarcRef | None = None
    error: str | None = None
    batch: int | None = None  # defaults to the store's current batch
    url_state: URLState = URLState.DONE  # QUEUED to retry the URL later (robots 5xx …)
    links_before: int | None = None  # seed 002 Table 2: links of a scripted page before
    links_after: int | None = None  # and after pattern filtering (None: not filtered)
    content_fp: bytes | None = None  # near-duplicate fingerprint of the text (schema V3)
    # A sitemap or feed read: how reading it ended (``dustless.sources.SourceState`` value);
    # None for pages and for sources whose answer was not read (not 2xx).
    source_state: str | None = None
    # The canonical URL the page declares (RFC 6596: link element or Link header), absolute
    # and as written; evidence for the learner (docs/learning.md), never followed as an order.
    canonical: str | None = None

    def __post_init__(self) -> None:
        state: object = self.state
        if not isinstance(state, NetState):  # a name, from a test or an old caller
            object.__setattr__(self, "state", NetState(state))


@dataclass(frozen=True, slots=True)
class FetchRow:
    """A recorded fetch joined with its URL, for statistics (``iter_fetches``)."""

    id: int
    url_id: int
    url: str
    host: str
    depth: int
    kind: str
    seed_id: int | None
    batch: int
    fetched_at: float
    state: str
    status: int | None
    mime: str | None
    size_raw: int | None
    size_stored: int | None
    elapsed: float | None
    content_sha1: str | None
    revisit_of: int | None
    links_h: int
    links_a: int
    links_f: int
    links_internal: int
    links_external: int
    location: str | None
    warc: WarcRef | None
    error: str | None
    connect_time: float | None = None
    ttfb: float | None = None
    etag: str | None = None  # validators for a conditional recrawl
    last_modified: str | None = None
    warc_request: WarcRef | None = None
    links_before: int | None = None  # seed 002 Table 2 (pattern-script filtering)
    links_after: int | None = None
    source_state: str | None = None  # a sitemap or feed: how reading it ended


@dataclass(frozen=True, slots=True)
class URLDate:
    """What a sitemap or feed said about a URL in a batch (``record_dates``), by identity.

    ``lastmod`` is seconds since the epoch, UTC (sitemaps.org ``<lastmod>``; a feed entry's
    newest date); ``changefreq`` the ``<changefreq>`` word; ``source_id`` the url id of the
    sitemap or feed that said it.
    """

    identity: str
    batch: int
    lastmod: float | None
    changefreq: str | None
    source_id: int


@dataclass(frozen=True, slots=True)
class URLLabel:
    """What a pattern script says about a URL (seed 002 §3.2, §3.4.2, §4.1): its page type
    (``list``, ``detail``, ``other``), the pattern's ``class``, the category instance id and
    the category's name (anchor text, Fig. 13). Set with ``label_urls``, by identity; a
    ``None`` leaves what the URL row holds (a label only adds what a page revealed)."""

    identity: str
    page_type: str
    category: str | None = None
    category_id: str | None = None
    category_name: str | None = None


@dataclass(frozen=True, slots=True)
class ContentRef:
    """The first fetch that stored a payload: what a WARC ``revisit`` record refers to."""

    sha1: str
    fetch_id: int
    url: str
    fetched_at: float
    warc: WarcRef | None


@dataclass(frozen=True, slots=True)
class HostInfo:
    """What the crawler knows about a host (004 §2: IP and robots rules kept per site)."""

    name: str
    ip: str | None = None
    robots_state: str | None = None  # e.g. "pending", "parsed", "allow-all", "disallow-all"
    robots_fetched_at: float | None = None
    crawl_delay: float | None = None
    sitemaps: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class NewSeed:
    """A seed: a start URL whose locally reachable pages form its party (004 §2)."""

    url: str
    identity: str
    host: str
    discovered_from: int | None = None  # url id of the page that linked to it; None = given
    created_batch: int | None = None


@dataclass(frozen=True, slots=True)
class SeedUpdate:
    """What the crawler learns about a seed when its party is done (004 §2 seed table)."""

    id: int
    content_sha1: str | None = None  # hash of the seed document's content
    state: str | None = None  # network state of the seed document
    party_seconds: float | None = None  # time taken to download the whole party


@dataclass(frozen=True, slots=True)
class SeedRow:
    """A seed row: 004's seed table (id, URL, URL hash, content hash, party time, state)."""

    id: int
    url: str
    identity: str
    url_hash: int  # first 8 bytes of SHA-1(identity), signed: 004's "URL 문자열에 대한 해시 값"
    host: str
    content_sha1: str | None
    state: str | None
    party_seconds: float | None
    discovered_from: int | None
    created_batch: int | None


# -- admission, leases and workers (ARCHITECTURE "Many machines") ------------------------------


@dataclass(frozen=True, slots=True)
class AdmitURL:
    """A URL found by a worker, to be admitted (``admit``) if new and within the limits."""

    url: str  # the spelling to fetch (rfc3986 form, no fragment)
    identity: str  # the policy's form: URL-seen compares it (UNIQUE in the DB)
    host: str  # authority: the politeness key
    site: str  # the site it belongs to (004 §2 party boundary, by ``--scope``)
    depth: int  # parent depth + 1 (a redirect target: the parent's depth; a given seed: 0)
    kind: LinkKind
    seed_id: int | None  # the finder's party for an internal link; None for an outside link
    parent_id: int | None  # url id of the page it was found on
    external: bool = False  # outside the finder's party: a candidate seed (004 §2)
    given: bool = False  # a seed the user gave: its own party whatever the limits
    priority: int = 0  # the frontier class (pattern scripts); larger is sooner


class Verdict(enum.Enum):
    """What ``admit`` did with one ``AdmitURL``."""

    QUEUED = "queued"  # a new URL row, queued
    KNOWN = "known"  # its identity was stored already (URL-seen: the same URL)
    DEPTH = "depth"  # deeper than --max-depth
    MAX_PAGES = "max-pages"
    MAX_PAGES_PER_SITE = "max-pages-per-site"
    MAX_SITES = "max-sites"  # an outside link to a new site while the crawl has enough


@dataclass(frozen=True, slots=True)
class Limits:
    """The admission limits of a crawl, held in the DB so that every worker obeys them."""

    max_depth: int | None = None
    max_pages: int | None = None  # URLs admitted in all
    max_pages_per_site: int | None = None
    max_sites: int | None = None  # parties, the seeds' included


@dataclass(frozen=True, slots=True)
class Admitted:
    """The verdict on one ``AdmitURL``, with the row it became (QUEUED only)."""

    verdict: Verdict
    url_id: int | None = None
    seed_id: int | None = None  # the party it joined, or the new party's seed
    depth: int | None = None  # 0 when it started a new party


@dataclass(frozen=True, slots=True)
class AdmitResult:
    admitted: list[Admitted]  # one per AdmitURL, in order
    seeds_added: int  # outside links that became new seed rows (004 §2 candidate seeds)


@dataclass(frozen=True, slots=True)
class HostLease:
    """A host leased to this worker: one owner at a time keeps politeness across workers."""

    host: str
    queued: int  # URLs queued for it in the DB (unclaimed)
    ready_at: float  # wall clock: no request before this (the last owner's politeness clock)


@dataclass(frozen=True, slots=True)
class WorkLeft:
    """Is there anything left to crawl, anywhere? (The crawl ends when both are 0.)"""

    queued_hosts: int  # hosts with URLs queued and no live lease of another worker
    leased_elsewhere: int  # hosts another worker holds (its pages may still find URLs)
    workers: int = 0  # workers seen within ``alive_within`` seconds (0 when not asked)


@dataclass(frozen=True, slots=True)
class RobotsRow:
    """An origin's robots.txt as fetched (RFC 9309 §2.3: per scheme, host and port)."""

    origin: str  # scheme://host[:port]
    status: int | None  # the final status; None: unreachable
    body: bytes  # at most 500 KiB (§2.5)
    fetched_at: float  # wall clock


@dataclass(frozen=True, slots=True)
class WorkerRow:
    """A worker of the crawl: where its WARC files are, when it was last seen."""

    name: str
    dir: str
    machine: str | None
    pid: int | None
    started_at: float
    seen_at: float
