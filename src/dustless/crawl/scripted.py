"""Pattern scripts and learned rules in a crawl (seed 002 §3.3-§3.4, §4.1).

Two options feed it (``CrawlConfig.rules`` and ``CrawlConfig.scripts``, file paths kept in
the batch row so ``--resume`` and a recrawl load them again):

* ``--rules FILE`` (learned rules or scripts): the ``RuleSet`` joins the policy's
  ``site-rules`` step, so it only changes identities (what URL-seen merges).
* ``--script FILE.xml`` (seed 002 Fig. 6): the same, and on top the crawl effects of §3.4:
  on a scripted site only links a pattern names are followed (§3.4.1; Table 2's links
  before/after filtering are stored per fetch), each as its ``targetAddr``; ``javascript:``
  links in ``href``, ``onclick`` or script calls become URLs (Fig. 8); every URL gets its
  page type and category (§3.2, §4.1, Figs. 13-14), and a priority class (§3.4.2).

The rules package says "lower is sooner" (``Priority``); the frontier and the store serve
the *larger* class first, so the class stored is ``Priority.OTHER - priority``: detail
pages 3, list pages of the current category 2, other categories 1, everything else 0 (the
class of every URL of a crawl without scripts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from dustless.extract import Extraction
from dustless.kinds import LinkKind
from dustless.rules import (
    Match,
    PageType,
    Priority,
    RuleSet,
    is_pagination_label,
    load_script,
    page_category,
    priority,
)
from dustless.store import CrawlStore, URLLabel
from dustless.url import Policy, get_policy

__all__ = [
    "URGENT",
    "Label",
    "PagePlan",
    "ScriptedPages",
    "frontier_priority",
    "identity_policy",
    "load_rules",
    "urgent_hosts",
]

# Classes a page's new links must not wait behind: detail pages and list pages of the
# category being crawled (§3.4.2). The engine claims them at once, ahead of the host's window.
URGENT = 2


def frontier_priority(p: int) -> int:
    """The frontier's class (larger sooner) of a ``rules.priority`` value (lower sooner)."""
    return int(Priority.OTHER) - p


@dataclass(frozen=True, slots=True)
class Rules:
    """The rule sets of a crawl: all of them (identities), and the ``--script`` ones."""

    all: RuleSet | None
    scripts: RuleSet | None


def load_rules(rules: Sequence[str], scripts: Sequence[str]) -> Rules:
    """Load the files (``ScriptError`` with ``FILE:LINE:`` if one is broken)."""
    learned = [load_script(p).rules for p in rules]
    scripted = [load_script(p).rules for p in scripts]
    script_set = _join(scripted)
    return Rules(_join([*scripted, *learned]), script_set)


def _join(sets: Sequence[RuleSet]) -> RuleSet | None:
    if not sets:
        return None
    out = sets[0]
    for s in sets[1:]:
        out = out + s
    return out


def identity_policy(name: str, rules: RuleSet | None) -> Policy:
    """The crawl's policy, its ``site-rules`` step holding ``rules`` (``--rules``, ``--script``)."""
    policy = get_policy(name)
    if rules is None:
        return policy
    policy = policy.with_steps(enable=["site-rules"])
    return policy.with_options(site_rules=(*policy.options.site_rules, rules))


@dataclass(frozen=True, slots=True)
class Label:
    """What the script says about one link target: its class and its labels."""

    priority: int  # the frontier's class (larger sooner)
    page_type: str
    category: str | None
    category_id: str | None
    category_name: str | None

    def url_label(self, identity: str) -> URLLabel:
        return URLLabel(
            identity, self.page_type, self.category, self.category_id, self.category_name
        )


@dataclass(frozen=True, slots=True)
class PagePlan:
    """The links of one page to follow (``(url, kind)``, rewritten), their labels, and
    Table 2's counts (``None`` when the page is not on a scripted site)."""

    found: list[tuple[str, LinkKind]]
    labels: dict[str, Label]
    own: URLLabel | None  # the page's own labels (its category name read on the page)
    before: int | None
    after: int | None


class _Identity(Protocol):
    def identity(self, url: str) -> str: ...


class ScriptedPages:
    """Per-page link handling for ``--script`` (pure except one lookup of a stored name;
    the labels it decides are written by the engine)."""

    def __init__(self, rules: RuleSet, store: CrawlStore) -> None:
        self.rules = rules
        self.store = store

    def page(self, url: str, url_id: int, extraction: Extraction, key: _Identity) -> PagePlan:
        """The links of the page at ``url`` to follow, labelled; stores the page's own
        labels (its category name is read on the page itself, Fig. 13)."""
        rules = self.rules
        links = extraction.links
        scripted = rules.is_scripted(url)
        current = rules.match(url)
        cat = page_category(url, links, key=rules.apply) if current is not None else None
        paginated = frozenset(cat.same_category) if cat is not None else frozenset()
        name = cat.category if cat is not None else None
        if current is not None and name is None:
            name = self._stored_name(url_id)
        found: dict[str, LinkKind] = {}
        labels: dict[str, Label] = {}
        kept = 0
        for link in links:
            m = rules.match(link.url)
            if m is None:
                if scripted:
                    continue  # §3.4.1: a link no pattern names is not collected
                found.setdefault(link.url, link.kind)
                kept += 1
                continue
            kept += 1
            pag = link.url in paginated
            self._add(found, labels, m, current, name, link.kind, link.text, pag)
        # Fig. 8: javascript calls in href="javascript:…" and onclick become URLs; only the
        # page's own site script knows them. They are h-URLs (004 §4: found in scripts).
        for text in extraction.scripts:
            calls = rules.javascript_links(text, url)
            if calls:
                kept += 1
            for m in calls:
                self._add(found, labels, m, current, name, LinkKind.OTHER, "", False)
        own = None
        if current is not None:
            own = Label(
                0,
                current.page_type.value,
                current.category or None,
                current.category_id or None,
                name,
            ).url_label(key.identity(url))
        if not scripted:
            return PagePlan(list(found.items()), labels, own, None, None)
        before = len(links) + len(extraction.scripts)
        return PagePlan(list(found.items()), labels, own, before, kept)

    def _add(
        self,
        found: dict[str, LinkKind],
        labels: dict[str, Label],
        m: Match,
        current: Match | None,
        name: str | None,
        kind: LinkKind,
        text: str,
        paginated: bool,
    ) -> None:
        target = m.target
        found.setdefault(target, kind)
        cls = frontier_priority(priority(m, current, paginated=paginated))
        old = labels.get(target)
        if old is not None and old.priority >= cls:
            return
        inherit = paginated or m.page_type is PageType.DETAIL
        cat_id = m.category_id or (current.category_id if current and inherit else "")
        if inherit:
            cat_name = name  # §4.1: pagination (Fig. 14) and the page's details share it
        else:
            label = " ".join(text.split())
            # Fig. 13: a category link's anchor text names the category it leads to.
            cat_name = label if label and not is_pagination_label(label) else None
        labels[target] = Label(cls, m.page_type.value, m.category or None, cat_id or None, cat_name)

    def _stored_name(self, url_id: int) -> str | None:
        return self.store.category_names([url_id]).get(url_id)


def urgent_hosts(rows: Iterable[tuple[str, int]]) -> Mapping[str, int]:
    """Hosts with new URLs (``(host, frontier class)``) of an urgent class (§3.4.2) and how
    many: claim them now."""
    out: dict[str, int] = {}
    for host, cls in rows:
        if cls >= URGENT:
            out[host] = out.get(host, 0) + 1
    return out
