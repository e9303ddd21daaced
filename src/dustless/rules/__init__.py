"""Pattern scripts and learned rules: which links to follow, and which URLs are the same.

Seed 002 (Chang & Jung 2007) describes per-site XML *URL pattern scripts* (§3.3, Fig. 6):
the URL (or javascript call, Fig. 8) of each kind of page, with ``{0}``…``{n}``
placeholders, and the URL to fetch instead. A crawl follows only the links a site's script
names (§3.4.1, Table 2), merges URLs that differ in parameters the script does not keep
(Fig. 3), and fetches detail pages before list pages (§3.4.2). The same file format also
carries rules learned from a crawl (seed 001's URL-list rules, DustBuster; redirects): see
``docs/pattern-scripts.md``. Everything here is pure except ``load_script``, which reads a
file; a crawl's fetches reach ``learn_rules`` (DustBuster) through
``dustless.analysis.read_observations``.

``SiteScript`` and ``RuleSet`` are site rules for the normalizer's ``site-rules`` step:
``apply(url) -> str``, the identity when nothing applies, idempotent, never raising.
"""

from ._learn import Finding, LearnOptions, LearnResult, evaluate_rules, learn_rules
from ._learn_evidence import Evidence, Observation
from ._learn_hosts import directory_of, in_part, spot_of
from ._learn_live import (
    LiveChanges,
    LiveLearner,
    LiveOptions,
    LiveRule,
    PageFacts,
    Retraction,
    site_of_authority,
)
from ._learn_live_rules import LiveEvidence, LiveRules, rule_from_spec, rule_spec
from ._learned import (
    AddSlash,
    DropParam,
    FixParam,
    HostRedirect,
    LearnedRule,
    NormalizeStep,
    QueryToPath,
    StripPrefix,
    Substitute,
)
from ._load import LoadedScript, load_script, parse_script
from ._patterns import AddrType, Match, PageType, UrlPattern
from ._priority import (
    Anchor,
    PageCategory,
    Priority,
    SupportsAnchor,
    is_pagination_label,
    page_category,
    priority,
    same_category,
)
from ._render import render
from ._site import FilterResult, KeptLink, RuleSet, SiteScript, SupportsURL
from ._write import dump_script
from ._xml import ScriptWarning

__all__ = [
    "AddSlash",
    "AddrType",
    "Anchor",
    "DropParam",
    "Evidence",
    "FilterResult",
    "Finding",
    "FixParam",
    "HostRedirect",
    "KeptLink",
    "LearnOptions",
    "LearnResult",
    "LearnedRule",
    "LiveChanges",
    "LiveEvidence",
    "LiveLearner",
    "LiveOptions",
    "LiveRule",
    "LiveRules",
    "LoadedScript",
    "Match",
    "NormalizeStep",
    "Observation",
    "PageCategory",
    "PageFacts",
    "PageType",
    "Priority",
    "QueryToPath",
    "Retraction",
    "RuleSet",
    "ScriptWarning",
    "SiteScript",
    "StripPrefix",
    "Substitute",
    "SupportsAnchor",
    "SupportsURL",
    "UrlPattern",
    "directory_of",
    "dump_script",
    "evaluate_rules",
    "in_part",
    "is_pagination_label",
    "learn_rules",
    "load_script",
    "page_category",
    "parse_script",
    "priority",
    "render",
    "rule_from_spec",
    "rule_spec",
    "same_category",
    "site_of_authority",
    "spot_of",
]
