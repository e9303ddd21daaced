"""What one fetched page means for the crawl: a typed outcome, computed without I/O.

The engine fetches, stores the response in the WARC file (``Recorder.response``), then asks
:func:`page_outcome` what follows: the fetch row to record, the links to admit (filtered,
normalized and split into inside/outside the party by ``Discovery``), the redirect to follow
and how, the labels a pattern script gives (seed 002 §3.4). The engine then applies it —
admission, the fetch row, the host's clock — so every decision about a page is here, in one
function that a test can call with values.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from dustless.kinds import DOCUMENT_KINDS, LinkKind
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
    warc_ref, req_ref = stored.response, stored.request
    sha1, revisit_of = stored.sha1, stored.revisit_of
    # Content identity: the near-duplicate fingerprint of a new 2xx document's text (a
    # revisit's is its first capture's); none at all for a truncated or failed body.
    to_fingerprint = False
    if state not in (NetState.OK, NetState.code):
        sha1 = None  # tooBig, dTim, dErr: no document, not the SHA-1 of what arrived
    elif not stored.revisit and status is not None and 200 <= status < 300:
        to_fingerprint = True
    fp = None
    if status == 304 and held is not None:
        # RFC 9110 §15.4.5: the copy we hold is current. Keep its hash, so the batch
        # records "unchanged" without a download (seed 004 §4 compares contents).
        sha1, revisit_of = held.sha1, held.fetch_id
    counts = dict.fromkeys(DOCUMENT_KINDS, 0)
    found: list[tuple[str, LinkKind]] = []
    labels: dict[str, Label] | None = None
    own: URLLabel | None = None
    before = after = None
    canonical: str | None = None  # RFC 6596: evidence for the learner (crawl/learn.py)
    main: str | None = None  # the main content's text, for the soft-404 judge
    if state is NetState.OK and not stored.revisit and is_html(r.mime):
        # The whole Content-Type header: its charset decides the decoding.
        extraction = extract_links(
            r.body,
            item.url,
            r.header("content-type") or r.mime,
            with_text=to_fingerprint,
            anchor_text=scripted is not None,  # only pattern scripts read it (seed 002 §4.1)
        )
        if extraction.text is not None:
            # The text of the tree just parsed for the links: what content_fingerprint
            # would read from the body, without a second parse.
            fp = fingerprint_text(extraction.text)
            main = extraction.text
            to_fingerprint = False
        if extraction.over_budget:
            # A hostile page of more tags than extraction's budget (extract/_guard.py): it is
            # stored whole, its first part's links are followed, and the fetch says so.
            state = NetState.pBig
        elif extraction.flattened:
            # Markup that would cost the parser far more than its size (extract/_guard.py):
            # its links were read without its structure, and the fetch says so.
            state = NetState.pFlat
        counts.update(extraction.counts)
        canonical = extraction.canonical
        if scripted is None:
            found = [(link.url, link.kind) for link in extraction.links]
        else:  # seed 002 §3.4: filter, rewrite, javascript links, labels, priorities
            plan = scripted.page(item.url, item.url_id, extraction, discovery)
            found, labels, own = plan.found, plan.labels, plan.own
            before, after = plan.before, plan.after
    elif state is NetState.OK and stored.revisit and is_html(r.mime):
        # A payload repeating an earlier one byte for byte (a WARC revisit): its links are
        # not read again, but its canonical declaration is recorded as any page's is — the
        # same bytes at another URL may declare a relative canonical that resolves against
        # this one (RFC 6596 §3), and evaluation and --resume read ``fetches.canonical``.
        canonical = extract_links(
            r.body, item.url, r.header("content-type") or r.mime, anchor_text=False
        ).canonical
    if to_fingerprint:  # a 2xx document that was not parsed for links (text/plain, …)
        fp = content_fingerprint(r.body, r.mime, r.header("content-type"))
    if (
        soft404 is not None
        and state is NetState.OK
        and status == 200
        and is_html(r.mime)
        and soft404.judge(
            item.host,
            r.body,
            fingerprint=fp,
            text=main,
            sha1=sha1,
            revisit=stored.revisit,
            content_type=r.header("content-type"),
        )
    ):
        # A soft 404 (crawl/soft404.py): its links are followed (the site's template), but
        # it is no document: no content identity for content-seen, duplicates, the learner.
        state, fp, canonical = NetState.soft404, None, None
    if status is not None and 200 <= status < 300 and state is not NetState.soft404:
        canonical = declared_canonical(r.headers, item.url, canonical)  # + the Link header
    error = r.error
    links: list[Candidate] = []
    same: Candidate | None = None
    party_site = discovery.site_of_host(item.host)
    seed_id = item.seed_id or None
    if r.location and status is not None and 300 <= status < 400:
        verdict = same_identity(discovery, item, r.location)
        if verdict is None:
            links += discovery.links(
                [(r.location, LinkKind.REDIRECT)],
                depth=item.depth,
                seed_id=seed_id,
                party_site=party_site,
                redirect=True,
            )
        elif verdict.candidate is None:
            error = verdict.error  # a same-identity chain too long: recorded, not followed
        else:  # the same document under a derived identity (crawl/redirect.py)
            same = verdict.candidate
    internal = external = 0
    if found:
        cands = discovery.links(found, depth=item.depth, seed_id=seed_id, party_site=party_site)
        internal, external = link_counts(cands)
        links += cands
    body = r.body
    etag, last_modified = kept_validators(status, r.header("etag"), r.header("last-modified"), held)
    fetch = FetchRecord(
        url_id=item.url_id,
        fetched_at=started,
        state=state,
        status=status,
        mime=r.mime,
        size_raw=len(body),
        size_stored=(warc_ref.length if warc_ref else 0) + (req_ref.length if req_ref else 0),
        elapsed=r.elapsed,
        content_sha1=sha1,
        revisit_of=revisit_of,
        links_h=counts[LinkKind.OTHER],
        links_a=counts[LinkKind.ANCHOR],
        links_f=counts[LinkKind.FRAME],
        links_internal=internal,
        links_external=external,
        location=r.location,
        etag=etag,
        last_modified=last_modified,
        warc=warc_ref,
        warc_request=req_ref,
        error=error,
        batch=batch,
        links_before=before,
        links_after=after,
        content_fp=fp,
        canonical=canonical,
    )
    return PageOutcome(fetch, links, labels, own, same)
