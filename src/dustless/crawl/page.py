"""What one fetched page means for the crawl: a typed outcome, computed without I/O.

The engine fetches, stores the response in the WARC file (``Recorder.response``), then asks
:func:`page_outcome` what follows: the fetch row to record, the links to admit (filtered,
normalized and split into inside/outside the party by ``Discovery``), the redirect to follow
and how, the labels a pattern script gives (seed 002 §3.4). The engine then applies it —
admission, the fetch row, the host's clock — so every decision about a page is here, in one
function that a test can call with values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dustless.crawl.conditional import Validator, kept_validators
from dustless.crawl.discover import Candidate, Discovery, link_counts
from dustless.crawl.record import Stored
from dustless.crawl.redirect import same_identity
from dustless.crawl.scripted import Label, ScriptedPages
from dustless.crawl.soft404 import Soft404Hosts
from dustless.extract import (
    content_fingerprint,
    declared_canonical,
    extract_links,
    fingerprint_text,
)
from dustless.fetch import FetchResult
from dustless.frontier import QueuedURL
from dustless.kinds import LinkKind
from dustless.states import NetState
from dustless.store import FetchRecord, URLLabel

__all__ = ["PageOutcome", "is_html", "page_outcome", "page_state"]

_HTML = frozenset({"text/html", "application/xhtml+xml"})


def is_html(mime: str | None) -> bool:
    return mime is None or mime in _HTML


def page_state(r: FetchResult, discovery: Discovery) -> NetState:
    """The state to record: the fetch's, or ``filtered`` for a type the filter refuses."""
    if r.status is not None and not discovery.filter.allows_mime(r.mime):
        return NetState.filtered
    return r.state


@dataclass(frozen=True, slots=True)
class PageOutcome:
    """Everything a fetched page changes, for the engine to apply."""

    fetch: FetchRecord
    links: list[Candidate]  # to admit (URL-seen and the limits decide in the DB)
    labels: dict[str, Label] | None  # pattern-script labels of the links, by URL
    own_label: URLLabel | None  # the page's own labels (seed 002 Fig. 13)
    same_document: Candidate | None  # a redirect to another spelling of this very URL


@dataclass(slots=True)
class _Read:
    """What was read from a page's body: its state (``pBig``/``pFlat`` may replace OK), its
    content identity, the links it names and what a pattern script made of them."""

    state: NetState
    fp: bytes | None = None
    main: str | None = None  # the main content's text, for the soft-404 judge
    counts: tuple[int, int, int] = (0, 0, 0)  # h-, a- and f-links (seed 004 Table 13)
    canonical: str | None = None  # RFC 6596: evidence for the learner (crawl/learn.py)
    found: list[tuple[str, LinkKind]] = field(default_factory=list)
    labels: dict[str, Label] | None = None
    own: URLLabel | None = None
    before: int | None = None
    after: int | None = None


def page_outcome(
    item: QueuedURL,
    r: FetchResult,
    state: NetState,
    stored: Stored,
    *,
    started: float,
    batch: int,
    discovery: Discovery,
    scripted: ScriptedPages | None,
    held: Validator | None = None,
    soft404: Soft404Hosts | None = None,
) -> PageOutcome:
    """The outcome of the fetch ``r`` of ``item``, whose response went to ``stored``."""
    status = r.status
    sha1, revisit_of = stored.sha1, stored.revisit_of
    # Content identity: the near-duplicate fingerprint of a new 2xx document's text (a
    # revisit's is its first capture's); none at all for a truncated or failed body.
    if state not in (NetState.OK, NetState.code):
        sha1 = None  # tooBig, dTim, dErr: no document, not the SHA-1 of what arrived
    document = state in (NetState.OK, NetState.code) and not stored.revisit
    document = document and status is not None and 200 <= status < 300
    if status == 304 and held is not None:
        # RFC 9110 §15.4.5: the copy we hold is current. Keep its hash, so the batch
        # records "unchanged" without a download (seed 004 §4 compares contents).
        sha1, revisit_of = held.sha1, held.fetch_id
    read = _read(item, r, state, stored, discovery, scripted, fingerprint=document)
    if soft404 is not None and _soft404(item, r, read, soft404, sha1, revisit=stored.revisit):
        # A soft 404 (crawl/soft404.py): its links are followed (the site's template), but
        # it is no document: no content identity for content-seen, duplicates, the learner.
        read.state, read.fp, read.canonical = NetState.soft404, None, None
    if status is not None and 200 <= status < 300 and read.state is not NetState.soft404:
        read.canonical = declared_canonical(r.headers, item.url, read.canonical)  # + Link
    party_site = discovery.site_of_host(item.host)
    links, same, error = _redirect(item, r, discovery, party_site)
    internal = external = 0
    if read.found:
        cands = discovery.links(
            read.found, depth=item.depth, seed_id=item.seed_id or None, party_site=party_site
        )
        internal, external = link_counts(cands)
        links += cands
    links_h, links_a, links_f = read.counts
    warc_ref, req_ref = stored.response, stored.request
    etag, last_modified = kept_validators(status, r.header("etag"), r.header("last-modified"), held)
    fetch = FetchRecord(
        url_id=item.url_id,
        fetched_at=started,
        state=read.state,
        status=status,
        mime=r.mime,
        size_raw=len(r.body),
        size_stored=(warc_ref.length if warc_ref else 0) + (req_ref.length if req_ref else 0),
        elapsed=r.elapsed,
        content_sha1=sha1,
        revisit_of=revisit_of,
        links_h=links_h,
        links_a=links_a,
        links_f=links_f,
        links_internal=internal,
        links_external=external,
        location=r.location,
        etag=etag,
        last_modified=last_modified,
        warc=warc_ref,
        warc_request=req_ref,
        error=error,
        batch=batch,
        links_before=read.before,
        links_after=read.after,
        content_fp=read.fp,
        canonical=read.canonical,
    )
    return PageOutcome(fetch, links, read.labels, read.own, same)


def _read(
    item: QueuedURL,
    r: FetchResult,
    state: NetState,
    stored: Stored,
    discovery: Discovery,
    scripted: ScriptedPages | None,
    *,
    fingerprint: bool,
) -> _Read:
    """Read the body: links, canonical and text of a new HTML page (one parse); the
    canonical alone of a revisit; the fingerprint of any other ``fingerprint`` document."""
    read = _Read(state)
    if state is NetState.OK and not stored.revisit and is_html(r.mime):
        # The whole Content-Type header: its charset decides the decoding.
        extraction = extract_links(
            r.body,
            item.url,
            r.header("content-type") or r.mime,
            with_text=fingerprint,
            anchor_text=scripted is not None,  # only pattern scripts read it (seed 002 §4.1)
        )
        if extraction.text is not None:
            # The text of the tree just parsed for the links: what content_fingerprint
            # would read from the body, without a second parse.
            read.fp = fingerprint_text(extraction.text)
            read.main = extraction.text
            fingerprint = False
        if extraction.over_budget:
            # A hostile page of more tags than extraction's budget (extract/_guard.py): it is
            # stored whole, its first part's links are followed, and the fetch says so.
            read.state = NetState.pBig
        elif extraction.flattened:
            # Markup that would cost the parser far more than its size (extract/_guard.py):
            # its links were read without its structure, and the fetch says so.
            read.state = NetState.pFlat
        read.counts = _letters(extraction.counts)
        read.canonical = extraction.canonical
        if scripted is None:
            read.found = [(link.url, link.kind) for link in extraction.links]
        else:  # seed 002 §3.4: filter, rewrite, javascript links, labels, priorities
            plan = scripted.page(item.url, item.url_id, extraction, discovery)
            read.found, read.labels, read.own = plan.found, plan.labels, plan.own
            read.before, read.after = plan.before, plan.after
    elif state is NetState.OK and stored.revisit and is_html(r.mime):
        # A payload repeating an earlier one byte for byte (a WARC revisit): its links are
        # not read again, but its canonical declaration is recorded as any page's is — the
        # same bytes at another URL may declare a relative canonical that resolves against
        # this one (RFC 6596 §3), and evaluation and --resume read ``fetches.canonical``.
        read.canonical = extract_links(
            r.body, item.url, r.header("content-type") or r.mime, anchor_text=False
        ).canonical
    if fingerprint:  # a 2xx document that was not parsed for links (text/plain, …)
        read.fp = content_fingerprint(r.body, r.mime, r.header("content-type"))
    return read


def _letters(counts: Mapping[LinkKind, int]) -> tuple[int, int, int]:
    """The h-, a- and f-link counts of an extraction's ``counts``. Read by iterating, which
    hashes no key: an enum's ``__hash__`` is Python code in 3.11 (~0.3 µs, measured)."""
    h = a = f = 0
    for kind, n in counts.items():
        if kind is LinkKind.OTHER:
            h = n
        elif kind is LinkKind.ANCHOR:
            a = n
        elif kind is LinkKind.FRAME:
            f = n
    return h, a, f


def _soft404(
    item: QueuedURL,
    r: FetchResult,
    read: _Read,
    soft404: Soft404Hosts,
    sha1: str | None,
    *,
    revisit: bool,
) -> bool:
    """Whether an OK 200 HTML page is its host's soft 404 (crawl/soft404.py judges)."""
    if read.state is not NetState.OK or r.status != 200 or not is_html(r.mime):
        return False
    return soft404.judge(
        item.host,
        r.body,
        fingerprint=read.fp,
        text=read.main,
        sha1=sha1,
        revisit=revisit,
        content_type=r.header("content-type"),
    )


def _redirect(
    item: QueuedURL, r: FetchResult, discovery: Discovery, party_site: str
) -> tuple[list[Candidate], Candidate | None, str | None]:
    """A redirect's target: the link to admit (or none), the same document under a derived
    identity (crawl/redirect.py), and the fetch's error (a same-identity chain too long)."""
    status = r.status
    if not (r.location and status is not None and 300 <= status < 400):
        return [], None, r.error
    verdict = same_identity(discovery, item, r.location)
    if verdict is None:
        links = discovery.links(
            [(r.location, LinkKind.REDIRECT)],
            depth=item.depth,
            seed_id=item.seed_id or None,
            party_site=party_site,
            redirect=True,
        )
        return links, None, r.error
    if verdict.candidate is None:
        return [], None, verdict.error  # a same-identity chain too long: recorded, not followed
    return [], verdict.candidate, r.error
