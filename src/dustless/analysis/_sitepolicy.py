"""The per-host recommendation as site rules: ``dustless evaluate --rules-out FILE``.

Seed 000 §4.1: lowercasing paths is right on a Windows server and wrong on a Unix one, and a
``www`` host is the same site on one server and another site on the next. ``evaluate``
recommends methods per host (:class:`~dustless.analysis._evaltypes.HostPolicy`); this module
writes them in the pattern-script / learned-rules format (docs/pattern-scripts.md), which
``dustless crawl --rules FILE`` adds to the policy's ``site-rules`` step:

* a ``www`` method becomes a ``<hostRedirect>`` from the ``www.`` twin to the bare host (or
  the other way round for ``add``): written only where the twin served the same documents;
* ``add`` trailing slash becomes ``<addSlash/>``; every other unsafe step a
  ``<normalize step="…"/>`` that runs that one normalizer step on the host's URLs;
* ``remove-fragment`` is already in the ``standard`` policy, and ``uppercase-path`` is for
  measurement only: neither is written;
* a variant factor's method (issue 25) becomes the rules the crawl showed it apply on the
  host (:class:`~dustless.analysis._evaltypes.VariantRule`): ``<dropParam>`` for each
  printer/mobile/AMP or irrelevant parameter, ``<stripPrefix prefix="/print/"/>`` for a
  variant path prefix, ``<queryToPath path="/index.php" param="page" to="/{x}"/>`` for a
  query form,
  and ``<hostRedirect>`` from ``m.HOST`` (…) to ``HOST``.

Each rule carries its evidence: ``support`` = duplicate downloads it removed on the host,
``fp_rate`` = the coverage loss it had there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dustless.analysis._evaltypes import Evaluation, RowDetail, VariantRule
from dustless.analysis._recommend import FACTOR_METHODS
from dustless.analysis._variants import CrawlEvidence, rules_of_merge
from dustless.errors import InvalidOption
from dustless.url import authority_of

if TYPE_CHECKING:
    from dustless.rules import LearnedRule, RuleSet

__all__ = ["site_policy_rules", "variant_rules", "write_site_policy"]


def variant_rules(
    urls: Iterable[str],
    methods: Mapping[str, Callable[[str], str]],
    evidence: CrawlEvidence,
) -> tuple[VariantRule, ...]:
    """The rules each variant factor's method (``methods``: factor → method) stands for on
    each host: what it does to the crawl's own URLs, one rule per distinct change."""
    out: dict[VariantRule, None] = {}
    for url in urls:
        for factor, method in methods.items():
            form = method(url)
            if form == url:
                continue
            host = authority_of(form)
            for element, identity, name, to in rules_of_merge(factor, url, form, evidence):
                out[VariantRule(host, factor, element, identity, name, to)] = None
    return tuple(sorted(out, key=lambda r: (r.host, r.factor, r.identity, r.name, r.to)))


def _rule(r: VariantRule, sup: int | None, fp: float) -> LearnedRule:
    from dustless.rules import DropParam, HostRedirect, QueryToPath, StripPrefix

    if r.element == "dropParam":
        return DropParam(r.name, support=sup, fp_rate=fp)
    if r.element == "stripPrefix":
        return StripPrefix(r.name, support=sup, fp_rate=fp)
    if r.element == "queryToPath":
        path, _, param = r.name.partition("?")
        return QueryToPath(path, param, r.to, support=sup, fp_rate=fp)
    return HostRedirect(r.to, support=sup, fp_rate=fp)


_NOT_WRITTEN = frozenset({"remove-fragment", "uppercase-path"})


def site_policy_rules(ev: Evaluation) -> RuleSet:
    """A ``dustless.rules.RuleSet`` for the hosts whose policy merges anything."""
    from dustless.rules import AddSlash, HostRedirect, NormalizeStep, SiteScript
    from dustless.url import hostname_of

    loss = {
        (r.host, r.factor, r.method): r.coverage_loss_rate
        for r in ev.host_rows
        if r.host is not None
    }
    removed: dict[tuple[str | None, str, str], RowDetail] = {
        (d.host, d.factor, d.method): d for d in ev.host_details
    }
    by_identity: dict[str, list[LearnedRule]] = {}
    variants: dict[tuple[str, str], list[VariantRule]] = {}
    for r in ev.variant_rules:
        variants.setdefault((r.host, r.factor), []).append(r)
    docs = ",".join(ev.default_documents)
    for policy in ev.site_policy:
        host = policy.host
        for factor, method in policy.choices:
            key = (host, factor, method)
            d = removed.get(key)
            sup = None if d is None else d.duplicates_removed
            fp = loss.get(key, 0.0)
            for r in variants.get((host, factor), ()):
                by_identity.setdefault(r.identity, []).append(_rule(r, sup, fp))
            for step in sorted(FACTOR_METHODS.get(factor, {}).get(method, frozenset())):
                if step in _NOT_WRITTEN:
                    continue
                if step == "remove-www":
                    # The sets of the www factor are keyed by the bare host.
                    # host is host[:port]: the identity keeps the port (that site only),
                    # the redirect names a host (the URL's port stays).
                    by_identity.setdefault("www." + host, []).append(
                        HostRedirect(hostname_of(host), support=sup, fp_rate=fp)
                    )
                elif step == "add-www":
                    by_identity.setdefault(host, []).append(
                        HostRedirect("www." + hostname_of(host), support=sup, fp_rate=fp)
                    )
                elif step == "add-trailing-slash":
                    by_identity.setdefault(host, []).append(AddSlash(None, support=sup, fp_rate=fp))
                else:
                    documents = docs if step == "remove-default-document" else None
                    by_identity.setdefault(host, []).append(
                        NormalizeStep(step, documents, support=sup, fp_rate=fp)
                    )
    sites = tuple(
        SiteScript(f"site policy: {host}", (host,), rules=tuple(rules))
        for host, rules in sorted(by_identity.items())
    )
    from dustless.rules import RuleSet

    return RuleSet(sites)


def write_site_policy(ev: Evaluation, path: str | Path) -> int:
    """Write the site policy to ``path`` (atomically); how many hosts got rules."""
    from dustless.rules import dump_script

    rules = site_policy_rules(ev)
    text = dump_script(rules)
    out = Path(path)
    tmp = out.with_name(out.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        raise InvalidOption(f"cannot write {out}: {exc.strerror or exc}") from None
    return len(rules.sites)
