"""Soft 404s: a 200 page that says "not found" is no document (issue 25; pure).

A server that answers a missing URL with ``200`` and a "Page not found" page in its template
(Tomcat's default, many CMSs) makes every broken link look like a document: counted as a
resource, as a duplicate of every other broken link, as evidence that two spellings are one
page. Crawlers tell them apart the way Bar-Yossef et al. describe ("Sic transit gloria
telae", WWW 2004, §4: request a random, surely missing URL of the site and compare) and
Google's documentation names ("soft 404"): two signals, either enough.

* **The probe.** When a host's first HTML page answers 200, the crawler also requests one
  random path on it, under that page's first path segment (``/wiki/dustless-<16 hex>.html``,
  or ``/dustless-….html`` at the root). A 200 there is the host's soft-404 page: its
  main-content fingerprint (``extract._fingerprint``, the one content-seen keeps) is the
  host's *signature*. When that first probe was a 200, a 200 page under another first
  segment gets one more probe there (sections may be served by other software): at most
  :data:`MAX_PROBES` requests a host. A page whose fingerprint is near a signature (the
  near-duplicate threshold, ``NEAR_THRESHOLD``) is a soft 404.
* **Status-like text.** A page whose main content is short (at most :data:`SHORT_WORDS`
  words) and whose title, or main text, *is* a status line ("Page not found", "404 Not
  Found", "Error 404", "the page does not exist") is a soft 404 even without a probe. Being
  conservative matters more than catching all: a documentation page about HTTP that
  mentions "404" is long, and its title is no status line, so it stays a document.

``Soft404Hosts`` holds what a crawl learned per host (signatures, probes made); it does no
I/O: the engine makes the requests it asks for and hands back what they answered.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from dustless.extract import content_fingerprint, is_near
from dustless.url import origin_of, split_lenient

__all__ = [
    "MAX_PROBES",
    "SHORT_WORDS",
    "Soft404Hosts",
    "probe_url",
    "says_not_found",
    "section_of",
]

MAX_PROBES = 2  # requests a host at most: the first, and one under another section
# Main content of at most this many words: a status page is a heading and a sentence or two
# ("Sorry, the page you asked for is not here"); an article that mentions 404 is longer.
SHORT_WORDS = 60
_PROBE_PREFIX = "dustless-"
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
_HEAD_BYTES = 16 * 1024  # the <title> is in the head: never scan a whole page for it
# A title is cut at the separators sites put between the page's name and theirs
# ("Page not found | Example", "404 - Not Found").
_SEPARATORS = re.compile(r"\s[|\-–—:·»]\s|\s*[|–—·»]\s*")
# What a status line says, the whole of it (a title part, or a sentence of the text).
_STATUS = re.compile(
    r"""^(?:
        (?:error\s*)?404(?:\s*error)?(?:\s*(?:page\s*)?not\s*found)?
      | (?:http\s*)?(?:error\s*)?404\s*[-:]?\s*(?:page\s*|file\s*)?not\s*found
      | (?:the\s*)?(?:page|file|document|resource)\s*(?:was\s*|is\s*)?not\s*found
      | not\s*found
      | (?:the\s*)?(?:page|document)\s*(?:you(?:\s+\w+){1,3}\s*)?
        (?:does\s*not|doesn't|doesn’t|no\s*longer)\s*exists?
      | (?:the\s*)?(?:page|document)\s*(?:you(?:\s+\w+){1,3}\s*)?
        (?:could\s*not|cannot|can't|can’t)\s*be\s*found
      | no\s*such\s*page
      | oops\W*(?:that\s*)?page\s*(?:can't|can’t|cannot|could\s*not)\s*be\s*found
    )[.!]?$""",
    re.IGNORECASE | re.VERBOSE,
)
_SENTENCES = re.compile(r"[.!?\n]+\s*")


def section_of(url: str) -> str:
    """The first path segment of ``url`` (``""`` at the root): a probe's place."""
    path = split_lenient(url).path
    head, sep, _rest = path.lstrip("/").partition("/")
    return head if sep else ""


def probe_url(url: str, section: str, token: str) -> str:
    """The surely missing URL to ask ``url``'s host for, under ``section`` (``token``: 16
    random hex digits; the name says who asked, for a webmaster reading the logs)."""
    name = f"{_PROBE_PREFIX}{token}.html"
    path = f"/{section}/{name}" if section else f"/{name}"
    return origin_of(url) + path


def _title(body: bytes) -> str:
    m = _TITLE.search(body, 0, _HEAD_BYTES)
    if m is None:
        return ""
    raw = m.group(1)[:300].decode("utf-8", "replace")
    return " ".join(html.unescape(raw).split())


def says_not_found(body: bytes, text: str) -> bool:
    """Whether a page is a status page: its main ``text`` is short and its title, or one of
    the text's sentences, is a status line (module docstring)."""
    words = text.split()
    if not words or len(words) > SHORT_WORDS:
        return False
    title = _title(body)
    if any(_STATUS.match(part.strip()) for part in _SEPARATORS.split(title) if part.strip()):
        return True
    return any(_STATUS.match(s.strip()) for s in _SENTENCES.split(" ".join(words)) if s.strip())


@dataclass(slots=True)
class _Host:
    probes: int = 0  # requests asked for
    sections: set[str] = field(default_factory=set)  # first segments probed
    answered_200: bool = False  # the first probe found a soft-404 page
    signatures: list[bytes] = field(default_factory=list)


class Soft404Hosts:
    """What a crawl knows of each host's soft 404s (this process; a resumed crawl, or
    another worker taking the host over, probes it again)."""

    def __init__(self, *, probe: bool = True) -> None:
        self.probe = probe
        self._hosts: dict[str, _Host] = {}
        # Payload hashes of pages judged soft 404s: a later revisit of one (the same bytes,
        # not parsed again) is one too.
        self._sha1s: set[str] = set()
        self.probes = 0  # requests asked for, all hosts
        self.signatures = 0  # probes that answered a soft-404 page

    def wants_probe(self, host: str, url: str) -> str | None:
        """A host's page ``url`` answered 200 HTML: the section to probe now, or ``None``.

        The first such page of a host probes its section; a later one under another
        section probes that one too, but only once and only if the first probe found a
        soft-404 page (a host that answers 404 to it needs no more). Marked as asked."""
        if not self.probe:
            return None
        h = self._hosts.get(host)
        if h is None:
            h = self._hosts[host] = _Host()
        elif h.probes >= MAX_PROBES or not h.answered_200:
            return None
        section = section_of(url)
        if section in h.sections:
            return None
        h.sections.add(section)
        h.probes += 1
        self.probes += 1
        return section

    def probes_of(self, host: str) -> int:
        """Probes asked for ``host`` so far."""
        h = self._hosts.get(host)
        return 0 if h is None else h.probes

    def probed(self, host: str, fingerprint: bytes | None, *, first: bool) -> None:
        """A probe of ``host`` answered 200 HTML whose fingerprint is ``fingerprint``."""
        h = self._hosts.setdefault(host, _Host())
        if first:
            h.answered_200 = True
        if fingerprint is not None and fingerprint not in h.signatures:
            h.signatures.append(fingerprint)
            self.signatures += 1

    def judge(
        self,
        host: str,
        body: bytes,
        *,
        fingerprint: bytes | None,
        text: str | None,
        sha1: str | None,
        revisit: bool,
        content_type: str | None = None,
    ) -> bool:
        """Whether a 200 HTML page of ``host`` is a soft 404 (and remember it if so).

        ``text``/``fingerprint``: its main content's, when it was parsed (a new payload);
        a revisit (the bytes of an earlier capture) is judged as that capture was, or by
        fingerprint when its host has a signature."""
        if revisit:
            if sha1 is not None and sha1 in self._sha1s:
                return True
            h = self._hosts.get(host)
            if h is None or not h.signatures:
                return False
            fingerprint = content_fingerprint(body, "text/html", content_type)
            text = None
        soft = False
        h = self._hosts.get(host)
        if fingerprint is not None and h is not None:
            soft = any(is_near(fingerprint, s) for s in h.signatures)
        if not soft and text is not None:
            soft = says_not_found(body, text)
        if soft and sha1 is not None:
            self._sha1s.add(sha1)
        return soft
