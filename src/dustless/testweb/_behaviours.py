"""The personalities of the ``real`` test web's sites, drawn at random from a seed (pure).

Each site gets one of the real-world *stories* the issue met (a Tomcat host, a PHP CMS, a
mobile twin, a ``www`` twin with one differing subtree, an autoindex host, irrelevant
parameters), rotated so that six sites show every story, and on top of it a random mix of the
other behaviours, each with its own parameters (which names, which section, which mode).
``random.Random`` is seeded per site from the web's seed and the site's number, so one site's
draws never shift another's; the same seed gives the same plans, byte for byte.

Every field of :class:`SitePlan` is what ``/__testweb/info`` shows as the site's
``behaviours``, and what the truth follows: docs/testweb.md has the table.
"""

from __future__ import annotations

import dataclasses
import random
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass

from dustless.testweb._core import WORDS, stable_hash
from dustless.testweb._corpus import Corpus, Document

__all__ = ["STORIES", "SitePlan", "draw_plans", "section_of"]

#: the real-world stories of the issue, one per site in rotation
STORIES = ("tomcat", "php-cms", "mobile", "www-twin", "autoindex", "noise-params")

_TRACKING = ("utm_source", "utm_medium", "utm_campaign", "PHPSESSID", "sid", "fbclid", "gclid")
_NOISE = ("a", "b", "x", "from", "src", "tab", "ref", "pos")
_PRINT_PARAMS = ("print=1", "format=print", "view=print", "output=print")
_MOBILE_PARAMS = ("mobile=1", "m=1", "device=mobile")
_AMP_PARAMS = ("amp=1", "outputType=amp")
_SORT = ("sort", "order", "orderby")
_VIEW = ("view", "display", "layout")
#: how a section declares canonical URLs: the page's own primary URL, none, or the home page
CANONICAL_MODES = ("correct", "missing", "wrong")
TWIN_SUBTREE = 12
#: first path segments a site uses itself: never a section's name
_RESERVED = (
    "index",
    "files",
    "events",
    "doc",
    "print",
    "amp",
    "search",
    "static",
)  # pages of the www twin's subtree that differ from the main host's


@dataclass(frozen=True, slots=True)
class SitePlan:
    """Everything drawn for one site; the site (``_realsites.py``) follows it exactly."""

    number: int
    name: str  # resource-id prefix and host label: "real3"
    story: str
    package: str
    docs: tuple[str, ...]  # document ids served, in crawl-graph order
    sections: tuple[tuple[str, tuple[str, ...]], ...]  # (name, document ids), name order
    skin: int
    #: Tomcat: ``;jsessionid=HEX`` on every relative link (one id per page it is on)
    jsessionid: bool = False
    #: PHP CMS: ``/index.php?page=SECTION/SLUG`` is also each document (links use both)
    php_form: bool = False
    tracking: tuple[str, ...] = ()  # parameters that never matter, on some links
    noise: tuple[str, ...] = ()  # two irrelevant parameters, in either order, on some links
    print_mode: str = ""  # "", "param", "path" (/print/…), "host" (print.HOST)
    print_param: str = "print=1"
    mobile_mode: str = ""  # "", "host" (m.HOST), "param"
    mobile_param: str = "mobile=1"
    #: the section whose mobile pages declare the home page canonical ("" none)
    mobile_wrong_section: str = ""
    amp_mode: str = ""  # "", "path" (/amp/…), "param"
    amp_param: str = "amp=1"
    #: section indexes take ``?SORT=…&VIEW=…``: the same list in another order or layout
    sort_view: tuple[str, str] | None = None
    www: str = "none"  # "none", "alias", "redirect"
    twin_section: str = ""  # with www alias: the section whose first pages differ on www
    soft404: bool = False
    calendar: bool = False
    facets: bool = False
    canonical: tuple[tuple[str, str], ...] = ()  # (section, mode) for every section
    canonical_where: str = "html"  # "html" (<link rel=canonical>) or "header" (Link:)
    dynamic: bool = False  # per-request noise: a clock, a nonce, a rotating notice
    autoindex: bool = False  # files.HOST: mod_autoindex listings and the raw pages
    moved: bool = False  # /doc/SLUG.html answers 301 to the page's section URL

    @property
    def host(self) -> str:
        return f"{self.name}.test"

    def canonical_of(self, section: str) -> str:
        return dict(self.canonical).get(section, "missing")

    def info(self) -> dict[str, object]:
        """The drawn behaviours, as ``/__testweb/info`` shows them."""
        out: dict[str, object] = {}
        for f in dataclasses.fields(self):
            if f.name in ("docs", "sections", "number", "name"):
                continue
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        for mode, param in (("print_mode", "print_param"), ("mobile_mode", "mobile_param"),
                            ("amp_mode", "amp_param")):  # fmt: skip
            if not out[mode]:
                del out[param]
        if not self.mobile_mode:
            del out["mobile_wrong_section"]
        out["canonical"] = dict(self.canonical)
        out["documents"] = len(self.docs)
        out["sections"] = {name: len(docs) for name, docs in self.sections}
        return out


def _subset(docs: tuple[Document, ...], size: int, rng: random.Random) -> list[str]:
    """``size`` documents reached from a random start along the package's own links
    (breadth-first), topped up with random ones: a site whose pages link to each other."""
    by_id = {d.id: d for d in docs}
    order = [d.id for d in docs]
    start = rng.choice(order)
    seen = {start}
    queue = deque([start])
    out: list[str] = []
    while queue and len(out) < size:
        doc = queue.popleft()
        out.append(doc)
        for target in by_id[doc].links():
            if target not in seen:
                seen.add(target)
                queue.append(target)
    rest = [d for d in order if d not in seen]
    rng.shuffle(rest)
    out += rest[: size - len(out)]
    return out


def _slug_key(doc_id: str) -> str:
    return doc_id.split("/", 1)[1]


def _sections(docs: list[str], rng: random.Random) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Contiguous runs of the documents in name order (related pages share a prefix)."""
    ordered = sorted(docs, key=_slug_key)
    count = max(1, min(rng.randint(4, 8), len(ordered) // 6))
    names = sorted(rng.sample([w for w in WORDS if w not in _RESERVED], count))
    size = -(-len(ordered) // count)
    return tuple(
        (name, tuple(ordered[k * size : (k + 1) * size]))
        for k, name in enumerate(names)
        if ordered[k * size : (k + 1) * size]
    )


def section_of(plan: SitePlan, doc_id: str) -> str:
    """The section a document belongs to, or would if the site had it (dead links)."""
    firsts = [_slug_key(docs[0]) for _, docs in plan.sections]
    k = max(0, bisect_right(firsts, _slug_key(doc_id)) - 1)
    return plan.sections[k][0]


def _draw(number: int, seed: int, corpus: Corpus, pages: int) -> SitePlan:
    rng = random.Random(stable_hash(seed, "real", number))
    story = STORIES[(number - 1 + seed) % len(STORIES)]
    packages = sorted(corpus.packages)
    # the biggest package for the stories that need many pages, any for the others
    package = max(packages, key=lambda p: len(corpus.packages[p])) if pages > 250 else None
    package = package or rng.choice(packages)
    docs = _subset(corpus.packages[package], pages, rng)
    sections = _sections(docs, rng)
    names = [s for s, _ in sections]

    def extra(p: float = 0.35) -> bool:  # one draw per behaviour, always in this order
        return rng.random() < p

    plan = SitePlan(
        number=number,
        name=f"real{number}",
        story=story,
        package=package,
        docs=tuple(docs),
        sections=sections,
        skin=rng.randrange(4),
    )
    changes: dict[str, object] = {}
    if story == "tomcat" or extra(0.2):
        changes["jsessionid"] = True
    if story == "tomcat" or extra():
        changes["soft404"] = True
    if story == "php-cms" or extra(0.25):
        changes["php_form"] = True
    tracking = rng.sample(_TRACKING, rng.randint(1, 3)) if extra(0.5) else []
    if story == "php-cms":
        tracking = ["utm_source", "utm_medium", "PHPSESSID", *tracking]
    changes["tracking"] = tuple(dict.fromkeys(tracking))
    if story == "noise-params" or extra(0.25):
        changes["noise"] = tuple(rng.sample(_NOISE, 2))
    if story == "php-cms":
        changes["print_mode"], changes["print_param"] = "param", "print=1"
    elif extra(0.5):
        changes["print_mode"] = rng.choice(("param", "path", "host"))
        changes["print_param"] = rng.choice(_PRINT_PARAMS)
    if story == "mobile" or extra(0.3):
        changes["mobile_mode"] = "host" if story == "mobile" else rng.choice(("host", "param"))
        changes["mobile_param"] = rng.choice(_MOBILE_PARAMS)
        changes["mobile_wrong_section"] = rng.choice(names)
    if extra(0.3):
        changes["amp_mode"] = rng.choice(("path", "param"))
        changes["amp_param"] = rng.choice(_AMP_PARAMS)
    if extra(0.4):
        changes["sort_view"] = (rng.choice(_SORT), rng.choice(_VIEW))
    if story == "www-twin":
        changes["www"] = "alias"
    else:
        changes["www"] = rng.choice(("none", "none", "alias", "redirect"))
    if changes["www"] == "alias":
        big = [s for s, d in sections if len(d) >= TWIN_SUBTREE] or names
        changes["twin_section"] = rng.choice(big)
    changes["calendar"] = extra(0.3)
    changes["facets"] = extra(0.3)
    if story == "php-cms":
        modes = {s: "correct" for s in names}
    elif story == "mobile":
        modes = {s: ("correct" if extra(0.8) else "missing") for s in names}
    else:
        modes = {s: rng.choice(CANONICAL_MODES) for s in names} if extra(0.6) else {}
    changes["canonical"] = tuple(sorted(modes.items()))
    changes["canonical_where"] = "header" if extra(0.3) else "html"
    changes["dynamic"] = extra(0.3)
    changes["autoindex"] = story == "autoindex" or extra(0.15)
    changes["moved"] = extra(0.3)
    return dataclasses.replace(plan, **changes)  # type: ignore[arg-type]


def draw_plans(seed: int, sites: int, pages: int, corpus: Corpus) -> list[SitePlan]:
    """The plans of ``sites`` sites of about ``pages`` documents each."""
    if not corpus.packages:
        return []
    return [_draw(n, seed, corpus, max(6, pages)) for n in range(1, sites + 1)]
