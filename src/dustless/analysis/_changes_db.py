"""The change statistics of a recrawled collection: seed 004 §4 Tables 7–13 from a crawl DB.

Two halves, as everywhere in ``analysis``: :func:`read_histories` runs one SQL scan over the
crawl DB (read-only) and returns one :class:`PageHistory` per URL, and
:func:`change_report` turns histories into a :class:`ChangeReport` without touching the DB.

Units follow seed 004 §4:

* a page is seen once per batch ("일괄 수집"): the URL's *last* fetch in that batch counts
  (earlier ones were retries), at the batch's nominal time (``crawls.batch_time``, set by
  ``recrawl --batch-time``), so intervals are what the schedule intended, not when a
  worker happened to reach the URL;
* a *download* is the network state ``OK`` (004 §4: "다운로드 실패는 네트워크 상태가
  'OK'가 아님을 의미한다"); a ``304 Not Modified`` to a conditional recrawl request is a
  download of the previous content (it proves the page did not change);
* seeds are the depth-0 URLs (Tables 8–10), documents every URL (Tables 11–13);
* the change interval is observed period / number of changes ("10일/5=2일"), in days;
* a visit carries the lastmod a sitemap or feed gave the page in its batch (``url_dates``),
  for how often lastmod agreed with the changes (``analysis/_lastmod.py``).

Probe batches of ``evaluate --fetch`` are no crawl batches and are left out, and so are the
sitemaps and feeds themselves (link kinds ``m`` and ``n``): URL sources, not documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dustless.analysis._changes import (
    ChangeGroup,
    ChangeSummary,
    Visit,
    domain_suffix,
    download_histogram,
    ff,
    group_changes,
    link_kind_class,
    ss,
    summarize_batches,
    summarize_changes,
)
from dustless.analysis._estimate import (
    PageFeatures,
    PredictionError,
    RatePredictor,
    estimate_rate,
    evaluate_rate_predictor,
    fit_rate_predictor,
    holdout_split,
)
from dustless.analysis._lastmod import LastmodAgreement, lastmod_agreement
from dustless.store import CrawlReader, history_rows, latest_lastmods

__all__ = [
    "BatchRow",
    "ChangeReport",
    "PageHistory",
    "PageRate",
    "change_report",
    "crawl_change_report",
    "read_histories",
]


@dataclass(frozen=True, slots=True)
class PageHistory:
    """One URL's visits, one per batch that requested it, in batch order."""

    url_id: int
    url: str
    host: str
    depth: int
    link_kind: str  # Table 13 class of its last extracted download ("000": none)
    visits: tuple[Visit, ...]
    # The network state and HTTP status of its latest fetch: what the URL is now (a
    # document, a redirect, a 404…), which a recrawl's budget planner needs.
    last_state: str = ""
    last_status: int | None = None
    # ``(batch, lastmod)`` of the latest lastmod a sitemap or feed gave it, in any batch
    # (a budgeted recrawl reads every sitemap, fetched pages or not).
    lastmod: tuple[int, float] | None = None

    @property
    def is_seed(self) -> bool:
        return self.depth == 0

    @property
    def features(self) -> PageFeatures:
        return PageFeatures(domain_suffix(self.host), self.depth, self.link_kind)


@dataclass(frozen=True, slots=True)
class BatchRow:
    """Seed 004 Table 7, with the batch's nominal time (seconds since the epoch)."""

    batch: int
    batch_time: float
    seeds_requested: int
    seeds_downloaded: int
    documents_requested: int
    documents_downloaded: int


@dataclass(frozen=True, slots=True)
class PageRate:
    """A page's change history and its estimated change rates, in changes per day.

    ``naive_rate`` is changes / observed period (the inverse of seed 004's change interval);
    ``poisson_rate`` is Cho & Garcia-Molina's bias-corrected estimate (TOIT 2003). Both are
    ``None`` with fewer than two downloads; ``predicted_rate`` is then the feature model's
    guess (seed 004 §5's future work), when one could be fitted.
    """

    url: str
    depth: int
    domain: str
    link_kind: str
    batches: int
    downloads: int
    changes: int
    observed_days: float
    change_interval_days: float | None
    naive_rate: float | None
    poisson_rate: float | None
    predicted_rate: float | None


@dataclass(frozen=True, slots=True)
class ChangeReport:
    """Everything ``dustless changes`` prints (its ``--json`` is this, key for key)."""

    directory: str
    batches: tuple[BatchRow, ...]  # Table 7
    seeds: int
    seeds_by_downloads: tuple[tuple[int, int], ...]  # Table 8: (n, |S(n)|), n = N … 0
    ss: float | None  # formula (1)
    ff: float | None  # formula (2)
    by_domain: tuple[ChangeGroup[str], ...]  # Table 9 (seeds, last label)
    by_domain_kr: tuple[ChangeGroup[str], ...]  # Table 10 (seeds, last two labels)
    documents: int
    documents_by_downloads: tuple[tuple[int, int, float], ...]  # Table 11: (n, count, share)
    documents_not_downloaded: int
    by_depth: tuple[ChangeGroup[int], ...]  # Table 12
    by_link_kind: tuple[ChangeGroup[str], ...]  # Table 13
    changed_pages: int
    change_interval_days: float | None  # mean over the changed documents
    pages: tuple[PageRate, ...]
    prediction: PredictionError | None  # the feature model on held-out pages
    lastmod: LastmodAgreement | None = None  # sitemap lastmod against the changes seen


def _hostname(host: str) -> str:
    """The name without a port: the crawl DB's ``host`` keeps ``name:port`` for other ports."""
    if host.startswith("["):
        return host[: host.find("]") + 1] or host
    name, sep, port = host.rpartition(":")
    return name if sep and port.isdigit() else host


def _is_download(state: str, status: int | None, sha1: str | None) -> bool:
    # 004 §4: a download is the state OK; a 304 to a validator re-confirms stored content.
    return (state == "OK" and sha1 is not None) or (status == 304 and sha1 is not None)


def read_histories(db: CrawlReader, batches: Sequence[int] | None = None) -> list[PageHistory]:
    """One :class:`PageHistory` per URL fetched in the crawl batches (all by default).

    A ``304`` recorded without a hash borrows the page's previous download's hash; one
    with no previous download counts as a failure (there is nothing it confirms).
    """
    numbers = tuple(db.crawl_batches()) if batches is None else tuple(batches)
    if not numbers:
        return []
    times = {b.number: b.batch_time for b in db.batches}
    rows = history_rows(db, numbers)
    # The latest reading per URL over the batches asked for (none before sitemaps were read).
    latest = {int(u): (int(b), float(v)) for u, b, v in latest_lastmods(db, numbers)}
    out: list[PageHistory] = []
    current: int | None = None
    head: tuple[str, str, int] = ("", "", 0)
    last_by_batch: dict[
        int, tuple[str, int | None, str | None, tuple[int, int, int] | None, float | None]
    ] = {}

    def flush() -> None:
        if current is None:
            return
        visits: list[Visit] = []
        prev: str | None = None
        kind = "000"
        for b in sorted(last_by_batch):
            state, status, sha1, links, declared = last_by_batch[b]
            if status == 304 and sha1 is None:
                sha1 = prev
            ok = _is_download(state, status, sha1)
            visits.append(Visit(b, times.get(b, 0.0), ok, sha1 if ok else None, declared))
            if ok:
                prev = sha1
                if state == "OK" and links is not None:
                    kind = link_kind_class(*links)
        last_state, last_status, *_ = last_by_batch[max(last_by_batch)]
        out.append(
            PageHistory(
                current,
                head[0],
                head[1],
                head[2],
                kind,
                tuple(visits),
                last_state,
                last_status,
                latest.get(current),
            )
        )

    for uid, url, host, depth, batch, state, status, sha1, lh, la, lf, revisit, lm in rows:
        if uid != current:
            flush()
            current, head, last_by_batch = uid, (url, _hostname(str(host)), int(depth)), {}
        last_by_batch[int(batch)] = (
            str(state),
            None if status is None else int(status),
            sha1,
            # A revisit (same payload as an earlier capture) has no links extracted
            # (ARCHITECTURE: "its links are not extracted again"): its counts say nothing.
            None if revisit else (int(lh or 0), int(la or 0), int(lf or 0)),
            None if lm is None else float(lm),
        )
    flush()
    return out


def _rate(page: PageHistory, summary: ChangeSummary, predicted: float | None) -> PageRate:
    return PageRate(
        url=page.url,
        depth=page.depth,
        domain=domain_suffix(page.host),
        link_kind=page.link_kind,
        batches=summary.batches,
        downloads=summary.downloads,
        changes=summary.changed_intervals,
        observed_days=summary.observed_days,
        change_interval_days=summary.change_interval_days,
        naive_rate=estimate_rate(summary, "naive"),
        poisson_rate=estimate_rate(summary, "poisson"),
        predicted_rate=predicted,
    )


def change_report(
    histories: Iterable[PageHistory],
    batch_times: Sequence[tuple[int, float]],
    *,
    directory: str = "",
    holdout: float = 0.2,
) -> ChangeReport:
    """The tables of seed 004 §4 and per-page rates from the pages' histories (pure).

    ``batch_times`` lists the crawl batches as ``(number, batch_time)``; N in SS and FF is
    their count. The feature model is fitted on pages with at least three downloads outside
    a CRC-32 held-out share (:func:`holdout_split`), evaluated on the held-out ones, and
    refitted on all of them to predict the pages with too little history.
    """
    pages = list(histories)
    n_batches = len(batch_times)
    summaries = [summarize_changes(p.visits) for p in pages]
    seeds = [(p, s) for p, s in zip(pages, summaries, strict=True) if p.is_seed]
    seed_summaries = [summarize_changes(p.visits, max(n_batches, len(p.visits))) for p, _ in seeds]

    batches = _batch_rows(pages, batch_times)

    # Table 8 and formulas (1)-(2): N is the number of batches, as in the paper.
    hist = download_histogram(seed_summaries)
    hist = {n: hist.get(n, 0) for n in range(max(n_batches, max(hist, default=0)), -1, -1)}
    can_ss = n_batches >= 2 and bool(seeds)
    seed_items = [(p, s) for (p, _), s in zip(seeds, seed_summaries, strict=True)]

    # Tables 11-13 over every document.
    doc_hist = download_histogram(summaries)
    downloaded = sum(c for n, c in doc_hist.items() if n >= 1)
    table11 = tuple(
        (n, c, c / downloaded if downloaded else 0.0) for n, c in sorted(doc_hist.items()) if n >= 1
    )

    rates, prediction = _page_rates(pages, summaries, holdout)
    changed = [s for s in summaries if s.changed]
    return ChangeReport(
        directory=directory,
        batches=batches,
        seeds=len(seeds),
        seeds_by_downloads=tuple(hist.items()),
        ss=ss(hist, n_batches) if can_ss else None,
        ff=ff(hist, n_batches) if can_ss else None,
        by_domain=group_changes(
            ((domain_suffix(p.host), s) for p, s in seed_items), observed="all-batches"
        ),
        by_domain_kr=group_changes(
            ((domain_suffix(p.host, 2), s) for p, s in seed_items), observed="all-batches"
        ),
        documents=len(pages),
        documents_by_downloads=table11,
        documents_not_downloaded=doc_hist.get(0, 0),
        by_depth=group_changes(
            ((p.depth, s) for p, s in zip(pages, summaries, strict=True)), observed="twice"
        ),
        by_link_kind=group_changes(
            ((p.link_kind, s) for p, s in zip(pages, summaries, strict=True)), observed="twice"
        ),
        changed_pages=len(changed),
        change_interval_days=(
            sum(s.observed_days / s.changed_intervals for s in changed) / len(changed)
            if changed
            else None
        ),
        pages=rates,
        prediction=prediction,
        lastmod=lastmod_agreement(p.visits for p in pages),
    )


def _batch_rows(
    pages: Sequence[PageHistory], batch_times: Sequence[tuple[int, float]]
) -> tuple[BatchRow, ...]:
    """Table 7: seeds and documents requested and downloaded, per batch."""
    table7 = {
        b.batch: b
        for b in summarize_batches((v.batch, p.is_seed, v.success) for p in pages for v in p.visits)
    }
    return tuple(
        BatchRow(
            number,
            time,
            *(
                (
                    t.seeds_requested,
                    t.seeds_downloaded,
                    t.documents_requested,
                    t.documents_downloaded,
                )
                if (t := table7.get(number)) is not None
                else (0, 0, 0, 0)
            ),
        )
        for number, time in sorted(batch_times)
    )


def _page_rates(
    pages: Sequence[PageHistory], summaries: Sequence[ChangeSummary], holdout: float
) -> tuple[tuple[PageRate, ...], PredictionError | None]:
    """Per-page rates; the feature model for pages with little history (004 §5), and how
    well it predicted the held-out pages."""
    training = [
        (p.url, p.features, r)
        for p, s in zip(pages, summaries, strict=True)
        if s.downloads >= 3 and (r := estimate_rate(s, "poisson")) is not None
    ]
    prediction: PredictionError | None = None
    predictor: RatePredictor | None = None
    if training:
        predictor = fit_rate_predictor((f, r) for _, f, r in training)
        train, held = holdout_split(training, lambda item: item[0], holdout)
        if train and held:
            fitted = fit_rate_predictor((f, r) for _, f, r in train)
            prediction = evaluate_rate_predictor(fitted, ((f, r) for _, f, r in held))
    rates = tuple(
        _rate(
            p,
            s,
            predictor.predict(p.features) if predictor is not None and s.downloads < 2 else None,
        )
        for p, s in zip(pages, summaries, strict=True)
    )
    return rates, prediction


def crawl_change_report(db: CrawlReader) -> ChangeReport:
    """:func:`change_report` over every crawl batch of an open crawl DB."""
    batch_times = [(b.number, b.batch_time) for b in db.batches if not b.probe]
    return change_report(read_histories(db), batch_times, directory=db.source)
