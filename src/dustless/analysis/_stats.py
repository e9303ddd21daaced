"""Crawl statistics of seed 004 §3 from a crawl DB (``dustless stats``).

Seed 004 §3 reports, for 74 million Korean pages: responses by network state for seed
documents and for all documents (Tables 1–2), URL string lengths (Table 3), seed URL forms
(Table 4), the document size distribution in 256 KiB buckets with the mean (Table 5), storage
compressed vs uncompressed (Fig. 4), requested / downloaded documents and internal links by
depth (Table 6); §4 Table 13 classifies documents by the kinds of links they hold (``h/a/f``).
For a crawl with ``--script``, seed 002 Table 2 compares the links of the scripted sites'
pages before and after pattern filtering (§3.4.1), here per page type (list, detail).
:func:`crawl_stats` computes the same figures for one crawl, plus pages/s over time and the
top hosts: the store groups in SQL (``dustless.store.stat_reads``: one temporary table of the
counted fetches, then one aggregate query per table) and :func:`stats_from_reads` makes the
figures of its rows, without I/O.

What is counted: every URL's *last* fetch in each batch (a retried fetch counts once, as it
ended), in the crawl's own batches (not ``evaluate --fetch`` probes). A fetch stopped before
any request — disallowed by robots.txt, filtered, never tried — is in the state tables but is
not a *request*. A *download* is the network state ``OK`` (004 §4: "다운로드 실패는 네트워크
상태가 'OK'가 아님을 의미한다"), i.e. status 200 with an HTML body.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass

from dustless.analysis._changes import LINK_KIND_CLASSES
from dustless.analysis._learnstats import (
    CanonicalCounts,
    LearnedRow,
    canonical_counts,
    learned_rules,
)
from dustless.errors import InvalidOption
from dustless.store import (
    TRUNCATIONS,
    BatchInfo,
    CrawlReader,
    StatReads,
    stat_reads,
    truncation,
)

__all__ = [
    "GATE_STATES",
    "SIZE_BUCKET",
    "STATE_ORDER",
    "CrawlStats",
    "DepthRow",
    "FilterRow",
    "FormCount",
    "HostRow",
    "LengthStats",
    "LinkKindRow",
    "SizeBucket",
    "StateCount",
    "StatusCount",
    "StorageRow",
    "TimeBucket",
    "TruncatedCount",
    "crawl_stats",
    "size_histogram",
    "stats_from_reads",
    "status_meaning",
]

# The network states of 004 Fig. 3 (dustless.fetch.NetState), in the order tables list them:
# success first, then by the stage that failed, then the gates that stop a fetch before any
# request. Repeated here so statistics need not import the fetcher.
STATE_ORDER: tuple[str, ...] = (
    "OK",
    "code",
    "noIP",
    "cErr",
    "cTim",
    "Conn",
    "hSht",
    "hNpr",
    "hTim",
    "hErr",
    "dTim",
    "dErr",
    "tooBig",
    "pBig",
    "pFlat",
    "soft404",
    "robots",
    "filtered",
    "iErr",
    "NULL",
)
GATE_STATES: frozenset[str] = frozenset({"robots", "filtered", "iErr", "NULL"})  # never requested
SIZE_BUCKET = 256 * 1024  # Table 5's bucket width: ~256K, ~512K, … ~2048K
_SIZE_BUCKETS = 8  # up to the 2 MiB limit of 004 §3; larger sizes share one last bucket
_MAX_TIME_BUCKETS = 60
_NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400)


@dataclass(frozen=True, slots=True)
class StateCount:
    """A row of Tables 1–2: fetches that ended in one network state."""

    state: str
    count: int
    share: float  # of all counted fetches of the table


@dataclass(frozen=True, slots=True)
class TruncatedCount:
    """Counted fetches whose WARC record says ``WARC-Truncated: reason`` (WARC 1.1 §5.13)."""

    reason: str  # length, time, disconnect, unspecified
    count: int


@dataclass(frozen=True, slots=True)
class StatusCount:
    """The state ``code`` of Tables 1–2 by HTTP status: seed 004 Fig. 3 lumps every response
    other than 200 text/html there, redirects (which are answers, not errors) with 404s."""

    status: int
    count: int
    share: float  # of all counted fetches of the table, as StateCount's


def status_meaning(status: int) -> str:
    """What an HTTP status in the ``code`` state is to a crawl (RFC 9110 §15's classes)."""
    if status == 304:
        return "not modified"
    if 300 <= status < 400:
        return "redirect"
    if 400 <= status < 500:
        return "client error"
    if status >= 500:
        return "server error"
    if 200 <= status < 300:
        return "not HTML" if status == 200 else "answer without a page"
    return "informational"


@dataclass(frozen=True, slots=True)
class LengthStats:
    """A row of Table 3. Seed strings omit the scheme ("http://"), keep the port; document
    strings omit the seed's string (004 §3: "문서 URL 문자열은 시드 URL 문자열을 포함하지
    않는다"), so a seed's own document has length 0."""

    kind: str  # "seed" | "document"
    count: int
    min: int
    max: int
    mean: float


@dataclass(frozen=True, slots=True)
class FormCount:
    """A row of Table 4: seeds whose string has the form ``xxx.xxx.xxx`` ("xxx" has no dot)."""

    form: str
    count: int
    share: float


@dataclass(frozen=True, slots=True)
class SizeBucket:
    """A row of Table 5: downloaded documents of size in (lower, upper] bytes."""

    label: str  # "~256K", … ; "2048K~" for anything larger than the last bucket
    lower: int
    upper: int | None
    count: int


@dataclass(frozen=True, slots=True)
class StorageRow:
    """Fig. 4: bytes one WARC file holds, compressed (as stored) and uncompressed."""

    file: str
    records: int
    raw_bytes: int
    stored_bytes: int


@dataclass(frozen=True, slots=True)
class DepthRow:
    """A row of Table 6, with the internal links found per downloaded document (§3 text)."""

    depth: int
    requested: int
    downloaded: int
    internal_links: int
    links_per_document: float


@dataclass(frozen=True, slots=True)
class LinkKindRow:
    """Downloaded documents by link kind (004 Table 13): ``h`` other, ``a`` anchor, ``f`` frame."""

    kind: str
    documents: int
    share: float


@dataclass(frozen=True, slots=True)
class TimeBucket:
    """Fetches that ended in each state during one interval of the crawl (states over time)."""

    start: float  # seconds since the first counted fetch
    seconds: float
    states: tuple[tuple[str, int], ...]
    pages_per_second: float  # downloads (OK) per second in the interval


@dataclass(frozen=True, slots=True)
class FilterRow:
    """A row of seed 002 Table 2 ("URL 패턴 필터링 결과"), by the page type of the fetched
    page: pages of scripted sites downloaded, their links before pattern filtering (links,
    ``javascript:`` hrefs and ``onclick`` texts) and after it (links followed)."""

    page_type: str  # list, detail, other (no pattern matches the page), or "total"
    pages: int
    links_before: int
    links_after: int
    reduction: float  # 1 - after / before: the share of links filtering removed


@dataclass(frozen=True, slots=True)
class HostRow:
    host: str
    requested: int
    downloaded: int
    bytes: int
    distinct: int = 0  # distinct documents among its 2xx downloads (CrawlStats.content)


@dataclass(frozen=True, slots=True)
class CrawlStats:
    """Everything ``dustless stats`` prints, as one value (``--json`` is its dict form)."""

    directory: str
    batches: tuple[int, ...]
    started_at: float | None
    ended_at: float | None
    urls_known: int
    hosts: int
    seeds_known: int
    fetches: int  # counted fetches (last per URL and batch), gates included
    requested: int
    downloaded: int
    seed_states: tuple[StateCount, ...]  # Table 1
    document_states: tuple[StateCount, ...]  # Table 2
    url_lengths: tuple[LengthStats, ...]  # Table 3
    seed_forms: tuple[FormCount, ...]  # Table 4
    sizes: tuple[SizeBucket, ...]  # Table 5
    mean_size: float
    max_size: int
    storage: tuple[StorageRow, ...]  # Fig. 4
    raw_bytes: int
    stored_bytes: int
    depths: tuple[DepthRow, ...]  # Table 6
    link_kinds: tuple[LinkKindRow, ...]  # Table 13
    scripted: bool  # a counted batch ran with --script: link_filtering is shown
    link_filtering: tuple[FilterRow, ...]  # seed 002 Table 2, by page type (with --script)
    timeline: tuple[TimeBucket, ...]
    bucket_seconds: float
    pages_per_second: float  # downloads over the whole crawl's duration
    top_hosts: tuple[HostRow, ...]
    # The state "code" of Tables 1 and 2 by HTTP status.
    seed_codes: tuple[StatusCount, ...] = ()
    document_codes: tuple[StatusCount, ...] = ()
    # Downloaded documents by size in buckets chosen from the data (Table 5's fixed 256 KiB
    # buckets put every page of a few KB in one bar).
    size_histogram: tuple[SizeBucket, ...] = ()
    # Complete 2xx downloads, and how many distinct documents they are: near-duplicate text
    # (content "near") or distinct payload SHA-1s ("exact"); docs/statistics.md.
    content: str = "near"
    documents: int = 0
    distinct_documents: int = 0
    # Soft 404s (state soft404, crawl/soft404.py): 200 pages saying the URL is missing. No
    # document: left out of every count above, shown on a line of their own.
    soft404s: int = 0
    # Learning while crawling (docs/learning.md): the rules learned per host, and the
    # canonical URLs documents declared (RFC 6596; None: a crawl stored before they were).
    learned: tuple[LearnedRow, ...] = ()
    canonicals: CanonicalCounts | None = None
    # Responses stored with a cut payload, by the WARC-Truncated reason the record carries
    # (every reason listed, in the spec's order).
    truncated: tuple[TruncatedCount, ...] = ()


def _share(count: int, total: int) -> float:
    return count / total if total else 0.0


def _state_rows(counts: dict[str, int]) -> tuple[StateCount, ...]:
    total = sum(counts.values())
    rank = {s: i for i, s in enumerate(STATE_ORDER)}
    order = sorted(counts, key=lambda s: (rank.get(s, len(rank)), s))
    return tuple(StateCount(s, counts[s], _share(counts[s], total)) for s in order)


def _status_rows(rows: tuple[tuple[int, int], ...], total: int) -> tuple[StatusCount, ...]:
    return tuple(StatusCount(s, c, _share(c, total)) for s, c in sorted(rows))


def _nice_step(raw: float) -> int:
    """The smallest round width (1, 2, 5, 10, 20, 25, 50, … bytes) not below ``raw``."""
    k = 1
    while True:
        for m in (1, 2, 2.5, 5) if k >= 10 else (1, 2, 5):
            if m * k >= raw:
                return int(m * k)
        k *= 10


def _short_size(v: int) -> str:
    """Bytes in decimal units, as compact as a chart label needs: 900, 1.2k, 3.5M."""
    for unit, scale in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if v >= scale:
            return f"{v / scale:g}{unit}"
    return str(v)


def size_histogram(sizes: list[int], buckets: int = 16) -> tuple[SizeBucket, ...]:
    """Sizes in about ``buckets`` equal buckets of a round width chosen from the data.

    The range split is the data's, without its far outliers (Tukey's "far out" fences,
    3 × the interquartile range beyond the quartiles, holding at least 98 % of a hundred or
    more): what lies beyond goes to an open bucket at either end, so one huge page does not
    squash a thousand small ones into one bar. Buckets hold sizes in (lower, upper], like
    Table 5's; labels use k = 1,000 bytes.
    """
    if not sizes:
        return ()
    s = sorted(sizes)
    n = len(s)
    q1, q3 = s[(n - 1) // 4], s[3 * (n - 1) // 4]
    lo = s[bisect.bisect_left(s, q1 - 3 * (q3 - q1))]  # the data within the fences
    hi = s[bisect.bisect_right(s, q3 + 3 * (q3 - q1)) - 1]
    if n >= 100:  # and never more than 1 % of the documents in either open bucket
        lo, hi = min(lo, s[n // 100]), max(hi, s[n - 1 - n // 100])
    step = _nice_step(max(hi - lo, 1) / max(buckets - 2, 1))
    start = max((lo - 1) // step * step, 0) if lo > 0 else 0
    count = max(-(-(hi - start) // step), 1)  # ceil: the last bucket holds hi
    end = start + count * step
    out: list[SizeBucket] = []
    below = bisect.bisect_right(s, start)
    if below:
        label = "0 (empty)" if start == 0 else f"≤ {_short_size(start)}"
        out.append(SizeBucket(label, 0, start, below))
    for i in range(count):
        a, b = start + i * step, start + (i + 1) * step
        c = bisect.bisect_right(s, b) - bisect.bisect_right(s, a)
        out.append(SizeBucket(f"{_short_size(a)}–{_short_size(b)}", a, b, c))
    above = n - bisect.bisect_right(s, end)
    if above:
        out.append(SizeBucket(f"> {_short_size(end)}", end, None, above))
    return tuple(out)


def seed_string(url: str) -> str:
    """Table 3's seed URL string: no scheme, port kept, the root path's lone "/" dropped."""
    rest = url.split("://", 1)[-1]
    if rest.endswith("/") and rest.count("/") == 1:
        rest = rest[:-1]
    return rest


def seed_form(url: str) -> str:
    """Table 4's form of a seed: ``xxx.xxx.xxx`` for three dot-separated parts; "other" for
    a seed with a path, an IPv6 literal, or more than five parts."""
    s = seed_string(url)
    host = s.rsplit(":", 1)[0] if s.count(":") == 1 else s
    if "/" in s or "?" in s or "[" in s or not host:
        return "other"
    parts = host.count(".") + 1
    return ".".join(["xxx"] * parts) if parts <= 5 else "other"


def _bucket_seconds(span: float) -> float:
    for s in _NICE_SECONDS:
        if span / s <= _MAX_TIME_BUCKETS:
            return float(s)
    return float(_NICE_SECONDS[-1] * (int(span / _NICE_SECONDS[-1] / _MAX_TIME_BUCKETS) + 1))


def crawl_stats(
    db: CrawlReader, *, batch: int | None = None, top_hosts: int = 20, content: str = "near"
) -> CrawlStats:
    """The statistics of seed 004 §3 for the crawl in ``db`` (all crawl batches, or one):
    the store's reads (``stat_reads``), then :func:`stats_from_reads` over their rows."""
    from dustless.analysis._content import CONTENT_MODES, document_classes

    if content not in CONTENT_MODES:
        raise InvalidOption(f"content must be one of {', '.join(CONTENT_MODES)}, not {content!r}")
    batches = db.crawl_batches(batch)
    infos = tuple(b for b in db.batches if b.number in batches)
    reads = stat_reads(
        db,
        batches,
        gates=tuple(sorted(GATE_STATES)),
        classes=document_classes(db, content),
        seed_prefix=seed_string,
        size_bucket=SIZE_BUCKET,
        size_buckets=_SIZE_BUCKETS,
        bucket_seconds=_bucket_seconds,
        filtering=any(_used_script(b.config) for b in infos),
        top_hosts=top_hosts,
    )
    return stats_from_reads(reads, db.source, infos, content=content, learned=learned_rules(db))


def stats_from_reads(
    reads: StatReads,
    source: str,
    batches: tuple[BatchInfo, ...],
    *,
    content: str = "near",
    learned: tuple[LearnedRow, ...] = (),
) -> CrawlStats:
    """The statistics made of the store's rows (pure): ``batches`` are the counted ones."""
    t = reads.totals
    storage = tuple(StorageRow(*row) for row in reads.storage)
    ends = [b.ended_at for b in batches if b.ended_at is not None]
    timeline, width = _timeline(reads), reads.bucket_seconds
    duration = (t.last - t.first) if t.first is not None and t.last is not None else 0.0
    return CrawlStats(
        directory=source,
        batches=tuple(b.number for b in batches),
        started_at=min((b.started_at for b in batches), default=None),
        ended_at=max(ends, default=None),
        urls_known=t.urls_known,
        hosts=t.hosts,
        seeds_known=t.seeds_known,
        fetches=t.fetches,
        requested=t.requested,
        downloaded=t.downloaded,
        seed_states=_state_rows(reads.seed_states),
        document_states=_state_rows(reads.document_states),
        url_lengths=_lengths(reads),
        seed_forms=_forms(reads.seeds),
        sizes=_sizes(reads.size_buckets),
        mean_size=reads.mean_size,
        max_size=reads.max_size,
        storage=storage,
        raw_bytes=sum(r.raw_bytes for r in storage),
        stored_bytes=sum(r.stored_bytes for r in storage),
        depths=tuple(DepthRow(d, r, k, n, _share(n, k)) for d, r, k, n in reads.depths),
        link_kinds=_link_kinds(reads.link_kinds, t.downloaded),
        scripted=any(_used_script(b.config) for b in batches),
        link_filtering=_link_filtering(reads.filtering) if reads.filtering else (),
        timeline=timeline,
        bucket_seconds=width,
        pages_per_second=t.downloaded / max(duration, width) if t.first is not None else 0.0,
        top_hosts=tuple(
            HostRow(h, r, k, b, reads.documents_by_host.get(h, 0)) for h, r, k, b in reads.top_hosts
        ),
        seed_codes=_status_rows(reads.seed_codes, sum(reads.seed_states.values())),
        document_codes=_status_rows(reads.document_codes, sum(reads.document_states.values())),
        size_histogram=size_histogram(list(reads.download_sizes)),
        content=content,
        documents=reads.documents,
        distinct_documents=reads.distinct_documents,
        soft404s=reads.document_states.get("soft404", 0),
        learned=learned,
        canonicals=canonical_counts(reads.canonicals),
        truncated=_truncated(reads.truncations),
    )


def _truncated(rows: tuple[tuple[str, str | None, int], ...]) -> tuple[TruncatedCount, ...]:
    """Truncated captures by reason: the WARC writer's, from the same state and error."""
    cut = dict.fromkeys(TRUNCATIONS, 0)
    for state, error, c in rows:
        reason = truncation(state, error)
        if reason is not None:
            cut[reason] += c
    return tuple(TruncatedCount(reason, n) for reason, n in cut.items())


def _lengths(reads: StatReads) -> tuple[LengthStats, ...]:
    """Table 3: URL string lengths of successfully downloaded seeds and documents."""
    seed_lengths = [len(seed_string(u)) for u, s in reads.seeds if s == "OK"]
    n, lo, hi, mean = reads.document_lengths
    return (
        LengthStats(
            "seed",
            len(seed_lengths),
            min(seed_lengths, default=0),
            max(seed_lengths, default=0),
            _share(sum(seed_lengths), len(seed_lengths)),
        ),
        LengthStats("document", n, lo, hi, mean),
    )


def _forms(seeds: tuple[tuple[str, str], ...]) -> tuple[FormCount, ...]:
    """Table 4: forms of the requested seeds."""
    form_counts: dict[str, int] = {}
    for url, _state in seeds:
        f = seed_form(url)
        form_counts[f] = form_counts.get(f, 0) + 1
    form_order = [".".join(["xxx"] * k) for k in range(1, 6)] + ["other"]
    return tuple(
        FormCount(f, form_counts.get(f, 0), _share(form_counts.get(f, 0), len(seeds)))
        for f in form_order
    )


def _sizes(size_rows: dict[int, int]) -> tuple[SizeBucket, ...]:
    """Table 5: sizes of downloaded documents in 256 KiB buckets, the last one open."""
    sizes = [
        SizeBucket(
            f"~{(i + 1) * 256}K", i * SIZE_BUCKET, (i + 1) * SIZE_BUCKET, size_rows.get(i, 0)
        )
        for i in range(_SIZE_BUCKETS)
    ]
    if size_rows.get(_SIZE_BUCKETS):
        top = _SIZE_BUCKETS * 256
        sizes.append(
            SizeBucket(f"{top}K~", _SIZE_BUCKETS * SIZE_BUCKET, None, size_rows[_SIZE_BUCKETS])
        )
    return tuple(sizes)


def _link_kinds(
    rows: tuple[tuple[bool, bool, bool, int], ...], downloaded: int
) -> tuple[LinkKindRow, ...]:
    """Table 13's link kinds of downloaded documents."""
    kind_counts: dict[str, int] = {}
    for h, a, f, c in rows:
        kind = ("h" if h else "0") + ("a" if a else "0") + ("f" if f else "0")
        kind_counts[kind] = c
    kinds = [k for k in LINK_KIND_CLASSES] + sorted(set(kind_counts) - set(LINK_KIND_CLASSES))
    return tuple(
        LinkKindRow(k, kind_counts.get(k, 0), _share(kind_counts.get(k, 0), downloaded))
        for k in kinds
    )


def _timeline(reads: StatReads) -> tuple[TimeBucket, ...]:
    """States over time and pages/s, in buckets of ``reads.bucket_seconds``."""
    width = reads.bucket_seconds
    per_bucket: dict[int, dict[str, int]] = {}
    for b, state, c in reads.timeline:
        per_bucket.setdefault(b, {})[state] = c
    last = max(per_bucket, default=-1)
    rank = {s: i for i, s in enumerate(STATE_ORDER)}
    timeline = []
    for b in range(last + 1):
        states = per_bucket.get(b, {})
        ordered = tuple(sorted(states.items(), key=lambda kv: (rank.get(kv[0], 99), kv[0])))
        timeline.append(TimeBucket(b * width, width, ordered, states.get("OK", 0) / width))
    return tuple(timeline)


_PAGE_TYPES = ("list", "detail")  # always listed; "other" (no pattern) only when present


def _used_script(config: str) -> bool:
    """A batch's settings (``CrawlConfig`` JSON, a recrawl's too) name a pattern script."""
    try:
        data = json.loads(config)
    except ValueError:
        return False
    return isinstance(data, dict) and bool(data.get("scripts"))


def _filter_row(page_type: str, pages: int, before: int, after: int) -> FilterRow:
    return FilterRow(page_type, pages, before, after, 1 - after / before if before else 0.0)


def _link_filtering(got_rows: tuple[tuple[str, int, int, int], ...]) -> tuple[FilterRow, ...]:
    """Seed 002 Table 2 by page type, over the downloads of the counted fetches that
    stored the counts (pages of scripted sites; a page no pattern names is "other"), and
    their total."""
    got = {p: (n, b, a) for p, n, b, a in got_rows}
    order = [*_PAGE_TYPES, *sorted(set(got) - set(_PAGE_TYPES))]
    rows = [_filter_row(p, *got.get(p, (0, 0, 0))) for p in order]
    total = [sum(v[i] for v in got.values()) for i in range(3)]
    return (*rows, _filter_row("total", *total))
